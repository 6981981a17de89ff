/**
 * Episodes: playing an environment version with a recording of every step, scrubbing the live
 * session to any recorded step (snapshot + re-execution), replaying with first-divergence
 * detection, trajectory import, JSONL exchange and the with/without-hint regret runs.
 *
 * A live episode owns one runtime session. After an app restart nothing is live; the first
 * action or scrub re-executes the recording in a fresh session (that is what "self-sufficient" buys).
 */
import { DomainError } from '../errors';
import type { EpisodeSummary, Policy, ReplayReport, StepDetail, StepView } from '../api/calls/episodes';
import { EpisodeContext, type EpisodeDeps, type PlayMode, type RuntimeChoice, type RuntimeKind } from './context';
import { extractAction } from './extract';
import { injectHint } from './hint';
import { importTrajectories } from './importer';
import { episodeLine, readEpisodeLines } from './jsonl';
import { actionSourceFor, describePolicy, feedFromSource, scriptedPlayer } from './policy';
import { replayEpisode } from './replay';
import { regretJobs, runJobs, summarize, type JobResult, type Player, type RunControl } from './regret';
import { planOf, playPlan } from './rollout';
import { EnvSession, modeOf } from './session';
import { diffLines, diffStates, type StateTree } from './stateDiff';
import { toViews, type EpisodeFilter, type EpisodeMeta, type StepRecord } from './store';
import { evaluate, parseCondition } from './until';

export type { EpisodeDeps, RuntimeKind } from './context';

/** Cancel came: nothing more is recorded, and the call answers `cancelled` (see cancellable). */
function wanted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new DomainError('cancelled', 'cancelled');
}

/** A snapshot every this many steps bounds a scrub to that many re-executed steps. */
export const SNAPSHOT_EVERY = 16;
const CHUNK = SNAPSHOT_EVERY;

interface Live {
  session: EnvSession;
  cursor: number;
  snapshots: Map<number, string>;
  runtime: RuntimeKind;
  /** Re-opened sessions are made the same way, or re-execution would not reproduce the recording. */
  mode: PlayMode;
}

type Until = { kind: 'done' } | { kind: 'reward' } | { kind: 'expr'; expr: string } | { kind: 'steps'; count: number };

export class EpisodeService {
  private readonly live = new Map<number, Live>();
  readonly ctx: EpisodeContext;
  private readonly d: EpisodeDeps;
  /** One operation per episode at a time: steps must reach the interpreter in order. */
  private readonly locks = new Map<number, Promise<unknown>>();

  constructor(d: EpisodeDeps) {
    this.d = d;
    this.ctx = new EpisodeContext(d);
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

  // ------------------------------------------------------------------ reading

  summary(m: EpisodeMeta): EpisodeSummary {
    const l = this.live.get(m.id);
    return { ...m, live: !!l, cursor: l ? l.cursor : null };
  }

  meta(id: number): EpisodeMeta {
    return this.ctx.meta(id);
  }

  list(opts: EpisodeFilter & { limit: number; offset: number }) {
    const r = this.d.store.list(opts);
    return { total: r.total, rows: r.rows.map((m) => this.summary(m)), facets: this.d.store.facets() };
  }

  get(id: number): { episode: EpisodeSummary; steps: StepView[] } {
    const m = this.meta(id);
    return { episode: this.summary(m), steps: toViews(m, this.d.store.steps(id)) };
  }

  inspect(id: number, idx: number): StepDetail {
    const m = this.meta(id);
    const cur = this.d.store.step(id, idx);
    if (!cur) throw new DomainError('not_found', `Episode ${id} has no step ${idx} (it has ${m.stepCount})`);
    const prev = idx > 0 ? this.d.store.step(id, idx - 1) : null;
    const view = this.d.store.viewsRange(m, idx, idx)[0]!;
    const ref = cur.kind === 'reset' ? this.sameSeedReset(m, cur) : null;
    return {
      step: view,
      state: cur.state ?? null,
      changes: prev ? diffStates(prev.state as StateTree, cur.state as StateTree) : [],
      changesFromSameSeedReset: ref ? diffStates(ref.record.state as StateTree, cur.state as StateTree) : null,
      comparedReset: ref?.at ?? null,
      observationDiff: prev && prev.observation !== null && cur.observation !== null ? diffLines(prev.observation, cur.observation) : [],
    };
  }

  /**
   * What a reset is compared with to show leaking state, like with like: the latest earlier reset
   * with the same seed in this episode, else the reference reset the episode was opened against
   * (a fresh instance's reset with that seed, as the audit's reset-leak check compares).
   */
  private sameSeedReset(m: EpisodeMeta, cur: StepRecord): { record: StepRecord; at: NonNullable<StepDetail['comparedReset']> } | null {
    const earlier = this.d.store
      .steps(m.id)
      .filter((s) => s.kind === 'reset' && s.idx < cur.idx && s.seed === cur.seed)
      .at(-1);
    if (earlier) {
      const record = this.d.store.step(m.id, earlier.idx);
      if (record) return { record, at: { episodeId: m.id, idx: earlier.idx, seed: cur.seed, sameEpisode: true } };
    }
    const r = m.meta.resetReference as { episodeId?: unknown; idx?: unknown } | undefined;
    if (!r || typeof r.episodeId !== 'number' || typeof r.idx !== 'number') return null;
    const record = this.d.store.step(r.episodeId, r.idx);
    if (!record || record.kind !== 'reset' || record.seed !== cur.seed) return null;
    return { record, at: { episodeId: r.episodeId, idx: r.idx, seed: cur.seed, sameEpisode: false } };
  }

  // ------------------------------------------------------------------ sessions

  private env(hash: string) {
    return this.ctx.env(hash);
  }

  private async openSession(source: string, maxTurns: number, runtime: RuntimeChoice, mode: PlayMode, signal?: AbortSignal): Promise<EnvSession> {
    return this.ctx.openSession(source, maxTurns, runtime, false, mode, signal);
  }

  /** Episode work a person can cancel (open, step, run, replay), by the id their caller chose. */
  private readonly requests = new Map<string, AbortController>();

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
  private async cancellable<T>(requestId: string | undefined, what: string, fn: (signal?: AbortSignal) => Promise<T>): Promise<T> {
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
    const stop = () => void this.d.runtime.interrupt?.(live.session.id);
    signal.addEventListener('abort', stop, { once: true });
    try {
      const r = await fn();
      wanted(signal);
      return r;
    } catch (e) {
      if (signal.aborted) {
        if (this.live.get(id) === live) this.live.delete(id);
        await live.session.close().catch(() => {});
        // Lists show whether an episode is live.
        this.d.changed?.([id]);
      }
      throw e;
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }

  async open(input: {
    hash: string;
    seed: number | null;
    hint: boolean;
    hintText?: string | undefined;
    maxTurns?: number | undefined;
    runtime?: RuntimeChoice | undefined;
    label: string;
    resetReference?: { episodeId: number; idx: number } | undefined;
    mode?: PlayMode | undefined;
    requestId?: string | undefined;
  }) {
    return this.cancellable(input.requestId, 'Opening the episode', (signal) => this.openNow(input, signal));
  }

  private async openNow(
    input: { hash: string; seed: number | null; hint: boolean; hintText?: string | undefined; maxTurns?: number | undefined; runtime?: RuntimeChoice | undefined; label: string; resetReference?: { episodeId: number; idx: number } | undefined; mode?: PlayMode | undefined },
    signal?: AbortSignal,
  ) {
    const env = this.env(input.hash);
    const mode: PlayMode = input.mode ?? 'spade';
    const defaults = this.d.defaults();
    const runtime: RuntimeChoice = input.runtime ?? 'auto';
    const maxTurns = input.maxTurns ?? defaults.maxTurns;
    const hintText = input.hintText ?? env.hint;
    if (input.hint && !hintText) throw new DomainError('invalid_input', 'This environment has no hint; give one in hintText to play with a hint');
    const session = await this.openSession(env.source, maxTurns, runtime, mode, signal);
    // Cancel after the load: the session is closed (below) before anything is recorded.
    const stillWanted = () => {
      if (signal?.aborted) throw new DomainError('cancelled', 'Opening the episode was cancelled');
    };
    try {
      stillWanted();
      const reset = await session.reset(0, input.seed);
      stillWanted();
      const state = await session.state();
      stillWanted();
      const id = this.d.store.create({
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
      this.d.store.appendSteps(id, [{ ...reset, state }]);
      const live: Live = { session, cursor: 0, snapshots: new Map(), runtime: session.info.runtime, mode };
      const snap = await session.snapshot();
      if (snap) live.snapshots.set(0, snap);
      this.live.set(id, live);
      this.d.changed?.([id]);
      return this.get(id);
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
    const m = this.meta(id);
    const env = this.env(m.envHash);
    const runtime: RuntimeKind = m.runtime === 'cpython' ? 'cpython' : 'pyodide';
    const mode = modeOf(m.meta);
    const session = await this.openSession(env.source, m.maxTurns, runtime, mode, signal);
    const live: Live = { session, cursor: -1, snapshots: new Map(), runtime, mode };
    try {
      // Reopening a recording re-executes every step: Cancel stops that too.
      await this.onLive(id, live, signal, () => this.reexecute(live, this.d.store.steps(id), -1, m.stepCount - 1, signal));
    } catch (e) {
      await session.close();
      throw e;
    }
    this.live.set(id, live);
    return live;
  }

  /** Brings the session from step `from` (already applied) to step `to` by re-executing recorded steps, snapshotting on the way. */
  private async reexecute(live: Live, steps: StepRecord[], from: number, to: number, signal?: AbortSignal): Promise<number> {
    if (to <= from) {
      live.cursor = to;
      return 0;
    }
    const r = await playPlan(live.session, planOf(steps, from + 1, to), {
      firstIdx: from + 1,
      batch: CHUNK,
      stopWhenDone: false,
      maxSteps: Number.MAX_SAFE_INTEGER,
      afterBatch: async (_kept, cursor) => {
        wanted(signal);
        live.cursor = cursor;
        if (cursor % SNAPSHOT_EVERY === 0 && !live.snapshots.has(cursor)) {
          const t = await live.session.snapshot();
          if (t) live.snapshots.set(cursor, t);
        }
      },
    });
    live.cursor = to;
    return r.steps.length;
  }

  /** Moves the live session to step idx: restore the nearest snapshot at or before it, re-execute the rest. */
  private async moveTo(id: number, live: Live, idx: number, signal?: AbortSignal): Promise<number> {
    if (live.cursor === idx) return 0;
    const steps = this.d.store.steps(id);
    let base = -1;
    for (const k of live.snapshots.keys()) if (k <= idx && k > base) base = k;
    if (live.cursor < idx && live.cursor > base) return this.reexecute(live, steps, live.cursor, idx, signal);
    if (base < 0) {
      // No usable snapshot (state not copyable): start over in a fresh session.
      const m = this.meta(id);
      await live.session.close();
      live.session = await this.openSession(this.env(m.envHash).source, m.maxTurns, live.runtime, live.mode, signal);
      live.snapshots.clear();
      return this.reexecute(live, steps, -1, idx, signal);
    }
    await live.session.restore(live.snapshots.get(base)!);
    live.cursor = base;
    return this.reexecute(live, steps, base, idx, signal);
  }

  async scrub(id: number, idx: number, requestId?: string): Promise<{ detail: StepDetail; live: boolean; reexecuted: number }> {
    return this.cancellable(requestId, 'Moving to the step', (signal) =>
      this.exclusive(id, async () => {
        const m = this.meta(id);
        if (idx >= m.stepCount) throw new DomainError('invalid_input', `Episode ${id} has ${m.stepCount} steps; cannot scrub to ${idx}`);
        const detail = this.inspect(id, idx);
        const live = this.live.get(id);
        if (!live) return { detail, live: false, reexecuted: 0 };
        const reexecuted = await this.onLive(id, live, signal, () => this.moveTo(id, live, idx, signal));
        return { detail, live: true, reexecuted };
      }),
    );
  }

  /** When the session stands before the end of the recording, play continues in a fork. */
  private async forkIfBehind(id: number, signal?: AbortSignal): Promise<{ id: number; live: Live; forkedFrom: number | null }> {
    const live = await this.ensureLive(id, signal);
    wanted(signal);
    const m = this.meta(id);
    if (live.cursor >= m.stepCount - 1) return { id, live, forkedFrom: null };
    const fork = this.d.store.fork(id, live.cursor);
    this.live.delete(id);
    for (const k of [...live.snapshots.keys()]) if (k > live.cursor) live.snapshots.delete(k);
    this.live.set(fork, live);
    return { id: fork, live, forkedFrom: id };
  }

  private async record(id: number, live: Live, rec: Omit<StepRecord, 'state'>, known?: unknown): Promise<StepRecord> {
    const state = known !== undefined ? known : await live.session.state();
    const full = { ...rec, state };
    this.d.store.appendSteps(id, [full]);
    live.cursor = rec.idx;
    if (rec.idx % SNAPSHOT_EVERY === 0 || rec.kind === 'reset') {
      const t = await live.session.snapshot();
      if (t) live.snapshots.set(rec.idx, t);
    }
    return full;
  }

  async act(id: number, action: string, extract: boolean, toolUseHint?: boolean, requestId?: string) {
    return this.cancellable(requestId, 'The step', (signal) =>
      this.exclusive(id, async () => {
        const f = await this.forkIfBehind(id, signal);
        const raw = action;
        const toolUse = toolUseHint ?? this.meta(f.id).meta.toolUse === true;
        const act = extract ? extractAction(raw, { toolUse }) : raw;
        // play() with one action answers the step and the state in one interpreter round trip.
        const [rec] = await this.onLive(f.id, f.live, signal, () => f.live.session.play(f.live.cursor + 1, [act], { stopWhenDone: false, rawActions: [act === raw ? null : raw] }));
        if (!rec) throw new Error('the runtime returned no step');
        await this.record(f.id, f.live, rec, rec.state ?? undefined);
        this.d.changed?.([f.id]);
        return this.stepResult(f.id, rec.idx, f.forkedFrom);
      }),
    );
  }

  /**
   * A policy turn that decides its own action on the live session (a served model): `turn` plays at
   * most one agent turn and returns the steps it recorded and what to keep in the episode's meta.
   */
  async policyTurn(id: number, turn: (session: EnvSession, steps: StepRecord[], meta: EpisodeMeta) => Promise<{ steps: StepRecord[]; meta: Record<string, unknown>; ended: string | null }>) {
    return this.exclusive(id, async () => {
      const f = await this.forkIfBehind(id);
      const m = this.meta(f.id);
      const r = await turn(f.live.session, this.d.store.steps(f.id), m);
      if (r.steps.length) {
        this.d.store.appendSteps(f.id, r.steps);
        f.live.cursor = r.steps.at(-1)!.idx;
      }
      this.d.store.setMeta(f.id, r.meta);
      this.d.changed?.([f.id]);
      return { ...this.get(f.id), forkedFrom: f.forkedFrom, ended: r.ended };
    });
  }

  private stepResult(id: number, idx: number, forkedFrom: number | null) {
    const m = this.meta(id);
    return { episode: this.summary(m), steps: this.d.store.viewsRange(m, idx, idx), detail: this.inspect(id, idx), forkedFrom };
  }

  async resetAgain(id: number, seed: number | null | undefined, requestId?: string) {
    return this.cancellable(requestId, 'The reset', (signal) =>
      this.exclusive(id, async () => {
        const f = await this.forkIfBehind(id, signal);
        const m = this.meta(f.id);
        const s = seed === undefined ? m.seed : seed;
        const rec = await this.onLive(f.id, f.live, signal, () => f.live.session.reset(f.live.cursor + 1, s));
        await this.record(f.id, f.live, rec);
        this.d.changed?.([f.id]);
        return this.stepResult(f.id, rec.idx, f.forkedFrom);
      }),
    );
  }

  async run(id: number, policy: Policy, until: Until, maxSteps: number, requestId?: string) {
    return this.cancellable(requestId, 'The run', (signal) => this.exclusive(id, () => this.runNow(id, policy, until, maxSteps, signal)));
  }

  private async runNow(id: number, policy: Policy, until: Until, maxSteps: number, signal?: AbortSignal) {
    {
      const f = await this.forkIfBehind(id, signal);
      const m = this.meta(f.id);
      const cond = until.kind === 'expr' ? parseCondition(until.expr) : null;
      const src = await actionSourceFor(f.live.session, policy, m.seed, m.meta.toolUse === true);
      const start = f.live.cursor;
      // SPADE's rollout stops after the budget of agent turns: steps since the latest reset count.
      const recorded = this.d.store.steps(f.id);
      const lastReset = recorded.reduce((k, s) => (s.kind === 'reset' && s.idx <= start ? s.idx : k), 0);
      const used = recorded.filter((s) => s.kind === 'step' && s.idx > lastReset && s.idx <= start).length;
      const budgetLeft = Math.max(0, m.maxTurns - used);
      const r = await this.onLive(f.id, f.live, signal, () => playPlan(f.live.session, feedFromSource(src, m.meta.toolUse === true), {
        firstIdx: start + 1,
        batch: CHUNK,
        stopWhenDone: true,
        maxSteps: Math.min(maxSteps, budgetLeft),
        stopAt: (s, n) => {
          if (until.kind === 'reward' && (s.reward ?? 0) > 0) return 'reward > 0';
          if (cond && evaluate(cond, s.state as StateTree)) return `state: ${cond.text}`;
          if (until.kind === 'steps' && n >= until.count && !(s.spade?.terminated || s.spade?.truncated)) return `${until.count} steps`;
          return null;
        },
        beforeBatch: async (cursor) => {
          if (!f.live.snapshots.has(cursor)) {
            const t = await f.live.session.snapshot();
            if (t) f.live.snapshots.set(cursor, t);
          }
        },
        afterBatch: async (kept) => {
          // Steps recorded before Cancel stay; none after it.
          wanted(signal);
          this.d.store.appendSteps(f.id, kept);
        },
      }));
      f.live.cursor = start + r.steps.length + r.overshoot;
      // The interpreter went past the stop inside its batch: bring it back to the last recorded step.
      if (r.overshoot > 0) await this.moveTo(f.id, f.live, start + r.steps.length);
      const stopped = r.reason === 'budget' ? (budgetLeft <= maxSteps ? `budget of ${m.maxTurns} turns` : 'max steps') : r.reason;
      // Tool turns (a tool-use game's scripted tool calls, sent to execute_tool) are not steps: they
      // are kept where they happened, as a model episode keeps them, so replay puts them back.
      const agent = (m.meta.agent ?? {}) as { toolTurns?: unknown[] };
      const toolMeta = r.toolTurns.length ? { agent: { ...agent, toolTurns: [...(agent.toolTurns ?? []), ...r.toolTurns] } } : {};
      this.d.store.setDivergence(f.id, null, { policy: describePolicy(policy), ...toolMeta });
      this.d.changed?.([f.id]);
      return { ...this.get(f.id), forkedFrom: f.forkedFrom, stoppedBecause: stopped };
    }
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

  async delete(ids: number[]): Promise<number> {
    for (const id of ids) await this.close(id);
    const n = this.d.store.delete(ids);
    this.d.changed?.(ids);
    return n;
  }

  async closeAll(): Promise<void> {
    const all = [...this.live.values()];
    this.live.clear();
    await Promise.all(all.map((l) => l.session.close()));
  }

  // ------------------------------------------------------------------ replay, import, JSONL

  replay(id: number, opts: { runtime?: RuntimeChoice | undefined; source?: string; requestId?: string | undefined } = {}): Promise<ReplayReport> {
    const { requestId, ...rest } = opts;
    return this.cancellable(requestId, 'The replay', (signal) => replayEpisode(this.ctx, id, { ...rest, ...(signal ? { signal } : {}) }));
  }

  importTrajectories(input: Parameters<typeof importTrajectories>[1] & { requestId?: string | undefined }) {
    const { requestId, ...rest } = input;
    return this.cancellable(requestId, 'The import', (signal) => importTrajectories(this.ctx, rest, signal));
  }

  exportJsonl(ids: number[]): { text: string; count: number } {
    const lines = ids.map((id) => {
      const m = this.meta(id);
      return episodeLine(m, this.d.catalog.byHash(m.envHash)?.source ?? null, this.d.store.steps(id, true));
    });
    return { text: lines.join('\n') + (lines.length ? '\n' : ''), count: lines.length };
  }

  importJsonl(text: string): { ids: number[]; skipped: { line: number; reason: string }[] } {
    const ids: number[] = [];
    const skipped: { line: number; reason: string }[] = [];
    for (const { line, parsed: r } of readEpisodeLines(text)) {
      if (typeof r === 'string') {
        skipped.push({ line, reason: r });
        continue;
      }
      let hash = r.envHash;
      if (r.source) {
        const added = this.d.catalog.add(r.source, r.className, `episode import line ${line}`);
        if (hash && added !== hash) {
          skipped.push({ line, reason: `the source's SHA-256 (${added.slice(0, 12)}) does not match envHash (${hash.slice(0, 12)})` });
          continue;
        }
        hash = added;
      }
      const id = this.d.store.create({ ...r, envHash: hash, origin: r.origin, meta: { ...r.meta, importedFrom: 'jsonl' } });
      this.d.store.appendSteps(id, r.steps);
      ids.push(id);
    }
    this.d.changed?.(ids);
    return { ids, skipped };
  }

  // ------------------------------------------------------------------ regret

  /** Regret runs in progress, by runId: cancel flag and the abort for in-flight model turns. */
  private readonly regretRuns = new Map<string, RunControl>();

  /**
   * SPADE's hint-based regret over N seeds of one environment with a scripted policy or a player
   * (a served model). A runId makes it cancellable and resumable: a second call with the same
   * runId plays only the episodes not yet recorded.
   */
  async regret(input: { hash: string; seeds: number; seedStart: number; policy?: Policy | undefined; hintPolicy?: Policy | undefined; player?: Player; hintText?: string | undefined; maxTurns?: number | undefined; runtime?: RuntimeKind | undefined; runId?: string | undefined; concurrency?: number | undefined }) {
    const env = this.env(input.hash);
    const hintText = input.hintText ?? env.hint;
    const r = await this.regretMany({ ...input, hashes: [input.hash], hintFor: () => hintText });
    const one = r.envs[0]!;
    return { withHint: one.withHint, withoutHint: one.withoutHint, regret: one.regret, hintText: hintText ?? null, cancelled: r.cancelled };
  }

  /** Regret over several environments (a library selection): per environment, SPADE's arithmetic. */
  async regretMany(input: { hashes: string[]; seeds: number; seedStart: number; policy?: Policy | undefined; hintPolicy?: Policy | undefined; player?: Player; hintFor?(hash: string): string | null | undefined; maxTurns?: number | undefined; runtime?: RuntimeKind | undefined; runId?: string | undefined; concurrency?: number | undefined; arms?: ('hint' | 'nohint')[]; progress?(done: number, total: number): void; recorded?(r: JobResult): void }) {
    const player = input.player ?? (input.policy ? scriptedPlayer(input.policy, input.hintPolicy) : null);
    if (!player) throw new DomainError('invalid_input', 'A regret run needs a policy');
    const budget = input.maxTurns ?? this.d.defaults().maxTurns;
    const hintFor = (h: string): string | null => (input.hintFor ? input.hintFor(h) : undefined) ?? this.env(h).hint;
    for (const h of input.hashes) this.env(h);
    const runId = input.runId ?? `run-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    if (this.regretRuns.has(runId)) throw new DomainError('conflict', `A regret run ${runId} is already running`);
    const control: RunControl = { cancel: false, abort: new AbortController() };
    this.regretRuns.set(runId, control);
    // Environments without a hint play only their unhinted arm; their regret is 0 (SPADE: hint generation failed).
    const jobs = input.hashes.flatMap((h) => regretJobs([h], input.seeds, input.seedStart, hintFor(h) === null ? ['nohint'] : (input.arms ?? ['hint', 'nohint'])));
    const started = performance.now();
    let firstDone: number | null = null;
    try {
      const { results, cancelled } = await runJobs(this.ctx, {
        runId,
        jobs,
        player,
        concurrency: input.concurrency ?? 1,
        budget,
        runtime: input.runtime ?? 'auto',
        hintFor,
        control,
        ...(input.recorded ? { recorded: input.recorded } : {}),
        progress: (done, total, last) => {
          if (!last) {
            firstDone = done;
            return;
          }
          input.progress?.(done, total);
          const fresh = done - (firstDone ?? 0);
          const per = fresh > 0 ? (performance.now() - started) / 1000 / fresh : null;
          if (input.runId !== undefined) this.d.regretProgress?.({ runId, done, total, etaSec: per === null ? null : (total - done) * per });
        },
      });
      const envs = input.hashes.map((h) => ({ hash: h, name: this.env(h).name, hintFailed: hintFor(h) === null, ...summarize(results, h, hintFor(h) === null) }));
      return { runId, envs, cancelled, episodes: results };
    } finally {
      this.regretRuns.delete(runId);
    }
  }

  /** Asks a running regret run to stop: no new episode starts, in-flight model turns are aborted. */
  regretCancel(runId: string): boolean {
    const run = this.regretRuns.get(runId);
    if (!run) return false;
    run.cancel = true;
    run.abort.abort();
    return true;
  }

  /** The hinted first observation as SPADE builds it, for callers that show it without a recording. */
  static hinted(observation: string, hint: string): string {
    return injectHint(observation, hint);
  }
}
