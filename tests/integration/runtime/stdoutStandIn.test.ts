import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RuntimeService } from '../../../core/runtime/service';
import { probePython } from '../../../core/runtime/native';
import { makeRuntime } from './helpers';

/**
 * While a game runs, the harness stands its capture in for sys.stdout/sys.stderr. What a game may
 * do with a real text stream in SPADE's process must work on the stand-in too (issue 46: every
 * place the harness replaces a library object): bytes through `buffer`, `reconfigure()`, `name`,
 * `line_buffering`. Only fileno() stays refused (fd 1 carries the harness's protocol).
 */
const GAME = String.raw`import sys

class StdoutEnv:
    def reset(self, seed=None):
        sys.stdout.reconfigure(line_buffering=True)
        sys.stdout.buffer.write("bytes \u00e9\n".encode("utf-8"))
        sys.stderr.buffer.flush()
        print("text", flush=True)
        return "%s %s %s" % (sys.stdout.name, sys.stdout.line_buffering in (True, False), sys.stdout.writable()), {}

    def step(self, a):
        return "o", 0.0, True, False, {}
`;

let rt: RuntimeService;
beforeAll(async () => {
  rt = makeRuntime();
});
afterAll(async () => {
  await rt.shutdown();
});

for (const runtime of ['pyodide', 'cpython'] as const) {
  describe.skipIf(runtime === 'cpython' && !probePython())(`sys.stdout stand-in, ${runtime}`, () => {
    test('buffer, reconfigure, name and line_buffering answer as a real stream; what is written is captured', async () => {
      const o = await rt.open({ source: GAME, runtime });
      if (!o.ok) throw new Error(`load failed: ${JSON.stringify(o.error)}`);
      // SPADE's own load ran reset(42) and reset(123) on the instance: it passed.
      expect(o.load.validation?.ok).toBe(true);
      const r = await rt.call(o.sessionId, { cmd: 'reset', seed: 1 });
      await rt.close(o.sessionId);
      if (!r.ok) throw new Error(`reset failed: ${JSON.stringify(r.error)}`);
      expect((r.result as { observation: string }).observation).toBe('<stdout> True True');
      expect(r.output).toBe('bytes \u00e9\ntext\n');
    });
  });
}
