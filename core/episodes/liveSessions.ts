/**
 * Live episodes: each owns one runtime session that a person plays, scrubs and runs a policy on.
 * After an app restart nothing is live; the first action or scrub re-executes the recording in a
 * fresh session (that is what "self-sufficient" buys).
 */
import { DomainError } from '../errors';
import type { Policy, StepDetail } from '../api/calls/episodes';
import type { EpisodeContext, PlayMode, RuntimeChoice, RuntimeKind } from './context';
import { episodeView, stepDetail, summaryOf } from './episodeViews';
import { extractAction } from '../models/extract';
import { moveTo, recordStep, reexecute, stillWanted, type Live } from './livePosition';
import { runPolicy, type Until } from './policyRun';
import { modeOf, type EnvSession } from './session';
import type { EpisodeMeta, StepRecord } from './episodeStore';

export interface OpenInput {
  hash: string;
  seed: number | null;
  hint: boolean;
  hintText?: string | undefined;
  maxTurns?: number | undefined;
  runtime?: RuntimeChoice | undefined;
  label: string;
  resetReference?: { episodeId: number; idx: number } | undefined;
  mode?: PlayMode | undefined;
  /** Makes the open cancellable through openCancel(requestId). */
  requestId?: string | undefined;
}

/** One turn of a policy that decides its own actions (a served model); `signal` is Cancel. */
export type PolicyTurn = (session: EnvSession, steps: StepRecord[], meta: EpisodeMeta, signal?: AbortSignal) => Promise<{ steps: StepRecord[]; meta: Record<string, unknown>; ended: string | null }>;

export class LiveSessions {
  private readonly live = new Map<number, Live>();
  /** One operation per episode at a time: steps must reach the interpreter in order. */
  private readonly locks = new Map<number, Promise<unknown>>();
  /** Episode work a person can cancel (open, step, run, scrub, replay, import), by the id their caller chose. */
  private readonly requests = new Map<string, AbortController>();

  constructor(private readonly ctx: EpisodeContext) {}

  /** Where the episode's live session stands; null when it has none. */
  cursor(id: number): number | null {
    const l = this.live.get(id);
    return l ? l.cursor : null;
  }

  private view(id: number) {
    return episodeView(this.ctx, id, this.cursor(id));
  }

  private async exclusive<T>(id: number, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(id) ?? Promise.resolve();
    // A session the runtime dropped (idle-closed, interpreter replaced) is re-created from the
    // recording once, so the researcher sees the step rather than an error.
    const once = async (): Promise<T> => {
      try {
        return await fn();
      } catch (e) {
        const l = this.live.get(id);
        if (!l?.session.gone) throw e;
        this.live.delete(id);
        return fn();
      }
    };
    const next = prev.catch(() => {}).then(once);
    this.locks.set(id, next);
    try {
      return await next;
    } finally {
      if (this.locks.get(id) === next) this.locks.delete(id);
    }
  }

  /**
   * Cancel for an open that waits (Pyodide's cold start, a slow load): its load is dropped or its
   * interpreter stopped, the session it may have got is closed, nothing is recorded, and the open
   * answers `cancelled`. False when no open with that id is in progress.
   */
  openCancel(requestId: string): boolean {
    return this.cancel(requestId);
  }

  /**
   * Cancel for a step, a run, a reopen or a replay in progress: the interpreter working on it is
   * killed (or, on a Pyodide child shared with other sessions, let run to its time limit), the
   * episode's live session is dropped, nothing more is recorded, and the call answers `cancelled`.
   * Steps recorded before Cancel stay. False when no request with that id is in progress.
   */
  cancel(requestId: string): boolean {
    const c = this.requests.get(requestId);
    if (!c) return false;
    c.abort();
    return true;
  }

  /** Runs `fn` under a request id Cancel can abort; a cancelled call answers `cancelled`, whatever it was doing then. */
  async cancellable<T>(requestId: string | undefined, what: string, fn: (signal?: AbortSignal) => Promise<T>): Promise<T> {
    if (requestId === undefined) return fn();
    if (this.requests.has(requestId)) throw new DomainError('conflict', `A request ${requestId} is already in progress`);
    const control = new AbortController();
    this.requests.set(requestId, control);
    try {
      return await fn(control.signal);
    } catch (e) {
      if (control.signal.aborted) throw new DomainError('cancelled', `${what} was cancelled`);
      throw e;
    } finally {
      this.requests.delete(requestId);
    }
  }

  /**
   * Work on a live session that Cancel can stop: Cancel kills the interpreter working for it
   * (live.session is read then: a scrub may have replaced it), and afterwards the session is
   * dropped, since it no longer stands where the recording says.
   */
  private async onLive<T>(id: number, live: Live, signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
    if (!signal) return fn();
    const stop = () => void this.ctx.d.runtime.interrupt?.(live.session.id);
    signal.addEventListener('abort', stop, { once: true });
    try {
      const r = await fn();
      stillWanted(signal);
      return r;
    } catch (e) {
      if (signal.aborted) {
        if (this.live.get(id) === live) this.live.delete(id);
        await live.session.close().catch(() => {});
        // Lists show whether an episode is live.
        this.ctx.d.changed?.([id]);
      }
      throw e;
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }

  async open(input: OpenInput) {
    return this.cancellable(input.requestId, 'Opening the episode', (signal) => this.openNow(input, signal));
  }

  private async openNow(input: Omit<OpenInput, 'requestId'>, signal?: AbortSignal) {
    const { ctx } = this;
    const env = ctx.env(input.hash);
    const mode: PlayMode = input.mode ?? 'spade';
    const defaults = ctx.d.defaults();
    const runtime: RuntimeChoice = input.runtime ?? 'auto';
    const maxTurns = input.maxTurns ?? defaults.maxTurns;
    const hintText = input.hintText ?? env.hint;
    if (input.hint && !hintText) throw new DomainError('invalid_input', 'This environment has no hint; give one in hintText to play with a hint');
    const session = await ctx.openSession(env.source, maxTurns, runtime, false, mode, signal);
    // Cancel after the load: the session is closed (below) before anything is recorded.
    try {
      stillWanted(signal);
      const reset = await session.reset(0, input.seed);
      stillWanted(signal);
      const state = await session.state();
      stillWanted(signal);
      const id = ctx.d.store.create({
        envHash: input.hash,
        envName: env.name,
        className: session.info.className,
        seed: input.seed,
        hintEnabled: input.hint,
        hintText: hintText ?? null,
        maxTurns,
        runtime: session.info.runtime,
        origin: 'played',
        label: input.label,
        policy: { kind: 'interactive' },
        meta: {
          toolUse: session.info.toolUse,
          hasSolution: session.info.hasSolution,
          effectiveMaxTurns: session.info.maxTurns,
          ...(mode !== 'spade' ? { mode } : {}),
          ...(input.resetReference ? { resetReference: input.resetReference } : {}),
        },
      });
      ctx.d.store.appendSteps(id, [{ ...reset, state }]);
      const live: Live = { session, cursor: 0, snapshots: new Map(), runtime: session.info.runtime, mode };
      const snap = await session.snapshot();
      if (snap) live.snapshots.set(0, snap);
      this.live.set(id, live);
      ctx.d.changed?.([id]);
      return this.view(id);
    } catch (e) {
      await session.close();
      throw e;
    }
  }

  /** The live session of an episode, re-created by re-executing the recording if needed. */
  private async ensureLive(id: number, signal?: AbortSignal): Promise<Live> {
    const existing = this.live.get(id);
    if (existing && !existing.session.gone) return existing;
    if (existing) this.live.delete(id);
    const { ctx } = this;
    const m = ctx.meta(id);
    const env = ctx.env(m.envHash);
    const runtime: RuntimeKind = m.runtime === 'cpython' ? 'cpython' : 'pyodide';
    const mode = modeOf(m.meta);
    const session = await ctx.openSession(env.source, m.maxTurns, runtime, false, mode, signal);
    const live: Live = { session, cursor: -1, snapshots: new Map(), runtime, mode };
    try {
      // Reopening a recording re-executes every step: Cancel stops that too.
      await this.onLive(id, live, signal, () => reexecute(live, ctx.d.store.steps(id), -1, m.stepCount - 1, signal));
    } catch (e) {
      await session.close();
      throw e;
    }
    this.live.set(id, live);
    return live;
  }

  async scrub(id: number, idx: number, requestId?: string): Promise<{ detail: StepDetail; live: boolean; reexecuted: number }> {
    return this.cancellable(requestId, 'Moving to the step', (signal) =>
      this.exclusive(id, async () => {
        const m = this.ctx.meta(id);
        if (idx >= m.stepCount) throw new DomainError('invalid_input', `Episode ${id} has ${m.stepCount} steps; cannot scrub to ${idx}`);
        const detail = stepDetail(this.ctx, id, idx);
        const live = this.live.get(id);
        if (!live) return { detail, live: false, reexecuted: 0 };
        const reexecuted = await this.onLive(id, live, signal, () => moveTo(this.ctx, id, live, idx, signal));
        return { detail, live: true, reexecuted };
      }),
    );
  }

  /** When the session stands before the end of the recording, play continues in a fork. */
  private async forkIfBehind(id: number, signal?: AbortSignal): Promise<{ id: number; live: Live; forkedFrom: number | null }> {
    const live = await this.ensureLive(id, signal);
    stillWanted(signal);
    const m = this.ctx.meta(id);
    if (live.cursor >= m.stepCount - 1) return { id, live, forkedFrom: null };
    const fork = this.ctx.d.store.fork(id, live.cursor);
    this.live.delete(id);
    for (const k of [...live.snapshots.keys()]) if (k > live.cursor) live.snapshots.delete(k);
    this.live.set(fork, live);
    return { id: fork, live, forkedFrom: id };
  }

  private stepResult(id: number, idx: number, forkedFrom: number | null) {
    const m = this.ctx.meta(id);
    return { episode: summaryOf(m, this.cursor(id)), steps: this.ctx.d.store.viewsRange(m, idx, idx), detail: stepDetail(this.ctx, id, idx), forkedFrom };
  }

  async act(id: number, action: string, extract: boolean, toolUseHint?: boolean, requestId?: string) {
    return this.cancellable(requestId, 'The step', (signal) =>
      this.exclusive(id, async () => {
        const f = await this.forkIfBehind(id, signal);
        const raw = action;
        const toolUse = toolUseHint ?? this.ctx.meta(f.id).meta.toolUse === true;
        const act = extract ? extractAction(raw, { toolUse }) : raw;
        // play() with one action answers the step and the state in one interpreter round trip.
        const [rec] = await this.onLive(f.id, f.live, signal, () => f.live.session.play(f.live.cursor + 1, [act], { stopWhenDone: false, rawActions: [act === raw ? null : raw] }));
        if (!rec) throw new Error('the runtime returned no step');
        await recordStep(this.ctx, f.id, f.live, rec, rec.state ?? undefined);
        this.ctx.d.changed?.([f.id]);
        return this.stepResult(f.id, rec.idx, f.forkedFrom);
      }),
    );
  }

  /**
   * A policy turn that decides its own action on the live session (a served model): `turn` plays at
   * most one agent turn and returns the steps it recorded and what to keep in the episode's meta.
   */
  async policyTurn(id: number, turn: PolicyTurn, requestId?: string) {
    return this.cancellable(requestId, 'The model turn', (signal) =>
      this.exclusive(id, async () => {
        const store = this.ctx.d.store;
        const f = await this.forkIfBehind(id, signal);
        const m = this.ctx.meta(f.id);
        // Cancel drops the model's request; a turn already stepping the game has its interpreter stopped.
        const r = await this.onLive(f.id, f.live, signal, () => turn(f.live.session, store.steps(f.id), m, signal));
        if (r.steps.length) {
          store.appendSteps(f.id, r.steps);
          f.live.cursor = r.steps.at(-1)!.idx;
        }
        store.setMeta(f.id, r.meta);
        this.ctx.d.changed?.([f.id]);
        return { ...this.view(f.id), forkedFrom: f.forkedFrom, ended: r.ended };
      }),
    );
  }

  async resetAgain(id: number, seed: number | null | undefined, requestId?: string) {
    return this.cancellable(requestId, 'The reset', (signal) =>
      this.exclusive(id, async () => {
        const f = await this.forkIfBehind(id, signal);
        const m = this.ctx.meta(f.id);
        const s = seed === undefined ? m.seed : seed;
        const rec = await this.onLive(f.id, f.live, signal, () => f.live.session.reset(f.live.cursor + 1, s));
        await recordStep(this.ctx, f.id, f.live, rec);
        this.ctx.d.changed?.([f.id]);
        return this.stepResult(f.id, rec.idx, f.forkedFrom);
      }),
    );
  }

  async run(id: number, policy: Policy, until: Until, maxSteps: number, requestId?: string) {
    return this.cancellable(requestId, 'The run', (signal) =>
      this.exclusive(id, async () => {
        const f = await this.forkIfBehind(id, signal);
        const stopped = await this.onLive(f.id, f.live, signal, () => runPolicy(this.ctx, f.id, f.live, policy, until, maxSteps, signal));
        this.ctx.d.changed?.([f.id]);
        return { ...this.view(f.id), forkedFrom: f.forkedFrom, stoppedBecause: stopped };
      }),
    );
  }

  async close(id: number): Promise<boolean> {
    return this.exclusive(id, async () => {
      const l = this.live.get(id);
      if (!l) return false;
      this.live.delete(id);
      await l.session.close();
      return true;
    });
  }

  async closeAll(): Promise<void> {
    const all = [...this.live.values()];
    this.live.clear();
    await Promise.all(all.map((l) => l.session.close()));
  }
}
