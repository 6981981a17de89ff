import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../core/memory/db';
import { importPaths } from '../../../core/memory/importer';
import { exportEnvironments } from '../../../core/memory/exporter';
import { RunStore } from '../../../core/runs/runStore';
import { selectIds } from '../../../core/memory/repository';
import { EXPORT_LAYOUT, EXPORT_ROUND_TRIP } from '../../../renderer/src/features/editor/exportLayout';
import { tempDir } from '../../helpers/tmp';
import { gameSource, write } from './fixtures';

const tmp = tempDir('spade-export-docs-');
afterAll(() => tmp.cleanup());

describe('what an export writes is what the export page and the README say', () => {
  it('names every top-level file and folder written, env_memory.json included, and the same round trip', async () => {
    const db = openDatabase(join(tmp.dir, 'a.sqlite'));
    try {
      await importPaths(db, [join(process.cwd(), 'resources', 'seed-pack')]);
      const src = join(tmp.dir, 'src');
      write(src, 'spade_games_rejected/reject_00005_002_optimization_env_validator.py', gameSource(7, 'TooEasyEnv'));
      write(src, 'spade_games_rejected/reject_00005_002_optimization_env_validator.reason.txt', 'Too easy.');
      // Matched by its code: this folder holds no game of that name (a name repeats in every SPADE run).
      const code = readFileSync(join(process.cwd(), 'resources', 'seed-pack', 'games', 'game_00000_001_pattern_recognition.py'), 'utf8');
      write(src, 'env_memory.json', JSON.stringify([{ game_file: 'game_00000_001_pattern_recognition.py', skill: 'Pattern Recognition', code_snippet: code.slice(0, 2000), actor_win_rate: 0.5, regret: 0.2, rollout_id: 0, metadata: {} }]));
      await importPaths(db, [src]);
      const out = join(tmp.dir, 'out');
      const r = exportEnvironments(db, selectIds(db, {}), { format: 'spade', outDir: out }, new RunStore(db));
      const top = [...new Set(r.files.map((f) => (f.includes('/') ? `${f.split('/')[0]}/` : f)))].sort();
      expect(top).toEqual(['checksums.sha256', 'env_memory.json', 'games/', 'manifest.jsonl', 'spade_games_rejected/', 'tool_use/']);

      expect(EXPORT_LAYOUT.map((f) => f.path).sort()).toEqual(top);
      const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
      const cliLine = readme.split('\n').find((l) => l.startsWith('npx spade-workbench export '))!;
      const section = readme.slice(readme.indexOf('`export` (and the app'), readme.indexOf('Every command takes `--data-dir DIR`'));
      for (const name of top) {
        expect(cliLine, `README's export line names ${name}`).toContain(name);
        expect(section, `README's export paragraph names ${name}`).toContain(`\`${name}`);
      }
      expect(EXPORT_ROUND_TRIP).toContain('0 new, 0 updated');
      expect(section).toContain('0 new, 0 updated');
    } finally {
      db.close();
    }
  });
});
