import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, type EventPayload } from '../../../core/api';
import { createDispatcher } from '../../../core/server/dispatcher';
import { createHandlers } from '../../../core/handlers';
import { ingest } from '../../../core/memory/repository';
import { Services } from '../../../core/services/services';
import { tempDir } from '../../helpers/tmp';

// Issue 31: a single audit shows progress (sandbox start-up, each check, a heartbeat against its
// visible limit) and can be cancelled; real Services, real Pyodide and real (sandboxed) CPython.
type Progress = EventPayload<'audit.runProgress'>;

const HANGS = `class HangEnv:
    def reset(self, seed=None):
        return "ready", {}

    def step(self, action):
        while True:
            pass
`;
const FINE = `class FineEnv:
    def reset(self, seed=None):
        self.t = 0
        return "guess a number", {}

    def step(self, action):
        self.t += 1
        return "no", 0.0, self.t >= 3, False, {}
`;

for (const runtime of ['pyodide', 'cpython'] as const) {
  describe(`a single audit in ${runtime}`, () => {
    const tmp = tempDir();
    let s: Services;
    let dispatch: ReturnType<typeof createDispatcher>;
    const seen: Progress[] = [];
    const hashes: Record<string, string> = {};
    const call = (name: string, input: unknown) => dispatch(name, input, { transport: 'in-process' });

    beforeAll(async () => {
      s = new Services({ dataDir: tmp.dir, shell: 'in-process' });
      dispatch = createDispatcher(createHandlers(s));
      await call('settings.update', { auditRuntime: runtime });
      for (const [stem, source] of [
        ['hang_env', HANGS],
        ['fine_env', FINE],
      ] as const) {
        ingest(s.db, { source, path: `/x/${stem}.py`, fileStem: stem, hint: null });
        hashes[stem] = (s.db.prepare('SELECT head_hash FROM environments WHERE file_stem = ?').get(stem) as { head_hash: string }).head_hash;
      }
      s.events.subscribe((name, p) => {
        if (name === 'audit.runProgress') seen.push(p as Progress);
      });
    });
    afterAll(async () => {
      await s.close();
      tmp.cleanup();
    });

    it('reports the check it is in, keeps saying it is alive, and stops on cancel with nothing stored', async () => {
      const running = call('audit.run', { hash: hashes.hang_env, runId: `hang-${runtime}` });
      const outcome = running.then(
        () => null,
        (e: unknown) => e,
      );
      // Wait until the hanging check has started and the heartbeat has spoken at least twice in it.
      while (seen.filter((p) => p.runId === `hang-${runtime}` && p.check === 'spade.step').length < 3) await new Promise((r) => setTimeout(r, 100));
      const mine = seen.filter((p) => p.runId === `hang-${runtime}`);
      expect(mine.every((p) => p.hash === hashes.hang_env)).toBe(true);
      expect(mine.at(-1)).toMatchObject({ state: 'running', runtime, check: 'spade.step' });
      expect(mine.at(-1)!.limitSec).toBeGreaterThan(0);
      expect(mine.at(-1)!.checksDone).toBeGreaterThan(0);
      expect(mine.at(-1)!.checksDone).toBeLessThan(mine.at(-1)!.checksTotal);
      if (runtime === 'pyodide') expect(mine[0]!.state).toBe('starting');
      // The elapsed time moves while one check hangs: the user sees it is alive.
      const inStep = mine.filter((p) => p.check === 'spade.step');
      expect(inStep.at(-1)!.elapsedSec).toBeGreaterThan(inStep[0]!.elapsedSec);

      expect(await call('audit.runCancel', { runId: `hang-${runtime}` })).toEqual({ cancelled: true });
      const err = await outcome;
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ code: 'cancelled', message: 'The audit was cancelled; nothing was stored.' });
      expect(seen.filter((p) => p.runId === `hang-${runtime}`).at(-1)).toMatchObject({ state: 'cancelled' });
      expect(await call('audit.results', { hash: hashes.hang_env })).toBeNull();
      expect(await call('audit.runCancel', { runId: `hang-${runtime}` })).toEqual({ cancelled: false });
    });

    it('runs the next audit to the end after a cancel, counting every check', async () => {
      const r = (await call('audit.run', { hash: hashes.fine_env, runId: `fine-${runtime}` })) as { verdict: string; runtime: string };
      expect(r.runtime).toBe(runtime);
      const mine = seen.filter((p) => p.runId === `fine-${runtime}`);
      const last = mine.at(-1)!;
      expect(last.state).toBe('done');
      expect(last.checksDone).toBe(last.checksTotal);
      expect(new Set(mine.map((p) => p.check).filter(Boolean)).size).toBeGreaterThan(5);
    });
  });
}
