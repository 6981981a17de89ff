/**
 * Episodes: playing an environment version with a recording of every step, scrubbing the live
 * session to any recorded step (snapshot + re-execution), replaying with first-divergence
 * detection, trajectory import, JSONL exchange and the with/without-hint regret runs.
 *
 * A live episode owns one runtime session. After an app restart nothing is live; the first
 * action or scrub re-executes the recording in a fresh session (that is what "self-sufficient" buys).
 */
import { ApiError } from '../api/errors';
import type { Divergence, EpisodeSummary, Policy, ReplayReport, StepDetail, StepView } from '../api/calls/episodes';
import type { EnvCatalog, EnvSourceInfo } from './catalog';
import { extractAction } from './extract';
import { injectHint } from './hint';
import { describePolicy, randomSource, scriptSource, solutionActions, type ActionSource } from './policy';
import { EnvSession, type RuntimePort } from './session';
import { diffLines, diffStates, type StateTree } from './stateDiff';
import { EpisodeStore, toViews, type EpisodeMeta, type StepRecord } from './store';
import { candidateStems, parseTrajectories, type Trajectory } from './trajectory';
import { evaluate, parseCondition } from './until';

export type RuntimeKind = 'pyodide' | 'cpython';
type RuntimeChoice = RuntimeKind | 'auto';

export interface EpisodeDeps {
  store: EpisodeStore;
  catalog: EnvCatalog;
  runtime: RuntimePort;
  defaults(): { maxTurns: number };
  changed?(ids: number[]): void;
  /** A regret run that has a runId finished one more episode. */
  regretProgress?(p: { runId: string; done: number; total: number; etaSec: number | null }): void;
}

/** A snapshot every this many steps bounds a scrub to that many re-executed steps. */
export const SNAPSHOT_EVERY = 16;
const CHUNK = SNAPSHOT_EVERY;
const FRESH_SEED_TRIES = 64;
const MAX_CONFIRMATIONS = 20;

interface Live {
  session: EnvSession;
  cursor: number;
  snapshots: Map<number, string>;
  runtime: RuntimeKind;
}

type Until = { kind: 'done' } | { kind: 'reward' } | { kind: 'expr'; expr: string } | { kind: 'steps'; count: number };

export class EpisodeService {
  private readonly live = new Map<number, Live>();
  /** One operation per episode at a time: steps must reach the interpreter in order. */
  private readonly locks = new Map<number, Promise<unknown>>();

  constructor(private readonly d: EpisodeDeps) {}

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
    const m = this.d.store.meta(id);
    if (!m) throw new ApiError('not_found', `No episode ${id}`);
    return m;
  }

  list(opts: { envHash?: string | undefined; origin?: EpisodeMeta['origin'] | undefined; limit: number; offset: number }) {
    const r = this.d.store.list(opts);
    return { total: r.total, rows: r.rows.map((m) => this.summary(m)) };
  }

  get(id: number): { episode: EpisodeSummary; steps: StepView[] } {
    const m = this.meta(id);
    return { episode: this.summary(m), steps: toViews(m, this.d.store.steps(id)) };
  }

  inspect(id: number, idx: number): StepDetail {
    const m = this.meta(id);
    const cur = this.d.store.step(id, idx);
    if (!cur) throw new ApiError('not_found', `Episode ${id} has no step ${idx} (it has ${m.stepCount})`);
    const prev = idx > 0 ? this.d.store.step(id, idx - 1) : null;
    const view = this.d.store.viewsRange(m, idx, idx)[0]!;
    let fromFirst: StepDetail['changesFromFirstReset'] = null;
    if (cur.kind === 'reset' && idx > 0) {
      const first = this.d.store.step(id, 0);
      if (first) fromFirst = diffStates(first.state as StateTree, cur.state as StateTree);
    }
    return {
      step: view,
      state: cur.state ?? null,
      changes: prev ? diffStates(prev.state as StateTree, cur.state as StateTree) : [],
      changesFromFirstReset: fromFirst,
      observationDiff: prev && prev.observation !== null && cur.observation !== null ? diffLines(prev.observation, cur.observation) : [],
    };
  }

  // ------------------------------------------------------------------ sessions

  private env(hash: string): EnvSourceInfo {
    const env = this.d.catalog.byHash(hash);
    if (!env) throw new ApiError('not_found', `No environment version ${hash.slice(0, 12)} in the library`);
    return env;
  }

  private async openSession(source: string, maxTurns: number, runtime: RuntimeKind | 'auto'): Promise<EnvSession> {
    return EnvSession.open(this.d.runtime, source, { maxTurns, runtime });
  }

  async open(input: { hash: string; seed: number | null; hint: boolean; hintText?: string | undefined; maxTurns?: number | undefined; runtime?: RuntimeKind | undefined; label: string }) {
    const env = this.env(input.hash);
    const defaults = this.d.defaults();
    const runtime: RuntimeChoice = input.runtime ?? 'auto';
    const maxTurns = input.maxTurns ?? defaults.maxTurns;
    const hintText = input.hintText ?? env.hint;
    if (input.hint && !hintText) throw new ApiError('invalid_input', 'This environment has no hint; give one in hintText to play with a hint');
    const session = await this.openSession(env.source, maxTurns, runtime);
    try {
      const reset = await session.reset(0, input.seed);
      const state = await session.state();
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
        meta: { toolUse: session.info.toolUse, hasSolution: session.info.hasSolution, effectiveMaxTurns: session.info.maxTurns },
      });
      this.d.store.appendSteps(id, [{ ...reset, state }]);
      const live: Live = { session, cursor: 0, snapshots: new Map(), runtime: session.info.runtime };
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
  private async ensureLive(id: number): Promise<Live> {
    const existing = this.live.get(id);
    if (existing && !existing.session.gone) return existing;
    if (existing) this.live.delete(id);
    const m = this.meta(id);
    const env = this.env(m.envHash);
    const runtime: RuntimeKind = m.runtime === 'cpython' ? 'cpython' : 'pyodide';
    const session = await this.openSession(env.source, m.maxTurns, runtime);
    const live: Live = { session, cursor: -1, snapshots: new Map(), runtime };
    try {
      await this.reexecute(live, this.d.store.steps(id), -1, m.stepCount - 1);
    } catch (e) {
      await session.close();
      throw e;
    }
    this.live.set(id, live);
    return live;
  }

  /** Brings the session from step `from` (already applied) to step `to` by re-executing recorded steps, snapshotting on the way. */
  private async reexecute(live: Live, steps: StepRecord[], from: number, to: number): Promise<number> {
    let i = from + 1;
    let count = 0;
    while (i <= to) {
      const s = steps[i];
      if (!s) throw new ApiError('internal', `recording has no step ${i}`);
      if (s.kind === 'reset') {
        await live.session.reset(i, s.seed);
        i++;
        count++;
      } else {
        const batch: string[] = [];
        while (i + batch.length <= to && steps[i + batch.length]?.kind === 'step' && batch.length < CHUNK) batch.push(steps[i + batch.length]!.action ?? '');
        await live.session.play(i, batch, { stopWhenDone: false });
        i += batch.length;
        count += batch.length;
      }
      live.cursor = i - 1;
      if (live.cursor % SNAPSHOT_EVERY === 0 && !live.snapshots.has(live.cursor)) {
        const t = await live.session.snapshot();
        if (t) live.snapshots.set(live.cursor, t);
      }
    }
    live.cursor = to;
    return count;
  }

  /** Moves the live session to step idx: restore the nearest snapshot at or before it, re-execute the rest. */
  private async moveTo(id: number, live: Live, idx: number): Promise<number> {
    if (live.cursor === idx) return 0;
    const steps = this.d.store.steps(id);
    let base = -1;
    for (const k of live.snapshots.keys()) if (k <= idx && k > base) base = k;
    if (live.cursor < idx && live.cursor > base) return this.reexecute(live, steps, live.cursor, idx);
    if (base < 0) {
      // No usable snapshot (state not copyable): start over in a fresh session.
      const m = this.meta(id);
      await live.session.close();
      live.session = await this.openSession(this.env(m.envHash).source, m.maxTurns, live.runtime);
      live.snapshots.clear();
      return this.reexecute(live, steps, -1, idx);
    }
    await live.session.restore(live.snapshots.get(base)!);
    live.cursor = base;
    return this.reexecute(live, steps, base, idx);
  }

  async scrub(id: number, idx: number): Promise<{ detail: StepDetail; live: boolean; reexecuted: number }> {
    return this.exclusive(id, async () => {
      const m = this.meta(id);
      if (idx >= m.stepCount) throw new ApiError('invalid_input', `Episode ${id} has ${m.stepCount} steps; cannot scrub to ${idx}`);
      const detail = this.inspect(id, idx);
      const live = this.live.get(id);
      if (!live) return { detail, live: false, reexecuted: 0 };
      const reexecuted = await this.moveTo(id, live, idx);
      return { detail, live: true, reexecuted };
    });
  }

  /** When the session stands before the end of the recording, play continues in a fork. */
  private async forkIfBehind(id: number): Promise<{ id: number; live: Live; forkedFrom: number | null }> {
    const live = await this.ensureLive(id);
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

  async act(id: number, action: string, extract: boolean, toolUseHint?: boolean) {
    return this.exclusive(id, async () => {
      const f = await this.forkIfBehind(id);
      const raw = action;
      const toolUse = toolUseHint ?? this.meta(f.id).meta.toolUse === true;
      const act = extract ? extractAction(raw, { toolUse }) : raw;
      // play() with one action answers the step and the state in one interpreter round trip.
      const [rec] = await f.live.session.play(f.live.cursor + 1, [act], { stopWhenDone: false, rawActions: [act === raw ? null : raw] });
      if (!rec) throw new ApiError('internal', 'the runtime returned no step');
      await this.record(f.id, f.live, rec, rec.state ?? undefined);
      this.d.changed?.([f.id]);
      return this.stepResult(f.id, rec.idx, f.forkedFrom);
    });
  }

  private stepResult(id: number, idx: number, forkedFrom: number | null) {
    const m = this.meta(id);
    return { episode: this.summary(m), steps: this.d.store.viewsRange(m, idx, idx), detail: this.inspect(id, idx), forkedFrom };
  }

  async resetAgain(id: number, seed: number | null | undefined) {
    return this.exclusive(id, async () => {
      const f = await this.forkIfBehind(id);
      const m = this.meta(f.id);
      const s = seed === undefined ? m.seed : seed;
      const rec = await f.live.session.reset(f.live.cursor + 1, s);
      await this.record(f.id, f.live, rec);
      this.d.changed?.([f.id]);
      return this.stepResult(f.id, rec.idx, f.forkedFrom);
    });
  }

  private async actionSource(live: Live, policy: Policy, seed: number | null, toolUse: boolean): Promise<ActionSource> {
    if (policy.kind === 'script') return scriptSource(policy.actions, policy.extract, toolUse);
    if (policy.kind === 'random') return randomSource(policy.seed ?? seed ?? 0, policy.lo, policy.hi);
    const sol = await live.session.solution();
    if (!sol.ok) throw new ApiError('invalid_input', `solution() failed: ${sol.message}`);
    return scriptSource(solutionActions(sol.value), false, toolUse);
  }

  async run(id: number, policy: Policy, until: Until, maxSteps: number) {
    return this.exclusive(id, async () => {
      const f = await this.forkIfBehind(id);
      const m = this.meta(f.id);
      const cond = until.kind === 'expr' ? parseCondition(until.expr) : null;
      const src = await this.actionSource(f.live, policy, m.seed, m.meta.toolUse === true);
      let taken = 0;
      let stopped = 'max steps';
      outer: while (taken < maxSteps) {
        const start = f.live.cursor;
        if (!f.live.snapshots.has(start)) {
          const t = await f.live.session.snapshot();
          if (t) f.live.snapshots.set(start, t);
        }
        const actions: string[] = [];
        const raws: (string | null)[] = [];
        while (actions.length < CHUNK && taken + actions.length < maxSteps) {
          const n = src.next();
          if (!n) break;
          actions.push(n.action);
          raws.push(n.raw);
        }
        if (actions.length === 0) {
          stopped = 'policy ended';
          break;
        }
        const got = await f.live.session.play(start + 1, actions, { stopWhenDone: true, rawActions: raws });
        let keep = got.length;
        let reason: string | null = null;
        for (let j = 0; j < got.length; j++) {
          const s = got[j]!;
          const n = taken + j + 1;
          if (s.error) reason = 'error';
          else if (until.kind === 'reward' && (s.reward ?? 0) > 0) reason = 'reward > 0';
          else if (cond && evaluate(cond, s.state as StateTree)) reason = `state: ${cond.text}`;
          else if (s.terminated || s.truncated) reason = s.terminated ? 'terminated' : 'truncated';
          else if (until.kind === 'steps' && n >= until.count) reason = `${until.count} steps`;
          if (reason) {
            keep = j + 1;
            break;
          }
        }
        const kept = got.slice(0, keep);
        this.d.store.appendSteps(f.id, kept);
        taken += kept.length;
        const last = start + got.length;
        f.live.cursor = last;
        if (keep < got.length) await this.moveTo(f.id, f.live, start + keep);
        if (kept.length < actions.length && !reason) reason = 'done';
        if (reason) {
          stopped = reason;
          break outer;
        }
      }
      this.d.store.setDivergence(f.id, null, { policy: describePolicy(policy) });
      this.d.changed?.([f.id]);
      return { ...this.get(f.id), forkedFrom: f.forkedFrom, stoppedBecause: stopped };
    });
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

  // ------------------------------------------------------------------ replay

  /** Re-executes a recording in a fresh session, comparing step by step; the replay is kept as its own episode. */
  async replay(id: number, opts: { runtime?: RuntimeChoice | undefined; source?: string } = {}): Promise<ReplayReport> {
    const m = this.meta(id);
    const source = opts.source ?? this.env(m.envHash).source;
    const recorded = this.d.store.steps(id, true);
    const runtime: RuntimeChoice = opts.runtime ?? (m.runtime === 'cpython' ? 'cpython' : 'pyodide');
    const session = await this.openSession(source, m.maxTurns, runtime);
    const replayed: StepRecord[] = [];
    try {
      let i = 0;
      while (i < recorded.length) {
        const s = recorded[i]!;
        if (s.kind === 'reset') {
          const r = await session.reset(i, s.seed);
          replayed.push({ ...r, state: await session.state() });
          i++;
          continue;
        }
        const batch: StepRecord[] = [];
        while (i + batch.length < recorded.length && recorded[i + batch.length]!.kind === 'step' && batch.length < 256) batch.push(recorded[i + batch.length]!);
        const got = await session.play(i, batch.map((b) => b.action ?? ''), { stopWhenDone: false, rawActions: batch.map((b) => b.rawAction) });
        replayed.push(...got);
        i += batch.length;
        if (got.length < batch.length) break; // the harness stopped at an error: the rest cannot be compared
      }
    } finally {
      await session.close();
    }
    const flagsRecorded = m.meta.flagsRecorded !== false;
    let divergence: Divergence | null = null;
    for (let k = 0; k < recorded.length && !divergence; k++) {
      const a = recorded[k]!;
      const b = replayed[k];
      const fields: Divergence['fields'] = [];
      if (!b) fields.push('missing');
      else {
        if (a.observation !== null && a.observation !== b.observation) fields.push('observation');
        if (a.reward !== null && b.reward !== a.reward) fields.push('reward');
        if (flagsRecorded && a.kind === 'step' && a.terminated !== b.terminated) fields.push('terminated');
        if (flagsRecorded && a.kind === 'step' && a.truncated !== b.truncated) fields.push('truncated');
        if (flagsRecorded && !!a.error !== !!b.error) fields.push('error');
      }
      if (fields.length === 0) continue;
      const rView = toViews(m, recorded.slice(0, k + 1)).at(-1)!;
      const pView = b ? toViews(m, replayed.slice(0, k + 1)).at(-1)! : null;
      const stateChanges = b ? (a.state ? diffStates(a.state as StateTree, b.state as StateTree) : diffStates((replayed[k - 1]?.state ?? null) as StateTree, b.state as StateTree)) : [];
      divergence = {
        idx: k,
        fields,
        recorded: rView,
        replayed: pView,
        stateChanges,
        observationDiff: b && a.observation !== null && b.observation !== null ? diffLines(a.observation, b.observation) : [],
      };
    }
    const replayId = this.d.store.create({
      envHash: m.envHash,
      envName: m.envName,
      className: m.className,
      seed: m.seed,
      hintEnabled: m.hintEnabled,
      hintText: m.hintText,
      maxTurns: m.maxTurns,
      runtime: session.info.runtime,
      origin: 'replay',
      label: `replay of #${id}`,
      parentId: id,
      policy: { kind: 'replay', of: id },
      meta: { replayOf: id },
    });
    this.d.store.appendSteps(replayId, replayed);
    this.d.store.setDivergence(replayId, divergence?.idx ?? null);
    this.d.store.setDivergence(id, divergence?.idx ?? null, {
      lastReplay: replayId,
      divergenceFields: divergence?.fields ?? [],
      divergenceStateChanges: divergence?.stateChanges.slice(0, 100) ?? [],
    });
    this.d.changed?.([id, replayId]);
    return { episodeId: id, replayId, compared: Math.min(recorded.length, replayed.length), divergence };
  }

  // ------------------------------------------------------------------ trajectories

  private bind(t: Trajectory, fileName: string | undefined, envHash: string | undefined): { env: EnvSourceInfo; by: 'hash' | 'file' | 'given' } {
    if (envHash) return { env: this.env(envHash), by: 'given' };
    if (t.envHash) {
      const env = this.d.catalog.byHash(t.envHash);
      if (env) return { env, by: 'hash' };
    }
    for (const stem of candidateStems(t.gameFile, fileName)) {
      const env = this.d.catalog.byStem(stem);
      if (env) return { env, by: 'file' };
    }
    throw new ApiError(
      'not_found',
      `Trajectory ${t.index + 1}: cannot tell which environment it was played in (no known env_hash, and no game file name matches the library${t.gameFile ? `: ${t.gameFile}` : ''}); pass envHash`,
    );
  }

  /** Seeds 0..limit-1 until reset's first observation equals the recorded one (fresh session for each try is too slow; a leaky game is re-checked fresh). */
  async findSeed(
    source: string,
    maxTurns: number,
    runtime: RuntimeChoice,
    observation: string,
    limit: number,
    confirm?: (seed: number) => Promise<boolean>,
  ): Promise<{ seed: number | null; tried: number }> {
    const session = await this.openSession(source, maxTurns, runtime);
    // Several seeds can deal the same first observation (a game that shows only part of its state):
    // with `confirm`, a candidate must also reproduce the rest of the recording; else the first one wins.
    let fallback: { seed: number; tried: number } | null = null;
    let confirmed = 0;
    try {
      for (let s = 0; s < limit; s++) {
        const r = await session.reset(0, s);
        if (r.observation !== observation) continue;
        if (!confirm) return { seed: s, tried: s + 1 };
        fallback ??= { seed: s, tried: s + 1 };
        if (await confirm(s)) return { seed: s, tried: s + 1 };
        if (++confirmed >= MAX_CONFIRMATIONS) return fallback;
      }
    } finally {
      await session.close();
    }
    if (fallback) return { ...fallback, tried: limit };
    // A game that leaks state across reset deals differently on a reused instance: try the
    // first seeds again, each on a fresh instance (slower, so bounded more tightly).
    const fresh = Math.min(limit, FRESH_SEED_TRIES);
    for (let s = 0; s < fresh; s++) {
      const one = await this.openSession(source, maxTurns, runtime);
      try {
        const r = await one.reset(0, s);
        if (r.observation === observation) return { seed: s, tried: limit + s + 1 };
      } finally {
        await one.close();
      }
    }
    return { seed: null, tried: limit + fresh };
  }

  /** Whether a seed reproduces every recorded observation and reward of a trajectory. */
  private async agrees(source: string, maxTurns: number, runtime: RuntimeChoice, seed: number, t: Trajectory): Promise<boolean> {
    const session = await this.openSession(source, maxTurns, runtime);
    try {
      const r = await session.reset(0, seed);
      if (r.observation !== t.initialObservation) return false;
      const got = await session.play(1, t.steps.map((x) => x.action), { stopWhenDone: false });
      return t.steps.every((x, i) => {
        const g = got[i];
        if (!g) return false;
        return (x.observation === null || x.observation === g.observation) && (x.reward === null || x.reward === g.reward);
      });
    } finally {
      await session.close();
    }
  }

  async importTrajectories(input: { text: string; fileName?: string | undefined; envHash?: string | undefined; seed?: number | undefined; seedSearchLimit: number; thinking?: boolean | undefined; runtime?: RuntimeChoice | undefined }) {
    const trajs = parseTrajectories(input.text, input.thinking);
    const defaults = this.d.defaults();
    const runtime: RuntimeChoice = input.runtime ?? 'auto';
    const results = [];
    for (const t of trajs) {
      const { env, by } = this.bind(t, input.fileName, input.envHash);
      const maxTurns = defaults.maxTurns;
      let seed: number | null = input.seed ?? t.seed;
      let seedFrom: 'recorded' | 'given' | 'search' | 'none' = input.seed !== undefined ? 'given' : t.seed !== null ? 'recorded' : 'none';
      let tried = 0;
      if (seed === null && t.initialObservation !== null) {
        const found = await this.findSeed(env.source, maxTurns, runtime, t.initialObservation, input.seedSearchLimit, (candidate) =>
          this.agrees(env.source, maxTurns, runtime, candidate, t),
        );
        tried = found.tried;
        if (found.seed !== null) {
          seed = found.seed;
          seedFrom = 'search';
        }
      }
      const id = this.d.store.create({
        envHash: env.hash,
        envName: env.name,
        className: env.className,
        seed,
        hintEnabled: t.hint !== null,
        hintText: t.hint,
        maxTurns,
        runtime,
        origin: 'imported',
        label: `${input.fileName ?? 'trajectory'}${trajs.length > 1 ? ` #${t.index + 1}` : ''}`,
        policy: { kind: 'trajectory' },
        meta: { flagsRecorded: false, toolUse: t.toolUse, boundBy: by, seedFrom, seedsTried: tried, fileName: input.fileName ?? null },
      });
      const steps: StepRecord[] = [
        { idx: 0, kind: 'reset', action: null, rawAction: null, seed, observation: t.initialObservation, reward: null, terminated: false, truncated: false, info: {}, error: null, state: null, types: null },
        ...t.steps.map((s, i) => ({
          idx: i + 1,
          kind: 'step' as const,
          action: s.action,
          rawAction: s.raw === s.action ? null : s.raw,
          seed: null,
          observation: s.observation,
          reward: s.reward,
          terminated: false,
          truncated: false,
          info: {},
          error: null,
          state: null,
          types: null,
        })),
      ];
      this.d.store.appendSteps(id, steps);
      const report = await this.replay(id, { runtime, source: env.source });
      results.push({ episodeId: id, envHash: env.hash, envName: env.name, boundBy: by, seed, seedFrom, seedsTried: tried, report });
    }
    return { results };
  }

  // ------------------------------------------------------------------ JSONL

  exportJsonl(ids: number[]): { text: string; count: number } {
    const lines = ids.map((id) => {
      const m = this.meta(id);
      const env = this.d.catalog.byHash(m.envHash);
      return JSON.stringify({
        format: 'spade-workbench.episode',
        version: 1,
        envHash: m.envHash,
        envName: m.envName,
        className: m.className,
        source: env?.source ?? null,
        seed: m.seed,
        hint: { enabled: m.hintEnabled, text: m.hintText },
        maxTurns: m.maxTurns,
        runtime: m.runtime,
        policy: m.policy,
        origin: m.origin,
        label: m.label,
        meta: m.meta,
        createdAt: m.createdAt,
        steps: this.d.store.steps(id, true),
      });
    });
    return { text: lines.join('\n') + (lines.length ? '\n' : ''), count: lines.length };
  }

  importJsonl(text: string): { ids: number[]; skipped: { line: number; reason: string }[] } {
    const ids: number[] = [];
    const skipped: { line: number; reason: string }[] = [];
    text.split(/\r?\n/).forEach((line, i) => {
      if (!line.trim()) return;
      let o: Record<string, unknown>;
      try {
        o = JSON.parse(line) as Record<string, unknown>;
      } catch (e) {
        skipped.push({ line: i + 1, reason: `not JSON: ${e instanceof Error ? e.message : String(e)}` });
        return;
      }
      const r = parseEpisodeLine(o);
      if (typeof r === 'string') {
        skipped.push({ line: i + 1, reason: r });
        return;
      }
      let hash = r.envHash;
      if (r.source) {
        const added = this.d.catalog.add(r.source, r.className, `episode import line ${i + 1}`);
        if (hash && added !== hash) {
          skipped.push({ line: i + 1, reason: `the source's SHA-256 (${added.slice(0, 12)}) does not match envHash (${hash.slice(0, 12)})` });
          return;
        }
        hash = added;
      }
      const id = this.d.store.create({ ...r, envHash: hash, origin: r.origin, meta: { ...r.meta, importedFrom: 'jsonl' } });
      this.d.store.appendSteps(id, r.steps);
      ids.push(id);
    });
    this.d.changed?.(ids);
    return { ids, skipped };
  }

  // ------------------------------------------------------------------ regret

  /** SPADE's episode return: the last reward clamped to [-1, 1] if terminated, else 0. */
  static episodeReturn(steps: StepRecord[]): number {
    const last = steps.at(-1);
    if (!last || last.kind !== 'step' || !last.terminated) return 0;
    return Math.max(-1, Math.min(1, last.reward ?? 0));
  }

  /** Regret runs that can be cancelled, by runId: true once a cancel was asked. */
  private readonly regretRuns = new Map<string, { cancel: boolean }>();

  /**
   * SPADE's hint-based regret over N seeds. Seeds alternate between the arms (seed s with the hint,
   * then without), so a cancelled run still compares the two arms on the same seeds.
   */
  async regret(input: { hash: string; seeds: number; seedStart: number; policy: Policy; hintPolicy?: Policy | undefined; hintText?: string | undefined; maxTurns?: number | undefined; runtime?: RuntimeKind | undefined; runId?: string | undefined }) {
    const env = this.env(input.hash);
    const defaults = this.d.defaults();
    const runtime: RuntimeChoice = input.runtime ?? 'auto';
    const maxTurns = input.maxTurns ?? defaults.maxTurns;
    const hintText = input.hintText ?? env.hint;
    const runId = input.runId;
    if (runId !== undefined && this.regretRuns.has(runId)) throw new ApiError('conflict', `A regret run ${runId} is already running`);
    const run = { cancel: false };
    if (runId !== undefined) this.regretRuns.set(runId, run);

    const episode = async (hint: boolean, seed: number): Promise<{ id: number; ret: number }> => {
      const policy = hint && input.hintPolicy ? input.hintPolicy : input.policy;
      const session = await this.openSession(env.source, maxTurns, runtime);
      try {
        const reset = await session.reset(0, seed);
        const steps: StepRecord[] = [{ ...reset, state: await session.state() }];
        if (!reset.error) {
          const live: Live = { session, cursor: 0, snapshots: new Map(), runtime: session.info.runtime };
          const src = await this.actionSource(live, policy, seed, env.toolUse).catch(() => scriptSource([], false));
          const actions: string[] = [];
          for (let n = src.next(); n && actions.length < Math.max(maxTurns, 1) * 4; n = src.next()) actions.push(n.action);
          steps.push(...(await session.play(1, actions, { stopWhenDone: true })));
        }
        const id = this.d.store.create({
          envHash: input.hash,
          envName: env.name,
          className: session.info.className,
          seed,
          hintEnabled: hint,
          hintText: hint ? (hintText ?? null) : null,
          maxTurns,
          runtime: session.info.runtime,
          origin: 'regret',
          label: `regret ${hint ? 'with' : 'without'} hint, seed ${seed}`,
          policy: describePolicy(policy),
        });
        this.d.store.appendSteps(id, steps);
        return { id, ret: EpisodeService.episodeReturn(steps) };
      } finally {
        await session.close();
      }
    };

    const arms = { with: { returns: [] as number[], ids: [] as number[] }, without: { returns: [] as number[], ids: [] as number[] } };
    const total = input.seeds * 2;
    const started = performance.now();
    let done = 0;
    try {
      for (let k = 0; k < input.seeds && !run.cancel; k++) {
        const seed = input.seedStart + k;
        for (const hint of [true, false]) {
          const r = await episode(hint, seed);
          const arm = hint ? arms.with : arms.without;
          arm.returns.push(r.ret);
          arm.ids.push(r.id);
          done++;
          if (runId !== undefined) {
            const perEpisode = (performance.now() - started) / 1000 / done;
            this.d.regretProgress?.({ runId, done, total, etaSec: (total - done) * perEpisode });
          }
        }
      }
    } finally {
      if (runId !== undefined) this.regretRuns.delete(runId);
      const ids = [...arms.with.ids, ...arms.without.ids];
      if (ids.length) this.d.changed?.(ids);
    }
    const summary = (hint: boolean, a: { returns: number[]; ids: number[] }) => ({
      hint,
      returns: a.returns,
      mean: a.returns.reduce((x, y) => x + y, 0) / Math.max(1, a.returns.length),
      solveRate: a.returns.filter((x) => x > 0).length / Math.max(1, a.returns.length),
      episodeIds: a.ids,
    });
    const withHint = summary(true, arms.with);
    const withoutHint = summary(false, arms.without);
    return { withHint, withoutHint, regret: withHint.mean - withoutHint.mean, hintText: hintText ?? null, cancelled: run.cancel };
  }

  /** Asks a running regret run to stop after its current seed. */
  regretCancel(runId: string): boolean {
    const run = this.regretRuns.get(runId);
    if (!run) return false;
    run.cancel = true;
    return true;
  }

  /** The hinted first observation as SPADE builds it, for callers that show it without a recording. */
  static hinted(observation: string, hint: string): string {
    return injectHint(observation, hint);
  }
}

interface ParsedLine {
  envHash: string;
  envName: string | null;
  className: string | null;
  source: string | null;
  seed: number | null;
  hintEnabled: boolean;
  hintText: string | null;
  maxTurns: number;
  runtime: string;
  policy: Record<string, unknown>;
  origin: EpisodeMeta['origin'];
  label: string;
  meta: Record<string, unknown>;
  steps: StepRecord[];
}

/** Validates one exported episode line; returns a reason string when it cannot be used. */
export function parseEpisodeLine(o: Record<string, unknown>): ParsedLine | string {
  if (o.format !== 'spade-workbench.episode') return 'not a spade-workbench episode (format field missing or different)';
  const hash = typeof o.envHash === 'string' && /^[0-9a-f]{64}$/.test(o.envHash) ? o.envHash : null;
  const source = typeof o.source === 'string' ? o.source : null;
  if (!hash && !source) return 'neither envHash nor source';
  if (!Array.isArray(o.steps)) return 'steps missing';
  const steps: StepRecord[] = [];
  for (const [i, s] of (o.steps as Record<string, unknown>[]).entries()) {
    if (!s || typeof s !== 'object' || (s.kind !== 'reset' && s.kind !== 'step')) return `step ${i}: kind must be reset or step`;
    const str = (v: unknown) => (typeof v === 'string' ? v : null);
    steps.push({
      idx: i,
      kind: s.kind,
      action: str(s.action),
      rawAction: str(s.rawAction),
      seed: typeof s.seed === 'number' ? s.seed : null,
      observation: str(s.observation),
      reward: typeof s.reward === 'number' ? s.reward : null,
      terminated: s.terminated === true,
      truncated: s.truncated === true,
      info: s.info && typeof s.info === 'object' ? (s.info as Record<string, unknown>) : {},
      error: (s.error as StepRecord['error']) ?? null,
      state: s.state ?? null,
      types: Array.isArray(s.types) ? (s.types as string[]) : null,
    });
  }
  const hint = (o.hint ?? {}) as { enabled?: unknown; text?: unknown };
  const origins = ['played', 'imported', 'replay', 'regret'];
  return {
    envHash: hash ?? '',
    envName: typeof o.envName === 'string' ? o.envName : null,
    className: typeof o.className === 'string' ? o.className : null,
    source,
    seed: typeof o.seed === 'number' ? o.seed : null,
    hintEnabled: hint.enabled === true,
    hintText: typeof hint.text === 'string' ? hint.text : null,
    maxTurns: typeof o.maxTurns === 'number' && o.maxTurns > 0 ? Math.trunc(o.maxTurns) : 25,
    runtime: o.runtime === 'cpython' ? 'cpython' : 'pyodide',
    policy: o.policy && typeof o.policy === 'object' ? (o.policy as Record<string, unknown>) : {},
    origin: origins.includes(o.origin as string) ? (o.origin as EpisodeMeta['origin']) : 'imported',
    label: typeof o.label === 'string' ? o.label : '',
    meta: o.meta && typeof o.meta === 'object' ? (o.meta as Record<string, unknown>) : {},
    steps,
  };
}

