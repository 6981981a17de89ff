import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSpec } from '../../../core/jobs/launch';
import { JobService } from '../../../core/jobs/service';
import { RunStore } from '../../../core/runs/runStore';
import { EventBus } from '../../../core/server/events';
import { tempDir } from '../../helpers/tmp';
import { waitState } from './helpers';
import { openDatabase } from '../../../core/memory/db';

// A log made of SPADE's and Slime's print statements (tests/fixtures/spade-logs/README.md) printed by
// a real local job, read by the app's job manager, and the same file read by the CLI as a user runs it.
const FIX = join(process.cwd(), 'tests', 'fixtures', 'spade-logs');
const bin = join(process.cwd(), 'bin', 'spade-workbench.mjs');
const cli = (args: string[], input?: string) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 60_000, ...(input !== undefined ? { input } : {}) });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("a run's metrics as SPADE and Slime print them", () => {
  for (const file of ['slime-run.log', 'tinker-metrics.jsonl', 'tinker-cookbook-metrics.jsonl']) {
    it(`gives the same series, axes and games in the app and in jobs metrics --log (${file})`, async () => {
      const tmp = tempDir('spade-jobs-metrics-');
      const db = openDatabase(join(tmp.dir, 'workbench.sqlite'));
      const errors: string[] = [];
      const service = new JobService({ db, dataDir: tmp.dir, events: new EventBus(), importer: null, runs: new RunStore(db), log: (_l, m) => errors.push(m) });
      const manager = service.manager;
      cleanups.push(async () => {
        await service.close();
        db.close();
        tmp.cleanup();
      });
      const job = await manager.submit(buildSpec({ name: file, backend: 'local', command: ['cat', join(FIX, file)], workdir: join(tmp.dir, 'work'), poolDir: null }));
      const done = await waitState(manager, job.id, ['succeeded', 'failed', 'lost']);
      expect(done.state, done.detail).toBe('succeeded');

      // What the job view gets (jobs.metrics): series with their axis, and the [REGRET] games.
      const app = service.metrics(job.id);
      const fromApp = {
        series: Object.fromEntries(app.series.map((s) => [s.key, s.steps.map((x, i) => [x, s.values[i]])])),
        axis: Object.fromEntries(app.series.map((s) => [s.key, s.axis])),
        games: app.games.map((g) => ({ game: g.game, r_hint: g.rHint, r_no_hint: g.rNoHint, regret: g.regret })),
      };

      const byFile = cli(['jobs', 'metrics', '--log', join(FIX, file), '--json']);
      expect(byFile.status, byFile.stderr).toBe(0);
      const saved = JSON.parse(byFile.stdout) as typeof fromApp;
      const byStdin = cli(['jobs', 'metrics', '--log', '-', '--json'], readFileSync(join(FIX, file), 'utf8'));
      expect(JSON.parse(byStdin.stdout)).toEqual(saved);
      db.pragma('wal_checkpoint(TRUNCATE)');
      const byId = cli(['jobs', 'metrics', job.id, '--json', '--data-dir', tmp.dir]);
      expect(byId.status, byId.stderr).toBe(0);
      expect(JSON.parse(byId.stdout)).toEqual(saved);
      // The job's log as the workbench mirrored it, and the job in the list.
      const logs = cli(['jobs', 'logs', job.id, '--data-dir', tmp.dir]);
      expect(logs.status, logs.stderr).toBe(0);
      expect(logs.stdout).toBe(readFileSync(join(FIX, file), 'utf8'));
      const listed = JSON.parse(cli(['jobs', 'list', '--json', '--data-dir', tmp.dir]).stdout) as { id: string; state: string }[];
      expect(listed.map((j) => [j.id, j.state])).toEqual([[job.id, 'succeeded']]);
      // The app reads the job's log exactly as the CLI reads the file (games sorted by name in the store).
      expect(fromApp.series).toEqual(saved.series);
      expect(fromApp.axis).toEqual(saved.axis);
      expect(fromApp.games).toEqual([...saved.games].sort((a, b) => a.game.localeCompare(b.game)));

      if (file === 'slime-run.log') {
        expect(saved.axis['env/avg_regret']).toBe('rollout/step');
        expect(saved.axis['train/loss']).toBe('train/step');
        expect(saved.axis['eval/aime']).toBe('eval/step');
        expect(saved.series['perf/step_time']).toEqual([[0, 200], [1, 200]]);
        expect(saved.games.map((g) => g.game)).toEqual(['game_00000_000_pattern_recognition.py', 'game_00000_001_pattern_recognition.py', 'game_00000_002_pattern_recognition.py']);
      } else if (file === 'tinker-metrics.jsonl') {
        expect(new Set(Object.values(saved.axis))).toEqual(new Set(['step']));
        expect(saved.series['train/loss:sum']).toEqual([[0, 12.5], [1, 11.75]]);
      } else {
        // tinker-cookbook's own JsonLogger output (scripts/tinker-metrics-fixture.py): every series on `step`.
        expect(new Set(Object.values(saved.axis))).toEqual(new Set(['step']));
        expect(saved.series['train/loss:sum']).toEqual([[0, 12.5], [1, 11.5], [2, 10.5], [3, 9.5]]);
        expect(saved.series['aime2024/pass@4']!.map((x) => x[0])).toEqual([0, 2]);
      }
      expect(errors).toEqual([]);
    });
  }

  it('says what is wrong with a bad command line and a missing file, and lists jobs', () => {
    const tmp = tempDir('spade-jobs-cli-');
    cleanups.push(() => tmp.cleanup());
    const missing = cli(['jobs', 'metrics', '--log', join(tmp.dir, 'nope.log'), '--json']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('No such file');
    const both = cli(['jobs', 'metrics', 'j1', '--log', join(FIX, 'slime-run.log')]);
    expect(both.status).toBe(2);
    const unknown = cli(['jobs', 'metrics', 'no-such-job', '--json', '--data-dir', tmp.dir]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('No job no-such-job');
    const list = cli(['jobs', 'list', '--json', '--data-dir', tmp.dir]);
    expect(list.status, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([]);
  });
});
