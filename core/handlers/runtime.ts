import type { CallName } from '../api';
import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';
import type { RuntimeService } from '../runtime/service';
import type { HarnessReply } from '../runtime/types';
import { DomainError } from '../errors';
import type { HarnessRequest } from '../runtime/protocol';

type RuntimeCall = Extract<CallName, `runtime.${string}`>;

function shape(reply: HarnessReply, started: number): { ok: boolean; result?: never; error?: never; output?: string; elapsedMs: number } {
  const elapsedMs = performance.now() - started;
  if (reply.ok) return { ok: true, result: reply.result as never, ...(reply.output ? { output: reply.output } : {}), elapsedMs };
  if (reply.error.kind === 'unknown_session') throw new DomainError('not_found', reply.error.message);
  if (reply.error.kind === 'protocol') throw new DomainError('invalid_input', reply.error.message);
  return { ok: false, error: reply.error as never, ...(reply.output ? { output: reply.output } : {}), elapsedMs };
}

export function runtimeHandlers(s: Services): Pick<Handlers, RuntimeCall> {
  const rt = (): RuntimeService => s.runtime;
  const run = async (sessionId: string, req: HarnessRequest) => {
    const t = performance.now();
    return shape(await rt().call(sessionId, req), t);
  };
  return {
    'runtime.open': async (input) => {
      const t = performance.now();
      let source = input.source;
      if (source === undefined) source = s.library.version(input.versionHash!).source;
      const r = await rt().open({
        source,
        ...(input.runtime ? { runtime: input.runtime } : {}),
        ...(input.maxTurns ? { maxTurns: input.maxTurns } : {}),
        ...(input.mode ? { mode: input.mode } : {}),
        ...(input.versionHash ? { label: input.versionHash } : {}),
      });
      const common = {
        runtime: r.runtime,
        isolation: r.runtime === 'pyodide' ? ('sandboxed' as const) : ('reduced' as const),
        ...(r.fallbackReason ? { fallbackReason: r.fallbackReason } : {}),
        ...(r.output ? { output: r.output } : {}),
        elapsedMs: performance.now() - t,
      };
      if (!r.ok) {
        if (r.error.kind === 'crashed' || r.error.kind === 'unavailable') s.log('warn', 'runtime', `open failed: ${r.error.message}`);
        return { ok: false, error: r.error, ...common };
      }
      return { ok: true, sessionId: r.sessionId, className: r.load.className, maxTurns: r.load.maxTurns, toolUse: r.load.toolUse, hasSolution: r.load.hasSolution, python: r.load.python, ...common };
    },
    'runtime.reset': ({ sessionId, seed }) => run(sessionId, { cmd: 'reset', seed: seed ?? null }),
    'runtime.step': ({ sessionId, action }) => run(sessionId, { cmd: 'step', action }),
    'runtime.play': ({ sessionId, actions, seed, reset, stopWhenDone, withState }) =>
      run(sessionId, { cmd: 'play', actions, seed: seed ?? null, reset: reset ?? true, stopWhenDone: stopWhenDone ?? true, state: withState ?? false }),
    'runtime.state': ({ sessionId }) => run(sessionId, { cmd: 'state' }),
    'runtime.solution': ({ sessionId }) => run(sessionId, { cmd: 'solution' }),
    'runtime.snapshot': ({ sessionId }) => run(sessionId, { cmd: 'snapshot' }),
    'runtime.restore': ({ sessionId, token }) => run(sessionId, { cmd: 'restore', token }),
    'runtime.close': async ({ sessionId }) => ({ closed: await rt().close(sessionId) }),
    'runtime.checkSyntax': async ({ source, runtime }) => {
      const reply = await rt().checkSyntax(source, runtime ?? 'pyodide');
      if (!reply.ok) throw new DomainError(reply.error.kind === 'timeout' ? 'timeout' : 'unavailable', reply.error.message);
      return reply.result;
    },
    'runtime.status': async ({ warm }) => {
      if (warm) await rt().pool.start();
      return rt().status();
    },
    'runtime.cancelStart': () => ({ cancelled: rt().pool.cancelStart() }),
  };
}
