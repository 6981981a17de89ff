/**
 * STAND-IN, not a real runtime: a RuntimePort that plays games written in TypeScript, answering
 * the harness protocol (native/README.md, "Protocol": reset/step/play/state/solution/tool/get_tools, with SPADE's
 * converted `spade` object on every step) so the episode modules' logic is unit tested without an
 * interpreter. Integration tests run the same modules on real Pyodide and CPython.
 */
import type { RuntimePort } from '../../core/episodes/session';
import type { HarnessErrorKind, HarnessReply } from '../../core/runtime/types';
import { errorMessage } from '../../core/api';
import { parseToolCalls } from '../../core/models/toolCalls';

export interface FakeGame {
  reset(seed: number | null): unknown;
  /** Returns SPADE's 5-tuple as an array, or throws like a raising step. */
  step(action: string): unknown;
  solution?(): unknown;
  tools?: { type: 'function'; function: { name: string; description: string; parameters: unknown } }[];
  tool?(name: string, args: Record<string, unknown>): string;
}

const ok = (result: unknown): HarnessReply => ({ id: null, ok: true, result });
const fail = (kind: HarnessErrorKind, message: string): HarnessReply => ({ id: null, ok: false, error: { kind, type: kind === 'env_error' ? 'RuntimeError' : kind, message } });

function truthy(v: unknown): boolean {
  return Array.isArray(v) ? v.length > 0 : !!v;
}

/** The reply of one step, with the harness's described values and SPADE's conversion beside them. */
function describeStep(ret: unknown, withSpade: boolean): Record<string, unknown> {
  if (!Array.isArray(ret) || ret.length !== 5) {
    return { shape: 'other', types: [typeof ret], ...(withSpade ? { spade: { observation: 'Invalid game response', reward: -1, terminated: true, truncated: false, info: {}, error: 'shape' } } : {}) };
  }
  const [obs, reward, term, trunc, info] = ret as [unknown, unknown, unknown, unknown, unknown];
  const num = typeof reward === 'number' ? (Number.isNaN(reward) ? 'NaN' : reward) : reward === null ? 0 : Number(reward);
  const spade = {
    observation: obs === null ? 'No observation' : String(obs),
    reward: num,
    terminated: truthy(term),
    truncated: truthy(trunc),
    info: info && typeof info === 'object' ? Object.fromEntries(Object.entries(info).filter(([, x]) => typeof x === 'number')) : {},
  };
  return { observation: obs, reward, terminated: term, truncated: trunc, info: info ?? {}, types: ['str', typeof reward, typeof term, typeof trunc, 'dict'], shape: 'tuple5', ...(withSpade ? { spade } : {}) };
}

export class FakeRuntime implements RuntimePort {
  private readonly sessions = new Map<string, FakeGame>();
  private n = 0;
  /** Every request the episode code sent, in order (cmd and session). */
  readonly log: { session: string; cmd: string; actions?: number; seed?: number | null; background?: true }[] = [];
  /** Sessions whose background work was brought forward (promote), in order. */
  readonly promoted: string[] = [];
  opened = 0;
  closed = 0;

  constructor(
    private readonly make: () => FakeGame,
    private readonly opts: { withSpade?: boolean; toolUse?: boolean } = {},
  ) {}

  async open(o: { priority?: 'foreground' | 'background' } = {}): Promise<{ ok: true; sessionId: string; runtime: 'pyodide'; load: { className: string; maxTurns: number; toolUse: boolean; hasSolution: boolean } }> {
    const id = `fake-${++this.n}`;
    this.log.push({ session: id, cmd: 'load', ...(o.priority === 'background' ? { background: true as const } : {}) });
    const g = this.make();
    this.sessions.set(id, g);
    this.opened++;
    return { ok: true, sessionId: id, runtime: 'pyodide', load: { className: 'FakeEnv', maxTurns: 30, toolUse: this.opts.toolUse === true, hasSolution: !!g.solution } };
  }

  async close(sessionId: string): Promise<boolean> {
    this.closed++;
    return this.sessions.delete(sessionId);
  }

  promote(sessionId: string): void {
    this.promoted.push(sessionId);
  }

  async call(sessionId: string, req: Record<string, unknown>, opts: { priority?: 'foreground' | 'background' } = {}): Promise<HarnessReply> {
    const g = this.sessions.get(sessionId);
    const cmd = String(req.cmd);
    this.log.push({
      session: sessionId,
      cmd,
      ...(Array.isArray(req.actions) ? { actions: req.actions.length } : {}),
      ...(cmd === 'reset' ? { seed: (req.seed as number | null) ?? null } : {}),
      ...(opts.priority === 'background' ? { background: true as const } : {}),
    });
    if (!g) return fail('unknown_session', `no session ${sessionId}`);
    const withSpade = this.opts.withSpade !== false;
    const step = (a: string): Record<string, unknown> => {
      try {
        return describeStep(g.step(a), withSpade);
      } catch (e) {
        const message = errorMessage(e);
        return { action: a, error: { kind: 'env_error', type: 'RuntimeError', message }, ...(withSpade ? { spade: { observation: `Error: ${message}`, reward: -1, terminated: true, truncated: false, info: {}, error: 'exception' } } : {}) };
      }
    };
    switch (cmd) {
      case 'reset': {
        const obs = g.reset((req.seed as number | null) ?? null);
        return ok({ observation: obs, info: {}, types: ['str', 'dict'], shape: 'tuple2', spade: { observation: String(obs), info: {} } });
      }
      case 'step': {
        const r = step(String(req.action));
        return r.error ? { id: null, ok: false, error: r.error as never } : ok(r);
      }
      case 'play': {
        const steps: Record<string, unknown>[] = [];
        for (const a of req.actions as string[]) {
          const r = step(a);
          steps.push({ ...r, state: { className: 'FakeEnv', fields: [] } });
          if (r.error) break;
          // Today's harness stops only on a literal True; SPADE's end is the converted one.
          if (req.stopWhenDone !== false && (r.terminated === true || r.truncated === true)) break;
        }
        return ok({ steps });
      }
      case 'state':
        return ok({ className: 'FakeEnv', fields: [] });
      case 'snapshot':
        return fail('snapshot_unsupported', 'the stand-in keeps no snapshots');
      case 'solution':
        return g.solution ? ok({ value: g.solution() }) : fail('env_error', 'no solution()');
      case 'get_tools':
        return ok({ tools: g.tools ?? [] });
      case 'tool': {
        // The real harness reads a block with SPADE's Python parser; the stand-in with the host's.
        const read = typeof req.block === 'string' ? parseToolCalls(`<tool_call>${req.block}</tool_call>`)[0] : undefined;
        if (typeof req.block === 'string' && !read) return fail('protocol', 'the tool call block is not a tool call SPADE reads');
        const name = String(read ? read.name : req.name);
        const args = (read ? read.arguments : (req.arguments ?? {})) as Record<string, unknown>;
        if (!g.tool) return ok({ output: `Unknown tool '${name}'`, returncode: 1 });
        try {
          return ok({ output: g.tool(name, args), returncode: 0 });
        } catch (e) {
          return ok({ output: `Error calling ${name}: ${errorMessage(e)}`, returncode: 1 });
        }
      }
      default:
        return fail('protocol', `unknown command ${cmd}`);
    }
  }
}
