import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Services } from '../../../core/services/services';
import { ingest } from '../../../core/memory/repository';
import { sha256 } from '../../../core/memory/parse';
import { stepRecord } from '../../../core/episodes/session';
import { tempDir } from '../../helpers/tmp';

/**
 * SPADE validates the instance at every play load (synthetic_game_env.py:262-334) and never plays
 * a game that fails: an unhinted play is a FAILED trajectory, dropped (orchestrator.py:352-354,
 * :1614-1623), a hinted play scores 0.0 (:1830-1832). These games are winnable by their own
 * solution(): the workbench used to play them in SPADE mode and score 1 in both arms.
 */
const CORPUS = join(__dirname, '..', '..', 'fixtures', 'spade-corpus');
const tmp = tempDir('spade-refusal-');
let s: Services;
const hashes: Record<string, string> = {};
const CASES = ['l31_refused_reset_info_none', 'l32_refused_truncated_int', 'l33_refused_reset_returns_none', 'l34_refused_terminated_int'] as const;
const message = (name: string): string => (JSON.parse(readFileSync(join(CORPUS, `${name}.expected.json`), 'utf8')) as { load: { message: string } }).load.message;

beforeAll(() => {
  s = new Services({ dataDir: tmp.dir, shell: 'in-process' });
  for (const n of CASES) {
    const source = readFileSync(join(CORPUS, `${n}.py`), 'utf8');
    ingest(s.db, { source, path: join(CORPUS, `${n}.py`), fileStem: n, hint: 'Guess well.' });
    hashes[n] = sha256(source);
  }
});
afterAll(async () => {
  await s.close();
  tmp.cleanup();
});

describe("SPADE's refusal at play load", () => {
  it('an episode in SPADE mode is refused at its load in SPADE words and nothing is recorded; the labelled fresh mode plays on', async () => {
    const n = 'l33_refused_reset_returns_none';
    const before = s.episodes.list({ limit: 1000, offset: 0 }).total;
    await expect(s.episodes.open({ hash: hashes[n]!, seed: 3, hint: false, label: 't', runtime: 'pyodide' })).rejects.toThrow(`SPADE refuses this game at load: ${message(n)}`);
    expect(s.episodes.list({ limit: 1000, offset: 0 }).total).toBe(before);
    const fresh = await s.episodes.open({ hash: hashes[n]!, seed: 3, hint: false, label: 't', runtime: 'pyodide', mode: 'fresh' });
    const ran = await s.episodes.run(fresh.episode.id, { kind: 'solution' }, { kind: 'done' }, 10);
    expect(ran.stoppedBecause).toBe('terminated');
    // Replaying that recording in SPADE mode would be refused; in its own mode it replays.
    expect((await s.episodes.replay(fresh.episode.id)).divergence).toBeNull();
  }, 120_000);

  for (const n of CASES) {
    it(`${n}: a regret run counts it as SPADE does (hinted 0.0, unhinted FAILED and dropped), in SPADE's words`, async () => {
      const r = await s.episodes.regretMany({ hashes: [hashes[n]!], seeds: 2, seedStart: 0, policy: { kind: 'solution' }, runtime: 'pyodide' });
      const env = r.envs[0]!;
      expect(env.withHint.returns).toEqual([0, 0]);
      expect(env.withoutHint.returns).toEqual([]);
      // SPADE: R(hint) = mean of the 0.0s; R(no hint) = 0.0 for a game none of whose plays survived (orchestrator.py:2046).
      expect([env.rHint, env.rNoHint, env.regret]).toEqual([0, 0, 0]);
      expect(r.episodes).toHaveLength(4);
      for (const e of r.episodes) {
        expect(e.endedBy).toBe('refused');
        expect(e.refused).toEqual({ stage: expect.any(String), message: message(n) });
        expect(e.failed).toBe(!e.hint);
        expect(e.error).toContain(`SPADE refuses this game at load: ${message(n)}`);
        const got = s.episodes.get(e.episodeId);
        expect(got.steps).toEqual([]);
        expect(got.episode.label).toContain('refused by SPADE at load');
        expect(got.episode.meta.refused).toEqual(e.refused);
      }
      // A resume plays nothing again: the refusal is SPADE's answer, not a failure to retry.
      const again = await s.episodes.regretMany({ hashes: [hashes[n]!], seeds: 2, seedStart: 0, policy: { kind: 'solution' }, runtime: 'pyodide', runId: r.runId });
      expect(again.episodes.map((e) => e.episodeId).sort()).toEqual(r.episodes.map((e) => e.episodeId).sort());
    }, 120_000);
  }
});

describe('a raw step record', () => {
  it("shows a truthy non-bool terminated as SPADE's bool() of it, not false", () => {
    const rec = stepRecord(1, '\\boxed{1}', null, { observation: 'Correct!', reward: 1, terminated: 1, truncated: 0, info: {}, types: ['str', 'float', 'int', 'int', 'dict'], shape: 'tuple5', spade: { observation: 'Correct!', reward: 1, terminated: true, truncated: false, info: {} } });
    expect(rec.terminated).toBe(true);
    expect(rec.truncated).toBe(false);
    expect(rec.types).toEqual(['str', 'float', 'int', 'int', 'dict']);
  });
});
