/**
 * Episodes, the one object handlers, the CLI and other services hold: reading recordings, live
 * play (liveSessions.ts), replay with first-divergence detection (replay.ts), trajectory import
 * (importer.ts), JSONL exchange (jsonlExchange.ts) and the with/without-hint regret runs
 * (regretRuns.ts). It composes those modules and keeps no logic of its own.
 */
import type { EpisodeSummary, Policy, ReplayReport, StepDetail, StepView } from '../api/calls/episodes';
import { EpisodeContext, type EpisodeDeps, type RuntimeChoice } from './context';
import { episodeView, stepDetail, summaryOf } from './episodeViews';
import { injectHint } from './hint';
import { importTrajectories } from './importer';
import { exportJsonl, importJsonl } from './jsonlExchange';
import { LiveSessions, type OpenInput, type PolicyTurn } from './liveSessions';
import type { Until } from './policyRun';
import { RegretRuns, type RegretInput, type RegretManyInput } from './regretRuns';
import { replayEpisode } from './replay';
import type { EnvSession } from './session';
import type { EpisodeFilter, EpisodeMeta, StepRecord } from './episodeStore';
import { REMOTE_RUNTIME, type RemoteEpisodePort } from './remotePort';
import { DomainError } from '../errors';

export type { EpisodeDeps, RuntimeKind } from './context';
export { SNAPSHOT_EVERY } from './livePosition';

export class EpisodeService {
  readonly ctx: EpisodeContext;
  private readonly sessions: LiveSessions;
  private readonly regrets: RegretRuns;
  /** Episodes of environments other OpenEnv servers serve (core/openenv/remoteEpisodes.ts), where the host gives them. */
  readonly remote: RemoteEpisodePort | null;

  constructor(d: EpisodeDeps) {
    this.ctx = new EpisodeContext(d);
    this.sessions = new LiveSessions(this.ctx);
    this.regrets = new RegretRuns(this.ctx);
    this.remote = d.remote ? d.remote(this.ctx) : null;
  }

  /** The remote port when episode `id` was played over OpenEnv's protocol; null for a local game. */
  private remoteOf(id: number): RemoteEpisodePort | null {
    if (this.ctx.d.store.meta(id)?.runtime !== REMOTE_RUNTIME) return null;
    if (!this.remote) throw new DomainError('unavailable', `Episode ${id} was played over OpenEnv; this host plays no OpenEnv episodes (its record can be read)`);
    return this.remote;
  }

  private cursor(id: number, runtime: string): number | null {
    return runtime === REMOTE_RUNTIME ? (this.remote?.cursor(id) ?? null) : this.sessions.cursor(id);
  }

  /** Over the wire a game plays only as its server plays it: no scripted policy, model turn or fork of ours. */
  private static notOverTheWire(what: string): DomainError {
    return new DomainError('invalid_input', `${what} plays a game in our runtime; an OpenEnv episode is stepped by hand here (a model plays it as a run record from the OpenEnv URL page)`);
  }

  /** Opens an environment another OpenEnv server serves as a recorded episode (see remotePort.ts). */
  async openRemote(input: { url: string; seed: number | null; hint: boolean; env?: string | undefined; maxTurns?: number | undefined; label?: string | undefined; requestId?: string | undefined }) {
    if (!this.remote) throw new DomainError('unavailable', 'This host plays no OpenEnv episodes');
    const remote = this.remote;
    const { requestId, ...o } = input;
    const id = await this.sessions.cancellable(requestId, 'Opening the OpenEnv episode', (signal) =>
      remote.open({ url: o.url, seed: o.seed, hint: o.hint, ...(o.env !== undefined ? { env: o.env } : {}), ...(o.maxTurns !== undefined ? { maxTurns: o.maxTurns } : {}), ...(o.label !== undefined ? { label: o.label } : {}), ...(signal ? { signal } : {}) }),
    );
    return this.get(id);
  }

  // ------------------------------------------------------------------ reading

  summary(m: EpisodeMeta): EpisodeSummary {
    return summaryOf(m, this.cursor(m.id, m.runtime));
  }

  meta(id: number): EpisodeMeta {
    return this.ctx.meta(id);
  }

  list(opts: EpisodeFilter & { limit: number; offset: number }) {
    const store = this.ctx.d.store;
    const r = store.list(opts);
    return { total: r.total, rows: r.rows.map((m) => this.summary(m)), facets: store.facets() };
  }

  get(id: number): { episode: EpisodeSummary; steps: StepView[] } {
    return episodeView(this.ctx, id, this.cursor(id, this.ctx.meta(id).runtime));
  }

  inspect(id: number, idx: number): StepDetail {
    return stepDetail(this.ctx, id, idx);
  }

  // ------------------------------------------------------------------ live play

  open(input: OpenInput) {
    return this.sessions.open(input);
  }

  openCancel(requestId: string): boolean {
    return this.sessions.openCancel(requestId);
  }

  /** Cancel for a step, run, scrub, reopen, replay or import started with this request id. */
  cancel(requestId: string): boolean {
    return this.sessions.cancel(requestId);
  }

  async scrub(id: number, idx: number, requestId?: string) {
    const remote = this.remoteOf(id);
    // A remote record is read, not re-executed: its server's session cannot be moved back.
    if (remote) return { detail: stepDetail(this.ctx, id, idx), live: remote.cursor(id) !== null, reexecuted: 0 };
    return this.sessions.scrub(id, idx, requestId);
  }

  /** On an OpenEnv episode the text goes to the server as it is (serve-env reads SPADE's action out of it itself). */
  act(id: number, action: string, extract: boolean, toolUseHint?: boolean, requestId?: string) {
    const remote = this.remoteOf(id);
    if (remote) return this.sessions.cancellable(requestId, 'The step', (signal) => remote.act(id, action, signal));
    return this.sessions.act(id, action, extract, toolUseHint, requestId);
  }

  policyTurn(id: number, turn: PolicyTurn, requestId?: string) {
    if (this.remoteOf(id)) return Promise.reject(EpisodeService.notOverTheWire('A model turn'));
    return this.sessions.policyTurn(id, turn, requestId);
  }

  resetAgain(id: number, seed: number | null | undefined, requestId?: string) {
    const remote = this.remoteOf(id);
    if (remote) return this.sessions.cancellable(requestId, 'The reset', (signal) => remote.resetAgain(id, seed, signal));
    return this.sessions.resetAgain(id, seed, requestId);
  }

  run(id: number, policy: Policy, until: Until, maxSteps: number, requestId?: string) {
    if (this.remoteOf(id)) return Promise.reject(EpisodeService.notOverTheWire('A scripted policy'));
    return this.sessions.run(id, policy, until, maxSteps, requestId);
  }

  async close(id: number): Promise<boolean> {
    const remote = this.ctx.d.store.meta(id)?.runtime === REMOTE_RUNTIME ? this.remote : null;
    return remote ? remote.close(id) : this.sessions.close(id);
  }

  async delete(ids: number[]): Promise<number> {
    for (const id of ids) await this.close(id);
    const n = this.ctx.d.store.delete(ids);
    this.ctx.d.changed?.(ids);
    return n;
  }

  async closeAll(): Promise<void> {
    await Promise.all([this.sessions.closeAll(), this.remote?.closeAll()]);
  }

  // ------------------------------------------------------------------ replay, import, JSONL

  replay(id: number, opts: { runtime?: RuntimeChoice | undefined; source?: string; requestId?: string | undefined } = {}): Promise<ReplayReport> {
    const { requestId, ...rest } = opts;
    const remote = this.remoteOf(id);
    if (remote) return this.sessions.cancellable(requestId, 'The replay', (signal) => remote.replay(id, signal));
    return this.sessions.cancellable(requestId, 'The replay', (signal) => replayEpisode(this.ctx, id, { ...rest, ...(signal ? { signal } : {}) }));
  }

  importTrajectories(input: Parameters<typeof importTrajectories>[1] & { requestId?: string | undefined }) {
    const { requestId, ...rest } = input;
    return this.sessions.cancellable(requestId, 'The import', (signal) => importTrajectories(this.ctx, rest, signal));
  }

  exportJsonl(ids: number[]): { text: string; count: number } {
    return exportJsonl(this.ctx, ids);
  }

  importJsonl(text: string): { ids: number[]; skipped: { line: number; reason: string }[] } {
    return importJsonl(this.ctx, text);
  }

  // ------------------------------------------------------------------ regret

  regret(input: RegretInput) {
    return this.regrets.regret(input);
  }

  regretMany(input: RegretManyInput) {
    return this.regrets.regretMany(input);
  }

  regretCancel(runId: string): boolean {
    return this.regrets.cancel(runId);
  }

  /** The hinted first observation as SPADE builds it, for callers that show it without a recording. */
  static hinted(observation: string, hint: string): string {
    return injectHint(observation, hint);
  }
}
