/**
 * One job the manager follows: what is known between its polls (timer, poll in flight, stop in
 * progress, back-off, failure counts, where its Ray head listens, who is looking) and one round of
 * following it (state, log tail, metrics file, environments). The manager keeps one per job id.
 */
import { join } from 'node:path';
import type { Db } from '../memory/db';
import { flowBack, type EnvironmentImporter } from './flowback';
import { completeLines, type LogMirror } from './logMirror';
import { redact } from '../base/redact';
import { parseLogText } from './metrics';
import { attachRunReturns } from '../memory/runStats';
import { jobPaths, machineHome, outputPath } from './script';
import type { SecretStore } from './secrets';
import type { JobStore } from './jobStore';
import { isTerminal, type BackendKind, type JobBackend, type JobRecord, type StatusReport } from './types';
import type { GpuWatcher } from './gpu/watcher';
import { errorMessage } from '../api';
import { rayView, submissionIdIn, submitsToRay } from './rayLaunch';

const LOG_CHUNK = 1 << 20;
const LOG_FAILURES_BEFORE_GIVING_UP = 5;

/** What a followed job uses of its manager. */
export interface FollowContext {
  readonly store: JobStore;
  readonly backends: Record<BackendKind, JobBackend>;
  readonly gpu: GpuWatcher;
  readonly db: Db;
  readonly dataDir: string;
  readonly secrets: SecretStore;
  readonly importer: EnvironmentImporter | null;
  readonly pollMs: number | undefined;
  readonly slurmPollMs: { min: number; max: number } | undefined;
  onLog?(jobId: string, size: number): void;
  onError?(message: string): void;
  mirror(job: JobRecord): LogMirror;
  changed(id: string): void;
}

export class FollowedJob {
  /** The next poll's timer while the job is followed; undefined when it is not. */
  timer: NodeJS.Timeout | undefined;
  /** The follower's round, kept so that watch() can run it early. */
  tick: (() => Promise<void>) | undefined;
  /** The poll in flight: a second caller awaits it instead of starting another. */
  inFlight: Promise<void> | undefined;
  /** Set while the job is being stopped, to what the stop ended (said in the job's detail). */
  stopNote: string | undefined;
  private polls = 0;
  private backoffMs: number | undefined;
  private logFailures = 0;
  /** Where the launch script's Ray head listens: asked once (null: where the recipe says; undefined: not asked yet). */
  private headHost: string | null | undefined;
  private rayFailures = 0;
  /** Until when someone has the job's page open (ms since the epoch). */
  watchedUntil = 0;

  constructor(
    readonly id: string,
    private readonly c: FollowContext,
  ) {}

  get following(): boolean {
    return this.timer !== undefined;
  }

  get watched(): boolean {
    return this.watchedUntil > Date.now();
  }

  /** Stops following: the timer is cleared and the round forgotten. */
  unfollow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.tick = undefined;
  }

  /** How long until the next poll: a Slurm queue is asked rarely unless someone is looking. */
  nextDelay(job: JobRecord, changed: boolean): number {
    const fast = this.c.pollMs ?? 1000;
    if (job.backend !== 'slurm') return fast;
    if (this.watched) return fast;
    const { min, max } = this.c.slurmPollMs ?? { min: 15_000, max: 60_000 };
    const next = changed ? min : Math.min(max, Math.max(min, (this.backoffMs ?? min / 2) * 2));
    this.backoffMs = next;
    return next;
  }

  /** The job has ended: the next follow starts from the fast pace again. */
  ended(): void {
    this.timer = undefined;
    this.backoffMs = undefined;
  }

  private secretless(text: string): string {
    return redact(text, this.c.secrets.values());
  }

  /** One round for this job: state, log tail, metrics file, environments. Never throws. */
  poll(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    const p = this.pollOnce().finally(() => (this.inFlight = undefined));
    this.inFlight = p;
    return p;
  }

  /** The Ray job a launch script submitted, reached where its head listens (asked once per job). */
  async rayJobOf(job: JobRecord, sub: string): Promise<JobRecord> {
    let host = this.headHost;
    if (host === undefined) {
      host = (await this.c.backends[job.backend].rayHeadHost?.(job)) ?? null;
      this.headHost = host;
    }
    return rayView(job, sub, host);
  }

  /** The outcome of a launch script that submitted a Ray job: the Ray job's status once the script ended. */
  private async rayOutcome(job: JobRecord, script: StatusReport): Promise<StatusReport> {
    const sub = job.spec.ray?.submissionId;
    if (!isTerminal(script.state)) return sub ? { ...script, detail: `${script.detail}; submitted ray job ${sub}` } : script;
    if (!sub) return { ...script, detail: `${script.detail} (the script never said which Ray job it submitted: this is the script's own outcome)` };
    const unknown = (why: string): StatusReport => ({
      state: script.state === 'succeeded' ? 'lost' : script.state,
      detail: `the launch script ended (${script.detail}) but ${why}`,
      exitCode: script.exitCode ?? null,
    });
    let r: StatusReport;
    try {
      r = await this.c.backends.ray.status(await this.rayJobOf(job, sub));
    } catch (e) {
      // A link that drops at the end is asked again on the next rounds before the outcome is given up on.
      const fails = ++this.rayFailures;
      if (fails < LOG_FAILURES_BEFORE_GIVING_UP) throw e;
      return unknown(`the Ray head could not be asked about ray job ${sub}: ${redact(errorMessage(e), this.c.secrets.values()).slice(0, 300)}`);
    }
    this.rayFailures = 0;
    const detail = redact(r.detail, this.c.secrets.values());
    if (r.state === 'lost') return unknown(`the Ray head does not know ray job ${sub}`);
    if (isTerminal(r.state)) return { state: r.state, detail: `${detail}; launch script: ${script.detail}`, exitCode: r.exitCode ?? null };
    return { state: r.state, detail: `the launch script ended (${script.detail}); ${detail}`, exitCode: null };
  }

  private async pollOnce(): Promise<void> {
    const id = this.id;
    try {
      const job = this.c.store.get(id);
      if (!job || isTerminal(job.state)) return;
      const backend = this.c.backends[job.backend];
      const raw = await backend.status(job);
      let report: StatusReport = { ...raw, detail: redact(raw.detail, this.c.secrets.values()) };
      // Drain the log before declaring the end, so the last lines are never lost. A log that cannot
      // be read (a Ray head that fails to decode it) must not hold the state back: it is said instead.
      let logError: string | null = null;
      try {
        await this.tail(job, isTerminal(report.state));
        await this.tailMetricsFile(job, backend, isTerminal(report.state));
      } catch (e) {
        logError = redact(errorMessage(e), this.c.secrets.values());
        this.c.onError?.(`job ${id}: ${logError}`);
      }
      // A script that submits to Ray ends with `ray job logs --follow`, whose exit code says nothing:
      // the Ray job's own status is the outcome.
      if (submitsToRay(job)) report = await this.rayOutcome(this.c.store.get(id) ?? job, report);
      if (logError) {
        // A dropped link is retried (the end waits until the log is drained); a log that still
        // cannot be read after a few rounds past the end is given up on, and that is said.
        const fails = ++this.logFailures;
        const giveUp = isTerminal(report.state) && fails >= LOG_FAILURES_BEFORE_GIVING_UP;
        report = giveUp
          ? { ...report, detail: `${report.detail}; the log could not be read to its end: ${logError.slice(0, 300)}` }
          : isTerminal(report.state)
            ? { state: job.state, detail: `reconnecting: ${logError.slice(0, 300)}`, exitCode: job.exitCode }
            : { ...report, detail: `reconnecting: ${logError.slice(0, 300)}` };
      } else this.logFailures = 0;
      let state = report.state;
      if (this.stopNote !== undefined && (state === 'lost' || state === 'failed')) state = 'cancelled';
      const terminal = isTerminal(state);
      const n = ++this.polls;
      if (job.spec.importEnvironments && (terminal || n % 3 === 1)) await this.flowBack(job, backend, terminal);
      const stopNote = this.stopNote;
      if (state !== job.state || report.detail !== job.detail || (report.exitCode ?? null) !== job.exitCode) {
        this.c.store.update(id, {
          state,
          detail: stopNote !== undefined && state === 'cancelled' ? `stopped by the user${stopNote ? `: ${stopNote}` : ''}; ${report.detail}` : report.detail,
          exitCode: report.exitCode ?? null,
          ...(terminal ? { finishedAt: new Date().toISOString() } : {}),
        });
        if (terminal) this.stopNote = undefined;
        this.c.changed(id);
      }
      this.c.gpu.see(this.c.store.get(id) ?? job);
    } catch (e) {
      const msg = redact(errorMessage(e), this.c.secrets.values());
      this.c.onError?.(`job ${id}: ${msg}`);
      const j = this.c.store.get(id);
      if (j && !j.detail.startsWith('reconnecting')) {
        this.c.store.update(id, { detail: `reconnecting: ${msg.slice(0, 300)}` });
        this.c.changed(id);
      }
    }
  }

  private async tail(first: JobRecord, final: boolean): Promise<void> {
    let job = first;
    const backend = this.c.backends[job.backend];
    const mirror = this.c.mirror(job);
    let offset = job.logOffset;
    let localSize = job.localLogSize;
    for (let rounds = 0; rounds < 64; rounds++) {
      const chunk = await backend.readLog({ ...job, logOffset: offset }, offset, LOG_CHUNK);
      if (!chunk || chunk.data.length === 0) break;
      const { take, consumed, addNewline } = completeLines(chunk.data, final && offset + chunk.data.length >= chunk.size, chunk.data.length >= LOG_CHUNK);
      if (consumed === 0) break;
      const text = redact(take.toString('utf8'), this.c.secrets.values()) + (addNewline ? '\n' : '');
      if (submitsToRay(job) && !job.spec.ray?.submissionId) {
        const sub = submissionIdIn(text);
        if (sub) {
          job = { ...job, spec: { ...job.spec, ray: { ...job.spec.ray, submissionId: sub } } };
          this.c.store.setSpec(job.id, job.spec);
        }
      }
      const parsed = parseLogText(text);
      const size = this.c.store.claimLog(job.id, offset, offset + consumed, () => mirror.append(Buffer.from(text, 'utf8')), parsed.points, parsed.games);
      if (size === null) break; // another process following this job took these bytes
      localSize = size;
      offset += consumed;
      // A [REGRET] line for a game already back in the library attaches at once; later games get theirs on import.
      if (parsed.games.length && job.spec.importEnvironments && attachRunReturns(this.c.db, job.id) > 0) this.c.changed(job.id);
      this.c.onLog?.(job.id, localSize);
      if (offset >= chunk.size) break;
    }
  }

  private async tailMetricsFile(job: JobRecord, backend: JobBackend, final: boolean): Promise<void> {
    const t = await backend.files(job);
    if (!t || !job.spec.outputs.metricsFile) return;
    const path = outputPath(job.spec.outputs.metricsFile, jobPaths(job, await machineHome(t)));
    if (!path) return;
    const fresh = this.c.store.get(job.id)!;
    const chunk = await t.readChunk(path, fresh.metricsOffset, LOG_CHUNK);
    if (!chunk || chunk.data.length === 0) return;
    const { take, consumed } = completeLines(chunk.data, final, chunk.data.length >= LOG_CHUNK);
    if (consumed === 0) return;
    this.c.store.commitMetricsFile(job.id, fresh.metricsOffset + consumed, parseLogText(take.toString('utf8')).points);
  }

  private async flowBack(job: JobRecord, backend: JobBackend, final: boolean): Promise<void> {
    const t = await backend.files(job);
    if (!t) return;
    const paths = jobPaths(job, await machineHome(t));
    const r = await flowBack(
      job,
      t,
      {
        gamesDir: outputPath(job.spec.outputs.gamesDir, paths),
        cacheDir: outputPath(job.spec.outputs.cacheDir, paths),
        rejectedDir: outputPath(job.spec.outputs.rejectedDir, paths),
      },
      this.c.store,
      join(this.c.dataDir, 'jobs', job.id, 'outputs'),
      this.c.importer,
      final,
    );
    if (r.fetched > 0) this.c.changed(job.id);
  }
}
