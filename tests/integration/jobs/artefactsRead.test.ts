import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readRunArtefacts } from '../../../core/jobs/artefacts';
import { LocalTransport } from '../../../core/jobs/localTransport';
import { tempDir } from '../../helpers/tmp';

/** A run folder read through the transport a local job uses (the real file system). */
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});
function runDir(): string {
  const t = tempDir('spade-artefacts-');
  cleanups.push(t.cleanup);
  return t.dir;
}

describe("reading a run's folder", () => {
  it("finds a Tinker run's checkpoints.jsonl and gives an evaluation of a sampler checkpoint its batch", async () => {
    const run = runDir();
    // As tinker_cookbook/checkpoint_utils.py:82-84 appends them into log_path (the launcher's OUTPUT_DIR).
    writeFileSync(
      join(run, 'checkpoints.jsonl'),
      [32, 64].map((b) => JSON.stringify({ name: String(b).padStart(6, '0'), batch: b, state_path: `tinker://abc/weights/${b}`, sampler_path: `tinker://abc/sampler_weights/${b}` })).join('\n') + '\n',
    );
    writeFileSync(join(run, 'metrics.jsonl'), '{"step": 0}\n');
    const results = JSON.parse(readFileSync(join(process.cwd(), 'tests', 'fixtures', 'eval-offline', 'iter_0000015', 'results.json'), 'utf8')) as Record<string, unknown>;
    mkdirSync(join(run, 'eval64'));
    writeFileSync(join(run, 'eval64', 'results.json'), JSON.stringify({ ...results, ckpt: 'tinker://abc/sampler_weights/64', ckpt_resolved: '' }));
    const a = await readRunArtefacts(new LocalTransport(), run);
    expect(a.saveDirs).toEqual([{ path: run, kind: 'tinker', latest: 64, tracker: null, checkpoints: 2 }]);
    expect(a.checkpoints.map((c) => [c.kind, c.step, c.latest, c.samplerPath])).toEqual([
      ['tinker', 64, true, 'tinker://abc/sampler_weights/64'],
      ['tinker', 32, false, 'tinker://abc/sampler_weights/32'],
    ]);
    expect(a.evals.map((e) => e.step)).toEqual([64]);
  });

  it('stays bounded in a hostile folder: a symlink loop, thousands of entries, an oversized results.json, SPADE game folders skipped', async () => {
    const run = runDir();
    symlinkSync(run, join(run, 'loop'));
    mkdirSync(join(run, 'crowd'));
    for (let i = 0; i < 2100; i++) writeFileSync(join(run, 'crowd', `f${i}`), '');
    mkdirSync(join(run, 'big'));
    writeFileSync(join(run, 'big', 'results.json'), Buffer.alloc(5 << 20, 0x20));
    // Games are never searched: a results.json among them is not the run's evaluation.
    mkdirSync(join(run, 'spade_games'));
    cpSync(join(process.cwd(), 'tests', 'fixtures', 'eval-offline', 'iter_0000015', 'results.json'), join(run, 'spade_games', 'results.json'));
    const a = await readRunArtefacts(new LocalTransport(), run);
    expect(a.evals).toEqual([]);
    expect(a.problems).toEqual(
      expect.arrayContaining([
        { path: join(run, 'big', 'results.json'), message: `${5 << 20} bytes: larger than eval_offline writes, not read` },
        { path: join(run, 'crowd'), message: '2100 entries: only the first 2000 were looked at' },
      ]),
    );
    // The loop is followed only as deep as the search goes.
    expect(a.problems.filter((p) => p.path.startsWith(join(run, 'loop', 'loop', 'loop', 'loop')))).toEqual([]);
    expect(await readRunArtefacts(new LocalTransport(), join(run, 'absent'))).toMatchObject({ note: `The run folder ${join(run, 'absent')} is not there (yet) on local.`, checkpoints: [] });
  });
});
