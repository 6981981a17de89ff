/**
 * Environments another OpenEnv server serves (a URL), played as episodes of the library's episode
 * store (runtime 'openenv'): the episode view lists them, steps them, scrubs their record and
 * replays them on a fresh /ws session with the first divergence flagged, as it does a local game.
 *
 * What each recorded step holds, said as such:
 *  - `observation` is what the agent reads (remotePlay.ts's observationText: serve-env's `text`, with
 *    SPADE's hint already in it when asked, else the observation's fields as JSON), without the ids
 *    a server gives each episode, so two sessions of one game compare equal;
 *  - `state` has two fields, `observation` (the whole observation) and `server_state` (what the
 *    server's `state` message answers; None when it has none), as a state tree of JSON's types
 *    (jsonStateTree), so the inspector shows them and what changed. The server's own state, not the
 *    game's variables: a remote game's interpreter is out of our reach;
 *  - `reward` and the end are the server's (serve-env: 0 until the end, then SPADE's return).
 * The hint is the server's (serve-env puts SPADE's into the first observation): the record keeps
 * hint on/off and no hint text of its own, so nothing is injected a second time.
 * A session is live as long as the app; after that (or when the server drops it) the first step
 * re-plays the record since its last reset on a fresh session, and refuses to go on if the server
 * answers differently (the record would lie about where the new session stands).
 */
import { DomainError } from '../errors';
import { errorMessage } from '../api/errorMessage';
import type { ReplayReport } from '../api/calls/episodes';
import type { EpisodeContext } from '../episodes/context';
import { stepDetail, summaryOf } from '../episodes/episodeViews';
import type { EpisodeStore, StepRecord } from '../episodes/episodeStore';
import { firstDivergence } from '../episodes/replay';
import type { StateNode, StateTree } from '../episodes/stateDiff';
import { REMOTE_RUNTIME, type RemoteEpisodePort, type StepResult } from '../episodes/remotePort';
import { DEFAULT_LIMITS, describeServer, parseServerUrl, WireSession, type ClientLimits, type ServerInfo, type StepResultWire } from './client';
import { actionFor, gamePin, observationText, resetData, withoutEpisodeIds, type RemoteEpisode } from './remotePlay';
import { publicUrl, remoteHash, remoteName } from './remoteRun';

/** What an episode's meta keeps of its server, enough to open a fresh session on it after a restart. */
interface RemoteMeta {
  /** Without its `?token=` (publicUrl): a secret is never written to the library. */
  url: string;
  hintMode: ServerInfo['hintMode'];
  textField: string | null;
  /** Reset fields that pin one game on a server that serves several (serve-env's `env`). */
  pin: Record<string, unknown>;
}

interface Live {
  info: Pick<ServerInfo, 'hintMode' | 'textField'>;
  session: WireSession;
  cursor: number;
}

/** A server's answer (reset or step) as a recorded step; `serverState` what its `state` message said, if asked. */
export function stepOfWire(base: Pick<StepRecord, 'idx' | 'kind' | 'action' | 'rawAction' | 'seed'>, r: Pick<StepResultWire, 'observation' | 'reward' | 'done'>, serverState: Record<string, unknown> | null): StepRecord {
  const obs = withoutEpisodeIds(r.observation);
  const term = typeof obs?.terminated === 'boolean' ? obs.terminated : r.done;
  const trunc = typeof obs?.truncated === 'boolean' ? obs.truncated : false;
  const step = base.kind === 'step';
  return {
    ...base,
    observation: observationText(obs),
    reward: step ? r.reward : null,
    // `done` ends it: a server that says done without either flag ended it by its own rule.
    terminated: step && r.done && !trunc ? true : step ? term : false,
    truncated: step && r.done ? trunc : false,
    info: {},
    error: null,
    state: jsonStateTree(r.observation, serverState),
    types: null,
    spade: null,
  };
}

/** A failed step (the server's refusal, a dropped session) as a recorded step. */
function failedStep(idx: number, text: string, e: unknown): StepRecord {
  const type = e instanceof Error && 'serverCode' in e ? String((e as { serverCode: unknown }).serverCode) : e instanceof Error && 'code' in e ? String((e as { code: unknown }).code) : 'ServerError';
  return { idx, kind: 'step', action: text, rawAction: null, seed: null, observation: null, reward: null, terminated: false, truncated: false, info: {}, error: { kind: 'server', type, message: errorMessage(e) }, state: null, types: null };
}

/**
 * Records an episode played over the wire (remotePlay.ts's playRemote: a model run's episode) as an
 * episode of the store, so a run row links to a record the episode view opens and replays. The
 * server's `state` was not asked during the play: each step's server_state is None.
 */
export function recordRemoteEpisode(store: EpisodeStore, info: Pick<ServerInfo, 'url' | 'metadata' | 'tasks' | 'hintMode' | 'textField'>, ep: RemoteEpisode, o: { maxTurns: number; policy: Record<string, unknown>; label: string; pin: Record<string, unknown> }): number {
  const meta: RemoteMeta = { url: remember(info.url), hintMode: info.hintMode, textField: info.textField, pin: o.pin };
  const id = store.create({ envHash: remoteHash(info.url, o.pin), envName: remoteName(info, o.pin), className: null, seed: ep.seed, hintEnabled: ep.hint, hintText: null, maxTurns: o.maxTurns, runtime: REMOTE_RUNTIME, origin: 'played', label: o.label, policy: o.policy, meta: { openenv: meta, endedBy: ep.endedBy } });
  const steps = ep.turns.map((t): StepRecord => {
    if (t.idx === 0) return stepOfWire({ idx: 0, kind: 'reset', action: null, rawAction: null, seed: ep.seed }, { observation: t.observation ?? {}, reward: null, done: false }, null);
    if (t.error !== null || !t.observation) return failedStep(t.idx, t.text ?? '', new Error(t.error ?? 'no observation'));
    return stepOfWire({ idx: t.idx, kind: 'step', action: t.text, rawAction: null, seed: null }, { observation: t.observation, reward: t.reward, done: t.done }, null);
  });
  store.appendSteps(id, steps);
  return id;
}

/**
 * The URLs with a token this process has played, by their public form: a record re-plays on the
 * server it was made on with the token it was made with, while the app runs; after a restart the
 * URL is opened again with its token (the server's refusal says so).
 */
const withToken = new Map<string, string>();

function remember(url: string): string {
  const pub = publicUrl(url);
  if (pub !== url) withToken.set(pub, url);
  return pub;
}

function connectUrl(meta: RemoteMeta): string {
  return withToken.get(meta.url) ?? meta.url;
}

const MAX_RECORD = 10_000;
/** As the harness bounds a state view (native/harness_values.py): items per container, characters per string, depth. */
const TREE_ITEMS = 200;
const TREE_STR = 2000;
const TREE_DEPTH = 8;

/** A JSON value as the harness's state-tree node ({t, v} | {t, len, items, more}), typed by JSON's names. */
function jsonNode(v: unknown, depth: number): StateNode {
  if (v === null || v === undefined) return { t: 'null', v: null };
  if (typeof v === 'boolean') return { t: 'bool', v };
  if (typeof v === 'number') return { t: Number.isInteger(v) ? 'int' : 'float', v };
  if (typeof v === 'string') return { t: 'str', v: v.length > TREE_STR ? `${v.slice(0, TREE_STR)}…` : v };
  if (depth >= TREE_DEPTH) return { t: Array.isArray(v) ? 'list' : 'dict', v: JSON.stringify(v).slice(0, 120), cut: 'depth' };
  if (Array.isArray(v)) {
    const n: StateNode = { t: 'list', len: v.length, items: v.slice(0, TREE_ITEMS).map((x) => jsonNode(x, depth + 1)) };
    return v.length > TREE_ITEMS ? { ...n, more: v.length - TREE_ITEMS } : n;
  }
  const e = Object.entries(v as Record<string, unknown>);
  const n: StateNode = { t: 'dict', len: e.length, items: e.slice(0, TREE_ITEMS).map(([k, x]) => [k, jsonNode(x, depth + 1)]) };
  return e.length > TREE_ITEMS ? { ...n, more: e.length - TREE_ITEMS } : n;
}

/** What a remote step's state is: the observation and the server's state, as a state tree. */
export function jsonStateTree(observation: Record<string, unknown> | null, serverState: Record<string, unknown> | null): StateTree {
  return { className: 'OpenEnv', fields: [['observation', jsonNode(observation, 1)], ['server_state', jsonNode(serverState, 1)]] };
}

export class RemoteEpisodes implements RemoteEpisodePort {
  private readonly live = new Map<number, Live>();
  private readonly locks = new Map<number, Promise<unknown>>();

  constructor(
    private readonly ctx: EpisodeContext,
    private readonly limits: ClientLimits = DEFAULT_LIMITS,
  ) {}

  cursor(id: number): number | null {
    return this.live.get(id)?.cursor ?? null;
  }

  /** Opens a session on the server, resets it and starts a record; the episode's id. */
  async open(o: { url: string; seed: number | null; hint: boolean; env?: string; maxTurns?: number; label?: string; signal?: AbortSignal }): Promise<number> {
    const info = await describeServer(parseServerUrl(o.url), this.limits);
    // Refuses a hint the server has not (and an unhinted play on a hint-only server) before any session.
    resetData(info, o.seed, o.hint);
    // A game of a server that serves several (serve-env's `env`, one of its /tasks), else its first.
    const meta: RemoteMeta = { url: remember(info.url), hintMode: info.hintMode, textField: info.textField, pin: gamePin(info, o.env) };
    const session = await WireSession.open(info.url, this.limits);
    const stop = () => void session.close();
    o.signal?.addEventListener('abort', stop, { once: true });
    try {
      const reset = await this.resetOn(session, meta, o.hint, 0, o.seed);
      if (o.signal?.aborted) throw new DomainError('cancelled', 'Opening the OpenEnv episode was cancelled');
      const store = this.ctx.d.store;
      const id = store.create({
        envHash: remoteHash(info.url, meta.pin),
        envName: remoteName(info, meta.pin),
        className: null,
        seed: o.seed,
        hintEnabled: o.hint,
        // The server's hint is in its observation already: no text of ours to inject.
        hintText: null,
        maxTurns: o.maxTurns ?? this.ctx.d.defaults().maxTurns,
        runtime: REMOTE_RUNTIME,
        origin: 'played',
        label: o.label ?? `OpenEnv ${new URL(meta.url).host}`,
        policy: { kind: 'interactive' },
        meta: { openenv: meta, server: { name: info.metadata.name ?? null, version: info.metadata.version ?? null } },
      });
      store.appendSteps(id, [reset]);
      this.live.set(id, { info: meta, session, cursor: 0 });
      this.ctx.d.changed?.([id]);
      return id;
    } catch (e) {
      await session.close();
      if (o.signal?.aborted) throw new DomainError('cancelled', 'Opening the OpenEnv episode was cancelled');
      throw e;
    } finally {
      o.signal?.removeEventListener('abort', stop);
    }
  }

  private remoteMeta(id: number): RemoteMeta {
    const m = this.ctx.meta(id);
    const r = m.meta.openenv as RemoteMeta | undefined;
    if (m.runtime !== REMOTE_RUNTIME || !r || typeof r.url !== 'string') throw new DomainError('invalid_input', `Episode ${id} was not played over OpenEnv`);
    return { url: r.url, hintMode: r.hintMode ?? null, textField: r.textField ?? null, pin: r.pin && typeof r.pin === 'object' ? r.pin : {} };
  }

  private async serverState(session: WireSession): Promise<Record<string, unknown> | null> {
    // A server without the state message (or one that fails it) still plays; its state is unknown.
    return session.state().catch(() => null);
  }

  private async record(session: WireSession, r: StepResultWire, base: Pick<StepRecord, 'idx' | 'kind' | 'action' | 'rawAction' | 'seed'>): Promise<StepRecord> {
    return stepOfWire(base, r, await this.serverState(session));
  }

  private async resetOn(session: WireSession, meta: RemoteMeta, hint: boolean, idx: number, seed: number | null): Promise<StepRecord> {
    const r = await session.reset({ ...resetData(meta, seed, hint), ...meta.pin });
    return this.record(session, r, { idx, kind: 'reset', action: null, rawAction: null, seed });
  }

  /** One step; a server's refusal (a malformed action, a step after the end) is recorded as the step's error. */
  private async stepOn(session: WireSession, meta: RemoteMeta, idx: number, text: string): Promise<StepRecord> {
    const action = actionFor(meta, text);
    try {
      return await this.record(session, await session.step(action), { idx, kind: 'step', action: text, rawAction: null, seed: null });
    } catch (e) {
      if (session.closed) throw e;
      return failedStep(idx, text, e);
    }
  }

  /** One operation per episode at a time, in order. */
  private async exclusive<T>(id: number, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(id) ?? Promise.resolve();
    const next = prev.catch(() => {}).then(fn);
    this.locks.set(id, next);
    try {
      return await next;
    } finally {
      if (this.locks.get(id) === next) this.locks.delete(id);
    }
  }

  /** Cancel closes the session the work waits on; the episode is then not live, its record kept. */
  private async watched<T>(id: number, session: WireSession, signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
    const stop = () => {
      if (this.live.get(id)?.session === session) this.live.delete(id);
      void session.close();
    };
    signal?.addEventListener('abort', stop, { once: true });
    try {
      const v = await fn();
      if (signal?.aborted) throw new DomainError('cancelled', 'Cancelled');
      return v;
    } catch (e) {
      if (signal?.aborted) {
        this.ctx.d.changed?.([id]);
        throw new DomainError('cancelled', 'Cancelled: the OpenEnv session was closed; the steps recorded before stay');
      }
      if (session.closed && this.live.get(id)?.session === session) this.live.delete(id);
      throw e;
    } finally {
      signal?.removeEventListener('abort', stop);
    }
  }

  /** The steps since the record's last reset (the ones a fresh session must re-play to stand where it ended). */
  private sinceLastReset(id: number): StepRecord[] {
    const steps = this.ctx.d.store.steps(id, true);
    const k = steps.reduce((at, s, i) => (s.kind === 'reset' ? i : at), 0);
    return steps.slice(k);
  }

  /** Re-plays a record segment (a reset, then its actions) on `session`; the steps as the server answers them now. */
  private async replaySegment(session: WireSession, meta: RemoteMeta, hint: boolean, seg: StepRecord[], signal?: AbortSignal, out: StepRecord[] = []): Promise<StepRecord[]> {
    for (const s of seg) {
      if (signal?.aborted) break;
      if (s.kind === 'reset') out.push(await this.resetOn(session, meta, hint, s.idx, s.seed));
      else out.push(await this.stepOn(session, meta, s.idx, s.action ?? ''));
    }
    return out;
  }

  private async ensureLive(id: number, signal?: AbortSignal): Promise<Live> {
    const l = this.live.get(id);
    if (l && !l.session.closed) return l;
    this.live.delete(id);
    const meta = this.remoteMeta(id);
    const m = this.ctx.meta(id);
    const seg = this.sinceLastReset(id);
    const session = await WireSession.open(connectUrl(meta), this.limits);
    const fresh: Live = { info: meta, session, cursor: m.stepCount - 1 };
    const again = await this.watched(id, session, signal, () => this.replaySegment(session, meta, m.hintEnabled, seg, signal)).catch(async (e: unknown) => {
      await session.close();
      throw e;
    });
    const d = firstDivergence(m, seg, again);
    if (d) {
      await session.close();
      throw new DomainError('conflict', `The record was re-played on a fresh session to go on, and the server answered step ${seg[d.idx]!.idx} differently (${d.fields.join(', ')}): reset to start again from a fresh state, or use Replay & compare to see where`);
    }
    this.live.set(id, fresh);
    this.ctx.d.changed?.([id]);
    return fresh;
  }

  private result(id: number, idx: number): StepResult {
    const m = this.ctx.meta(id);
    return { episode: summaryOf(m, this.cursor(id)), steps: this.ctx.d.store.viewsRange(m, idx, idx), detail: stepDetail(this.ctx, id, idx), forkedFrom: null };
  }

  act(id: number, text: string, signal?: AbortSignal): Promise<StepResult> {
    return this.exclusive(id, async () => {
      const meta = this.remoteMeta(id);
      const m = this.ctx.meta(id);
      if (m.stepCount >= MAX_RECORD) throw new DomainError('conflict', `This record has ${MAX_RECORD} steps; open another`);
      // Checked before any session is opened: a text the server's action cannot carry is refused as it is.
      actionFor(meta, text);
      const l = await this.ensureLive(id, signal);
      const rec = await this.watched(id, l.session, signal, () => this.stepOn(l.session, meta, m.stepCount, text));
      this.ctx.d.store.appendSteps(id, [rec]);
      l.cursor = rec.idx;
      this.ctx.d.changed?.([id]);
      return this.result(id, rec.idx);
    });
  }

  resetAgain(id: number, seed: number | null | undefined, signal?: AbortSignal): Promise<StepResult> {
    return this.exclusive(id, async () => {
      const meta = this.remoteMeta(id);
      const m = this.ctx.meta(id);
      const s = seed === undefined ? m.seed : seed;
      // A reset needs no history: a session the server dropped is replaced by a fresh one.
      let l = this.live.get(id);
      if (!l || l.session.closed) {
        l = { info: meta, session: await WireSession.open(connectUrl(meta), this.limits), cursor: m.stepCount - 1 };
        this.live.set(id, l);
      }
      const session = l.session;
      const rec = await this.watched(id, session, signal, () => this.resetOn(session, meta, m.hintEnabled, m.stepCount, s));
      this.ctx.d.store.appendSteps(id, [rec]);
      l.cursor = rec.idx;
      this.ctx.d.changed?.([id]);
      return this.result(id, rec.idx);
    });
  }

  /**
   * Plays the whole record again on a fresh session (every reset and step as recorded), keeps that as
   * a replay episode and flags the first step that differs, as a local replay does (core/episodes/replay.ts).
   */
  async replay(id: number, signal?: AbortSignal): Promise<ReplayReport> {
    const meta = this.remoteMeta(id);
    const m = this.ctx.meta(id);
    const store = this.ctx.d.store;
    const recorded = store.steps(id, true);
    const session = await WireSession.open(connectUrl(meta), this.limits);
    const replayed: StepRecord[] = [];
    const stop = () => void session.close();
    signal?.addEventListener('abort', stop, { once: true });
    try {
      await this.replaySegment(session, meta, m.hintEnabled, recorded, signal, replayed);
    } catch (e) {
      // A session the server dropped part way keeps what it answered: the rest is 'missing' in the comparison.
      if (signal?.aborted || !session.closed) throw e;
    } finally {
      signal?.removeEventListener('abort', stop);
      await session.close();
    }
    if (signal?.aborted) throw new DomainError('cancelled', 'The replay was cancelled; nothing was recorded');
    const divergence = firstDivergence(m, recorded, replayed);
    const replayId = store.create({ envHash: m.envHash, envName: m.envName, className: null, seed: m.seed, hintEnabled: m.hintEnabled, hintText: null, maxTurns: m.maxTurns, runtime: REMOTE_RUNTIME, origin: 'replay', label: `replay of #${id}`, parentId: id, policy: { kind: 'replay', of: id }, meta: { replayOf: id, openenv: meta } });
    store.appendSteps(replayId, replayed);
    store.setDivergence(replayId, divergence?.idx ?? null);
    store.setDivergence(id, divergence?.idx ?? null, { lastReplay: replayId, divergenceFields: divergence?.fields ?? [], divergenceStateChanges: divergence?.stateChanges.slice(0, 100) ?? [] });
    this.ctx.d.changed?.([id, replayId]);
    return { episodeId: id, replayId, compared: Math.min(recorded.length, replayed.length), divergence };
  }

  async close(id: number): Promise<boolean> {
    const l = this.live.get(id);
    if (!l) return false;
    this.live.delete(id);
    await l.session.close();
    this.ctx.d.changed?.([id]);
    return true;
  }

  async closeAll(): Promise<void> {
    const all = [...this.live.values()];
    this.live.clear();
    await Promise.all(all.map((l) => l.session.close()));
  }
}

