import { describe, expect, it } from 'vitest';
import { suitesFor } from '../../bench/select';

const suites = [{ prefix: 'audit' }, { prefix: 'audit.scale_ratio' }, { prefix: 'cli' }, { prefix: 'model' }];
const names = (p: string) => suitesFor(suites, p).map((s) => s.prefix);

describe('bench --only', () => {
  it('runs every suite under a prefix, and for one row only the suite that owns it', () => {
    expect(names('audit')).toEqual(['audit', 'audit.scale_ratio']);
    expect(names('audit.scale_ratio')).toEqual(['audit.scale_ratio']);
    expect(names('audit.envs_per_s')).toEqual(['audit']);
    expect(names('cli.play_ratio')).toEqual(['cli']);
    expect(names('model')).toEqual(['model']);
    expect(names('nothing')).toEqual([]);
  });
});
