/**
 * One environment instance in a runtime, seen through the harness protocol (native/harness.py).
 * Environment failures (a raising step, a wrong return shape) come back as data on the step;
 * only runtime failures (a dead interpreter, a protocol error, a load error) throw.
 */
import { DomainError } from '../errors';
import type { RuntimeChoice, RuntimeKind } from '../api/schemas';
import type { HarnessError, HarnessReply } from '../runtime/types';
import { PYODIDE_MISSING_MODULES } from '../runtime/choice';
import { spadeOf, spadeResetObservation, type SpadeStep } from './spade';
import type { StepRecord } from './episodeStore';
import type { HarnessRequest } from '../runtime/protocol';
import type { ToolCallItem } from './rollout';

/**
 * How an episode's instance is made and seeded. 'spade': SPADE's load (its validation plays
 * reset(42), the probes and reset(123) on the instance first) and `random` as the game leaves it.
 * 'fresh': a new instance without that validation, as the audit makes its own. 'deterministic':
 * a fresh instance whose `random` (and numpy's) is seeded at every reset(seed), the workbench's
 * labelled mode, which is how the audit's reset-leak check resets.
 */
export type PlayMode = 'spade' | 'fresh' | 'deterministic';
export const PLAY_MODES: readonly PlayMode[] = ['spade', 'fresh', 'deterministic'];

/** The harness's load options for a mode. */
export function loadOptionsOf(mode: PlayMode): { spadeMode?: false; deterministic?: true } {
  if (mode === 'fresh') return { spadeMode: false };
  if (mode === 'deterministic') return { spadeMode: false, deterministic: true };
  return {};
}

/** The mode an episode was played in (recordings made before modes were kept are SPADE's). */
export function modeOf(meta: Record<string, unknown>): PlayMode {
  const m = meta.mode;
  return m === 'fresh' || m === 'deterministic' ? m : 'spade';
}

/** The runtime as episodes use it; core/runtime/service.ts's RuntimeService fits it. */
export interface RuntimePort {
  open(o: { source: string; runtime?: RuntimeChoice; maxTurns?: number; label?: string; priority?: 'foreground' | 'background'; spadeMode?: boolean; deterministic?: boolean; signal?: AbortSignal }): Promise<
    | { ok: true; sessionId: string; runtime: RuntimeKind; load: { className: string; maxTurns: number | null; toolUse: boolean; hasSolution: boolean; mayHaveTools?: boolean; validation?: { ok: boolean; message: string | null; stage: string | null } } }
    | { ok: false; runtime: RuntimeKind; error: HarnessError }
  >;
  call(sessionId: string, req: HarnessRequest, opts?: { priority?: 'foreground' | 'background' }): Promise<HarnessReply>;
  /** The session's background requests go ahead now (optional: runtimes without priorities). */
  promote?(sessionId: string): void;
  close(sessionId: string): Promise<unknown>;
  /** Cancel: kill the interpreter working for the session; false when it cannot without hurting others. */
  interrupt?(sessionId: string): boolean;
}

export interface LoadInfo {
  className: string | null;
  maxTurns: number | null;
  toolUse: boolean;
  hasSolution: boolean;
  /** False when the game has no get_tools(): its tools are [] without asking the interpreter. */
  mayHaveTools: boolean;
  runtime: RuntimeKind;
}

export class EnvLoadError extends DomainError {
  constructor(
    message: string,
    readonly harness: HarnessError,
  ) {
    super('invalid_input', message, { harness });
  }
}

/**
 * A game SPADE's env factory refuses: `make_synthetic_env` raises, at its load checks (exec, class,
 * instantiation, methods) or at the validation it runs on every instance it hands out
 * (spade/core/envs/synthetic_game_env.py:181 calls _load_game_from_code, whose :257 runs
 * _validate_game_execution, :262-334). SPADE never plays such a game: its unhinted play is a FAILED
 * trajectory, dropped (orchestrator.py:352-354, :1526-1547, :1614-1623), its hinted play scores 0.0
 * (orchestrator.py:1830-1832). `spadeMessage` is SPADE's own message, word for word.
 */
export class SpadeRefusal extends EnvLoadError {
  constructor(
    readonly stage: string,
    readonly spadeMessage: string,
    harness: HarnessError,
  ) {
    super(`SPADE refuses this game at load: ${spadeMessage}`, harness);
  }
}

/** The words a refused episode keeps and shows: SPADE's message and what SPADE does with such a game. */
export function refusalText(spadeMessage: string, hint: boolean): string {
  return `SPADE refuses this game at load: ${spadeMessage} (SPADE never plays it: ${hint ? 'a hinted play scores 0.0' : 'an unhinted play is a FAILED trajectory, dropped'})`;
}

interface RawReset {
  observation?: unknown;
  info?: unknown;
  types?: string[];
  shape?: string;
  error?: HarnessError;
  spade?: { observation: string };
}
interface RawStep {
  observation?: unknown;
  reward?: unknown;
  terminated?: unknown;
  truncated?: unknown;
  info?: unknown;
  types?: string[];
  shape?: string;
  action?: string;
  state?: unknown;
  error?: HarnessError;
  spade?: SpadeStep;
}

function errView(e: HarnessError): NonNullable<StepRecord['error']> {
  return { kind: e.kind, type: e.type, message: e.message, ...(e.traceback ? { traceback: e.traceback } : {}), ...(typeof e.line === 'number' ? { line: e.line } : {}) };
}

function numericInfo(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function asNumber(v: unknown): number | null {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return null;
}

/** A reset reply as a timeline step (SPADE: a bare str is accepted, other shapes are an error). */
export function resetRecord(idx: number, seed: number | null, r: RawReset): Omit<StepRecord, 'state'> {
  // SPADE's reset observation (what the agent is shown) rides in `spade`, reward and flags neutral.
  const spade = { observation: spadeResetObservation(r), reward: 0, terminated: false, truncated: false, info: {} };
  const base = { idx, kind: 'reset' as const, action: null, rawAction: null, seed, reward: null, terminated: false, truncated: false, types: r.types ?? null, spade };
  if (r.error) return { ...base, observation: null, info: {}, error: errView(r.error) };
  if (r.shape === 'other' || typeof r.observation !== 'string') {
    return { ...base, observation: typeof r.observation === 'string' ? r.observation : null, info: {}, error: { kind: 'shape', type: 'InvalidReset', message: `reset() returned ${(r.types ?? ['?']).join(', ')}; expected (str, dict) or str` } };
  }
  return { ...base, observation: r.observation, info: numericInfo(r.info), error: null };
}

export function stepRecord(idx: number, action: string, rawAction: string | null, r: RawStep): Omit<StepRecord, 'state'> {
  const base = { idx, kind: 'step' as const, action, rawAction, seed: null, types: r.types ?? null, spade: spadeOf(r) };
  if (r.error) return { ...base, observation: null, reward: null, terminated: true, truncated: false, info: {}, error: errView(r.error) };
  if (r.shape !== 'tuple5') {
    return { ...base, observation: null, reward: null, terminated: true, truncated: false, info: {}, error: { kind: 'shape', type: 'InvalidStep', message: `step() returned ${(r.types ?? ['?']).join(', ')}; expected a 5-tuple` } };
  }
  // A flag that is not a bool (a game's 1, numpy.bool_) is what Python's bool() makes of it, as
  // SPADE's wrapper converts it (synthetic_game_env.py:411-412): a truthy 1 ends the episode there,
  // so the record says terminated, not false; `types` keeps the game's own type.
  const flag = (v: unknown, converted: boolean): boolean => (typeof v === 'boolean' ? v : converted);
  return {
    ...base,
    observation: typeof r.observation === 'string' ? r.observation : JSON.stringify(r.observation),
    reward: asNumber(r.reward),
    terminated: flag(r.terminated, base.spade.terminated),
    truncated: flag(r.truncated, base.spade.truncated),
    info: numericInfo(r.info),
    error: null,
  };
}

export class EnvSession {
  private closed = false;
  /** The runtime lost this session (interpreter replaced, idle-closed): the episode must re-open. */
  gone = false;
  private constructor(
    private readonly host: RuntimePort,
    readonly id: string,
    readonly info: LoadInfo,
  ) {}

  static async open(host: RuntimePort, source: string, opts: { maxTurns: number; runtime?: RuntimeChoice; label?: string; background?: boolean; mode?: PlayMode; signal?: AbortSignal }): Promise<EnvSession> {
    const mode = opts.mode ?? 'spade';
    const r = await host.open({
      source,
      runtime: opts.runtime ?? 'auto',
      maxTurns: opts.maxTurns,
      ...(opts.label ? { label: opts.label } : {}),
      ...(opts.background ? { priority: 'background' as const } : {}),
      ...loadOptionsOf(mode),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    if (!r.ok && r.error.kind === 'cancelled') throw new DomainError('cancelled', 'Opening the episode was cancelled');
    // SPADE's factory raised (a load check, with its stage): in SPADE mode that is SPADE's refusal,
    // unless the sandbox lacks a module SPADE's process has (its refusal would be the workbench's).
    const sandboxLacks = !r.ok && r.runtime === 'pyodide' && typeof r.error.missingModule === 'string' && PYODIDE_MISSING_MODULES.has(r.error.missingModule);
    if (!r.ok && mode === 'spade' && r.error.kind === 'load_error' && typeof r.error.stage === 'string' && !sandboxLacks) throw new SpadeRefusal(r.error.stage, r.error.message, r.error);
    if (!r.ok) throw new EnvLoadError(`The environment did not load: ${r.error.message}`, r.error);
    const v = r.load.validation;
    if (mode === 'spade' && v && !v.ok) {
      // The harness loads a refused instance for inspection (the audit's evidence); an episode in
      // SPADE mode ends where SPADE's does, before its first reset. 'fresh' plays it anyway.
      await host.close(r.sessionId).catch(() => {});
      const message = v.message ?? 'the load validation failed';
      throw new SpadeRefusal(v.stage ?? 'validation', message, { kind: 'load_error', type: 'SpadeValidation', message, stage: v.stage ?? 'validation' } as HarnessError);
    }
    const session = new EnvSession(host, r.sessionId, {
      className: r.load.className ?? null,
      maxTurns: typeof r.load.maxTurns === 'number' ? r.load.maxTurns : null,
      toolUse: r.load.toolUse === true,
      hasSolution: r.load.hasSolution === true,
      mayHaveTools: r.load.mayHaveTools !== false,
      runtime: r.runtime,
    });
    // The signal stops the session's calls too, not only its load (a replay, an import's seed
    // search): Cancel kills the interpreter working for it, until the session is closed.
    if (opts.signal) session.stopOn(opts.signal);
    return session;
  }

  private unwatch: (() => void) | null = null;

  private stopOn(signal: AbortSignal): void {
    const stop = () => void this.host.interrupt?.(this.id);
    if (signal.aborted) stop();
    signal.addEventListener('abort', stop, { once: true });
    this.unwatch = () => signal.removeEventListener('abort', stop);
  }

  private async call(req: HarnessRequest, background = false): Promise<HarnessReply> {
    if (this.closed) throw new DomainError('conflict', 'this episode session is closed');
    return background ? this.host.call(this.id, req, { priority: 'background' }) : this.host.call(this.id, req);
  }

  /** Sent ahead, now awaited: whatever of it still waits in the background goes first. */
  private take<T>(p: Promise<T>): Promise<T> {
    this.host.promote?.(this.id);
    return p;
  }

  /** Harness failures that are not the game's fault (session gone, protocol) become DomainErrors (the dispatcher sends them as ApiErrors). */
  private static runtimeFailure(e: HarnessError): boolean {
    return e.kind === 'unknown_session' || e.kind === 'protocol' || e.kind === 'crashed' || e.kind === 'not_found' || e.kind === 'snapshot_unsupported';
  }

  private unwrap(reply: HarnessReply): { ok: true; value: unknown } | { ok: false; error: HarnessError } {
    if (reply.ok) return { ok: true, value: reply.result };
    if (reply.error.kind === 'unknown_session' || reply.error.restarted) this.gone = true;
    if (EnvSession.runtimeFailure(reply.error)) throw new DomainError('unavailable', `Runtime: ${reply.error.message}`, { harness: reply.error });
    return { ok: false, error: reply.error };
  }

  private prefetchedReset: { seed: number | null; preseed: number | undefined; reply: Promise<HarnessReply> } | null = null;

  /**
   * Sends `reset(seed)` now, for the next `reset` with that seed to take, in the order the calls
   * are made (a player that asks for its tools first asks for them first here too). Only for a
   * player that will certainly reset with this seed next: the call runs whether it is taken or not.
   */
  prefetchReset(seed: number | null, preseed?: number): void {
    if (this.prefetchedReset) return;
    const reply = this.call({ cmd: 'reset', seed, ...(preseed !== undefined ? { preseed } : {}) }, true);
    reply.catch(() => {});
    this.prefetchedReset = { seed, preseed, reply };
  }

  /** `preseed` (with seed null): the number the interpreter's random starts from before an unseeded reset (harness_episode._reset). */
  async reset(idx: number, seed: number | null, preseed?: number): Promise<Omit<StepRecord, 'state'>> {
    const pre = this.prefetchedReset;
    this.prefetchedReset = null;
    const r = this.unwrap(await (pre && pre.seed === seed && pre.preseed === preseed ? this.take(pre.reply) : this.call({ cmd: 'reset', seed, ...(preseed !== undefined ? { preseed } : {}) })));
    return resetRecord(idx, seed, r.ok ? (r.value as RawReset) : { error: r.error });
  }

  async step(idx: number, action: string, rawAction: string | null = null): Promise<Omit<StepRecord, 'state'>> {
    const r = this.unwrap(await this.call({ cmd: 'step', action }));
    return stepRecord(idx, action, rawAction, r.ok ? (r.value as RawStep) : { error: r.error });
  }

  /** SPADE's `execute_tool` on the instance (harness `tool` command): never a step. */
  async tool(call: ToolCallItem): Promise<{ output: string; returncode: number }> {
    const { name } = call;
    // The block when there is one: the harness reads it as SPADE does (Python's values, not JSON.parse's).
    const r = this.unwrap(await this.call(call.block !== undefined ? { cmd: 'tool', block: call.block } : { cmd: 'tool', name, arguments: call.arguments }));
    // SPADE's parser raised on the call (JSON nested too deep): its rollout fails the episode, so this one fails too.
    if (!r.ok && r.error.kind === 'unreadable_call') throw new DomainError('invalid_input', `the tool call could not be read: ${r.error.message}`, { harness: r.error });
    // execute_tool raised, ran past its limit, or returned what has no .get("output"): SPADE's rollout
    // has no answer for the model then and fails the whole episode (its catch-all, or "execute_tool
    // timeout"); a tool method that raises is already "Error calling …" inside ToolUseBaseEnv.
    if (!r.ok) throw new DomainError('invalid_input', `execute_tool(${JSON.stringify(name)}) failed: ${r.error.kind === 'timeout' ? 'timeout' : r.error.type}: ${r.error.message}`, { harness: r.error });
    const v = r.value as { output?: unknown; returncode?: unknown };
    return { output: typeof v.output === 'string' ? v.output : String(v.output ?? ''), returncode: v.returncode === 0 ? 0 : 1 };
  }

  private prefetchedTools: Promise<unknown[]> | null = null;

  /**
   * Asks for the tools now, for the next `tools()` call to take (one call, one `get_tools()`, as
   * without it): a regret run loads the next episode's session while the current one plays.
   */
  prefetchTools(): void {
    this.prefetchedTools ??= this.fetchTools(true);
    this.prefetchedTools.catch(() => {});
  }

  /** The game's tools (`get_tools()`); an empty list for games without tools or a harness without the command. */
  async tools(): Promise<unknown[]> {
    const p = this.prefetchedTools;
    this.prefetchedTools = null;
    return p ? this.take(p) : this.fetchTools();
  }

  private async fetchTools(background = false): Promise<unknown[]> {
    if (!this.info.mayHaveTools) return [];
    const reply = await this.call({ cmd: 'get_tools' }, background);
    if (!reply.ok) return [];
    const v = reply.result as { tools?: unknown } | unknown[];
    return Array.isArray(v) ? v : Array.isArray((v as { tools?: unknown }).tools) ? ((v as { tools: unknown[] }).tools) : [];
  }

  /** Several steps in one call (no reset), each with its state; stops after an error or when done (if asked). */
  async play(firstIdx: number, actions: string[], opts: { stopWhenDone: boolean; rawActions?: (string | null)[]; state?: boolean }): Promise<StepRecord[]> {
    if (actions.length === 0) return [];
    const r = this.unwrap(await this.call({ cmd: 'play', actions, reset: false, stopWhenDone: opts.stopWhenDone, state: opts.state !== false }));
    if (!r.ok) throw new DomainError('unavailable', `Runtime: ${r.error.message}`, { harness: r.error });
    const steps = ((r.value as { steps?: RawStep[] }).steps ?? []) as RawStep[];
    return steps.map((s, i) => ({ ...stepRecord(firstIdx + i, s.action ?? actions[i] ?? '', opts.rawActions?.[i] ?? null, s), state: s.state ?? null }));
  }

  async state(): Promise<unknown> {
    const reply = await this.call({ cmd: 'state' });
    return reply.ok ? reply.result : null;
  }

  /** `plan`: what a tool-use game's described solution() text stands for (its calls, then the answer). */
  async solution(): Promise<{ ok: true; value: unknown; plan?: string[] } | { ok: false; message: string }> {
    const r = this.unwrap(await this.call({ cmd: 'solution' }));
    if (!r.ok) return { ok: false, message: r.error.message };
    const v = r.value as { value: unknown; plan?: unknown };
    const plan = Array.isArray(v.plan) && v.plan.every((a) => typeof a === 'string') ? (v.plan as string[]) : undefined;
    return plan ? { ok: true, value: v.value, plan } : { ok: true, value: v.value };
  }

  /** A snapshot token, or null when this game's state cannot be copied (scrubbing then re-executes from the start). */
  async snapshot(): Promise<string | null> {
    const reply = await this.call({ cmd: 'snapshot' });
    return reply.ok ? (reply.result as { token: string }).token : null;
  }

  async restore(token: string): Promise<void> {
    const reply = await this.call({ cmd: 'restore', token });
    if (!reply.ok) throw new DomainError('unavailable', `Runtime: could not restore a snapshot: ${reply.error.message}`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unwatch?.();
    await this.host.close(this.id).catch(() => {});
  }
}
