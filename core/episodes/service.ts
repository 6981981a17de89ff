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

export type { EpisodeDeps, RuntimeKind } from './context';
export { SNAPSHOT_EVERY } from './livePosition';

export class EpisodeService {
  readonly ctx: EpisodeContext;
  private readonly sessions: LiveSessions;
  private readonly regrets: RegretRuns;

  constructor(d: EpisodeDeps) {
    this.ctx = new EpisodeContext(d);
    this.sessions = new LiveSessions(this.ctx);
    this.regrets = new RegretRuns(this.ctx);
  }

  // ------------------------------------------------------------------ reading

  summary(m: EpisodeMeta): EpisodeSummary {
    return summaryOf(m, this.sessions.cursor(m.id));
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
    return episodeView(this.ctx, id, this.sessions.cursor(id));
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

  scrub(id: number, idx: number, requestId?: string) {
    return this.sessions.scrub(id, idx, requestId);
  }

  act(id: number, action: string, extract: boolean, toolUseHint?: boolean, requestId?: string) {
    return this.sessions.act(id, action, extract, toolUseHint, requestId);
  }

  policyTurn(id: number, turn: PolicyTurn, requestId?: string) {
    return this.sessions.policyTurn(id, turn, requestId);
  }

  resetAgain(id: number, seed: number | null | undefined, requestId?: string) {
    return this.sessions.resetAgain(id, seed, requestId);
  }

  run(id: number, policy: Policy, until: Until, maxSteps: number, requestId?: string) {
    return this.sessions.run(id, policy, until, maxSteps, requestId);
  }

  close(id: number): Promise<boolean> {
    return this.sessions.close(id);
  }

  async delete(ids: number[]): Promise<number> {
    for (const id of ids) await this.sessions.close(id);
    const n = this.ctx.d.store.delete(ids);
    this.ctx.d.changed?.(ids);
    return n;
  }

  closeAll(): Promise<void> {
    return this.sessions.closeAll();
  }

  // ------------------------------------------------------------------ replay, import, JSONL

  replay(id: number, opts: { runtime?: RuntimeChoice | undefined; source?: string; requestId?: string | undefined } = {}): Promise<ReplayReport> {
    const { requestId, ...rest } = opts;
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
