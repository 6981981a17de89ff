import { describe, expect, it } from 'vitest';
import { rowShown, suitesFor } from '../../bench/select';

const walls = { prefix: 'audit.walls_ratio', owns: ['audit.isolation_ratio'] };
const suites = [{ prefix: 'audit' }, { prefix: 'audit.scale_ratio' }, walls, { prefix: 'cli' }, { prefix: 'model' }];
const names = (p: string) => suitesFor(suites, p).map((s) => s.prefix);

describe('bench --only', () => {
  it('runs every suite under a prefix, and for one row only the suite that owns it', () => {
    expect(names('audit')).toEqual(['audit', 'audit.scale_ratio', 'audit.walls_ratio']);
    expect(names('audit.scale_ratio')).toEqual(['audit.scale_ratio']);
    expect(names('audit.envs_per_s')).toEqual(['audit']);
    expect(names('cli.play_ratio')).toEqual(['cli']);
    expect(names('model')).toEqual(['model']);
    expect(names('nothing')).toEqual([]);
  });

  it('runs the suite that keeps a replaced row for the record, not the suite whose prefix it falls under', () => {
    expect(names('audit.isolation_ratio')).toEqual(['audit.walls_ratio']);
    expect(names('audit.walls_ratio')).toEqual(['audit.walls_ratio']);
  });

  it('prints the row kept for the record beside the one that replaced it, and nothing else asked for no row', () => {
    expect(rowShown(walls, 'audit.isolation_ratio', ['audit.walls_ratio'])).toBe(true);
    expect(rowShown(walls, 'audit.isolation_ratio', ['audit'])).toBe(true);
    expect(rowShown(walls, 'audit.isolation_ratio', [])).toBe(true);
    expect(rowShown(walls, 'audit.walls_ratio', ['audit.isolation_ratio'])).toBe(false);
    expect(rowShown({ prefix: 'audit' }, 'audit.speedup', ['audit.envs_per_s'])).toBe(false);
    expect(rowShown({ prefix: 'cli' }, 'cli.play_ratio', ['audit.walls_ratio'])).toBe(false);
  });
});
