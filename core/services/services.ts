import { join } from 'node:path';
import { openDatabase, schemaVersion, type Db } from '../memory/db';
import { checkIntegrity, isWriteRefused, pauseWrites, type IntegrityReport } from '../memory/integrity';
import { DomainError } from '../errors';
import { MemoryService } from '../memory/service';
import { LibraryService } from '../memory/library';
import { PyodidePool } from '../runtime/pyodidePool';
import { RuntimeService } from '../runtime/service';
import { JobService } from '../jobs/service';
import { AuditService } from '../audit/service';
import { EpisodeService } from '../episodes/service';
import { ModelService } from '../runs/modelService';
import { RunService } from '../runs/service';
import { RunStore } from '../runs/runStore';
import { getEnvironmentByHash } from '../memory/repository';
import { EpisodeStore } from '../episodes/episodeStore';
import { EditorService } from '../editor/service';
import { memoryCatalog } from '../episodes/catalog';
import type { Sealer } from '../jobs/secrets';
import { EventBus } from '../server/events';
import { SettingsStore } from '../memory/settingsStore';
import type { MemoryChange } from '../api/calls/memory';
import { DesignService } from './designService';
import { PoolAuditService } from '../audit/poolService';
import { sweepRunningElsewhere } from '../sweeps/sweepOwner';
import { RegretSweepService } from '../runs/regretSweepService';
import { OpenEnvService } from '../openenv/service';
import { RemoteEpisodes, recordRemoteEpisode } from '../openenv/remoteEpisodes';
import { RemoteSessions } from '../openenv/remoteSessions';
import { RemotePlays } from '../openenv/remotePlays';
import { RemoteEnvNames } from '../openenv/remoteRun';
import { WireAuditStore } from '../openenv/wireAuditStore';
import { appVersion } from '../base/appInfo';

export type Shell = 'electron' | 'web' | 'in-process';

export interface ComponentStatus {
  name: string;
  state: 'ready' | 'busy' | 'starting' | 'down' | 'off';
  detail: string;
}

export interface ServiceOptions {
  dataDir: string;
  shell: Shell;
  /** Desktop-only hooks the core cannot provide itself. */
  platform?: {
    openExternal?: (url: string) => Promise<void>;
    /** A native picker for files or folders on this machine (Electron's dialog). */
    pickPaths?: (opts: { title: string; folders: boolean; multiple: boolean }) => Promise<string[]>;
  };
  /** Electron's safeStorage, so job secrets are sealed by the OS keychain (desktop only). */
  secretSealer?: Sealer;
  nativeBinding?: string;
}

/**
 * The composition root of the engine: one per running app (Electron main, web host, or a test).
 * Every transport dispatches into the same Services, which is what makes them interchangeable.
 */
export class Services {
  readonly dataDir: string;
  readonly dbPath: string;
  readonly db: Db;
  // An invalid payload is reported on the console, not as a log.line event (which could be the invalid one).
  readonly events = new EventBus((problem) => console.error(`[spade] event not sent: ${problem}`));
  readonly settings: SettingsStore;
  readonly memory: MemoryService;
  readonly library: LibraryService;
  readonly runtime: RuntimeService;
  readonly jobs: JobService;
  readonly shell: Shell;
  readonly startedAt = Date.now();
  readonly platform: NonNullable<ServiceOptions['platform']>;
  private readonly statusProviders: (() => ComponentStatus[])[] = [];
  private readonly closers: (() => Promise<void> | void)[] = [];
  private closed = false;
  private integrityReport: IntegrityReport;
  /** The user chose to keep writing to a file that failed its check. */
  private writesAllowedAnyway = false;
  private readonly made = new Map<string, unknown>();
  /** The OpenEnv servers a model played here, named in the run records (core/openenv/remotePlays.ts). */
  private readonly remoteEnvNames = new RemoteEnvNames();

  constructor(opts: ServiceOptions) {
    this.dataDir = opts.dataDir;
    this.dbPath = join(opts.dataDir, 'workbench.sqlite');
    this.shell = opts.shell;
    this.platform = opts.platform ?? {};
    this.db = openDatabase(this.dbPath, opts.nativeBinding ? { nativeBinding: opts.nativeBinding } : {});
    this.integrityReport = checkIntegrity(this.db, 'quick');
    if (!this.integrityReport.ok) pauseWrites(this.db, true);
    this.settings = new SettingsStore(this.db);
    this.memory = new MemoryService({
      db: this.db,
      dbPath: this.dbPath,
      events: this.events,
      log: (level, message) => this.log(level, 'memory', message),
      writesPaused: () => (this.writesPaused ? this.pausedMessage() : null),
      ...(opts.nativeBinding ? { nativeBinding: opts.nativeBinding } : {}),
    });
    this.onClose(() => this.memory.close());
    this.library = new LibraryService({
      db: this.db,
      changed: (c) => this.memoryChanged(c),
      runs: new RunStore(this.db),
    });
    this.runtime = new RuntimeService({ settings: () => this.settings.get(), log: (level, message) => this.log(level, 'runtime', message) });
    this.onClose(() => this.runtime.shutdown());
    this.jobs = new JobService({
      db: this.db,
      dataDir: opts.dataDir,
      events: this.events,
      sealer: opts.secretSealer,
      log: (level, message) => this.log(level, 'jobs', message),
      runs: new RunStore(this.db),
      importer: async (paths, o) => {
        const summary = await this.memory.startImport(paths, { jobId: o.jobId, runId: o.runId, ...(o.regretPlaceholder ? { regretPlaceholder: o.regretPlaceholder } : {}) }).done;
        if (!summary) throw new Error('the import failed (see the log)');
        return summary;
      },
    });
    this.onClose(() => this.jobs.close());
    // Following jobs writes their state every second; on a file whose writes are paused that would
    // only fail, so jobs are picked up once writes resume.
    this.startJobsIfWritable();
    this.addStatusProvider(() => this.runtime.components());
    this.addStatusProvider(() => {
      const n = this.memory.busy();
      return [{ name: 'memory', state: n ? 'busy' : 'ready', detail: n ? `importing (${n} job${n > 1 ? 's' : ''})` : 'library ready' }];
    });
  }

  /** Audits, made on first use so an app that never audits starts no Python. */
  get audit(): AuditService {
    return this.lazily(
      'audit',
      () => {
        const svc = new AuditService({
          db: this.db,
          events: this.events,
          maxTurns: () => this.settings.get().maxTurns,
          runtime: () => this.settings.get().auditRuntime,
          allowUnsandboxed: () => this.settings.get().allowUnsandboxedNative,
          makePyodide: () => new PyodidePool({ log: (level, m) => this.log(level, 'audit', m) }),
          log: (level, m) => this.log(level, 'audit', m),
        });
        this.addStatusProvider(() => {
          const n = svc.busy();
          return n ? [{ name: 'audit', state: 'busy', detail: `${n} batch${n > 1 ? 'es' : ''} running` }] : [];
        });
        return svc;
      },
      (svc) => svc.close(),
    );
  }

  /** Pool audit sweeps (here, on Ray, on Slurm), made on first use; closing cancels the ones running, as Ctrl-C does to the CLI. */
  get poolAudit(): PoolAuditService {
    return this.lazily(
      'poolAudit',
      () => {
        const svc = new PoolAuditService({ db: this.db, dataDir: this.dataDir, events: this.events, maxTurns: () => this.settings.get().maxTurns, log: (level, m) => this.log(level, 'audit', m) });
        this.addStatusProvider(() => {
          const n = svc.busy();
          return n ? [{ name: 'pool audit', state: 'busy', detail: `${n} sweep${n > 1 ? 's' : ''} running` }] : [];
        });
        return svc;
      },
      (svc) => svc.close(),
    );
  }

  /** Regret sweeps (here, on Ray, on Slurm), made on first use; closing cancels the ones running, as Ctrl-C does to `regret`. */
  get regretSweeps(): RegretSweepService {
    return this.lazily(
      'regretSweeps',
      () => {
        const svc = new RegretSweepService({
          db: this.db,
          dataDir: this.dataDir,
          events: this.events,
          store: new EpisodeStore(this.db),
          runs: () => this.runs,
          runtime: this.runtime,
          settings: () => this.settings.get(),
          secret: (name) => this.jobs.secrets.get(name),
          log: (level, m) => this.log(level, 'runs', m),
        });
        this.addStatusProvider(() => {
          const n = svc.busy();
          return n ? [{ name: 'regret sweep', state: 'busy', detail: `${n} sweep${n > 1 ? 's' : ''} running` }] : [];
        });
        return svc;
      },
      (svc) => svc.close(),
    );
  }

  /** Episodes, made on first use; it closes its runtime sessions before the runtime shuts down. */
  get episodes(): EpisodeService {
    return this.lazily(
      'episodes',
      () =>
        new EpisodeService({
          store: new EpisodeStore(this.db),
          catalog: memoryCatalog(this.db),
          runtime: this.runtime,
          defaults: () => ({ maxTurns: this.settings.get().maxTurns }),
          changed: (ids) => this.events.emit('episodes.changed', { ids }),
          remote: (ctx) => new RemoteEpisodes(ctx),
          regretProgress: (p) => this.events.emit('episodes.regretProgress', p),
        }),
      (svc) => svc.closeAll(),
    );
  }

  /** The app's OpenEnv server (core/openenv), made on first use; stopped when the app closes. */
  get openenv(): OpenEnvService {
    // Episodes first, so the server (closed in reverse order of making) stops before their sessions close.
    return this.lazily(
      'openenv',
      () => {
        const episodes = this.episodes;
        return new OpenEnvService({ db: this.db, episodes: () => episodes, version: appVersion(), log: (m) => this.log('warn', 'openenv', m) });
      },
      (svc) => svc.close(),
    );
  }

  /** Sessions on environments other OpenEnv servers serve (a URL), made on first use; closed with the app. */
  get openenvRemote(): RemoteSessions {
    return this.lazily(
      'openenvRemote',
      () => new RemoteSessions(),
      (svc) => svc.closeAll(),
    );
  }

  /** Model plays of an environment another OpenEnv server serves, as run records; stopped (their records ended) when the app closes. */
  get openenvPlays(): RemotePlays {
    return this.lazily(
      'openenvPlays',
      () =>
        new RemotePlays({
          runs: () => this.runs,
          models: () => this.models,
          names: this.remoteEnvNames,
          progress: (p) => this.events.emit('episodes.regretProgress', p),
          defaultMaxTurns: () => this.settings.get().maxTurns,
          record: (info, e, o) => {
            const id = recordRemoteEpisode(this.episodes.ctx.d.store, info, e, o);
            this.events.emit('episodes.changed', { ids: [id] });
            return id;
          },
        }),
      (svc) => svc.closeAll(),
    );
  }

  /** The wire audits of OpenEnv servers, kept (migration 21). */
  get wireAudits(): WireAuditStore {
    return this.lazily('wireAudits', () => new WireAuditStore(this.db), () => {});
  }

  /** The editor, made on first use; its syntax-checker process lives and dies with it. */
  get editor(): EditorService {
    return this.lazily(
      'editor',
      () => new EditorService({ db: this.db, audit: () => this.audit, changed: (c) => this.memoryChanged(c) }),
      (svc) => svc.close(),
    );
  }

  /**
   * The one way a service gets its lifetime: Services makes it (here at first use, for parts
   * that cost a process or a pool to start; the others in the constructor) and closes it, in
   * reverse order of making, when the app closes. No feature keeps a service of its own.
   */
  private lazily<T>(name: string, make: () => T, close: (svc: T) => Promise<void> | void): T {
    const known = this.made.get(name);
    if (known !== undefined) return known as T;
    if (this.closed) throw new DomainError('unavailable', 'The workbench is shutting down');
    const svc = make();
    this.made.set(name, svc);
    this.onClose(() => close(svc));
    return svc;
  }

  private runsSvc: RunService | null = null;
  /** Model runs as records; runs left 'running' by a stopped workbench are marked interrupted on first use. */
  get runs(): RunService {
    if (!this.runsSvc) {
      const svc = new RunService({
        db: this.db,
        minShare: () => this.settings.get().runMinSuccess,
        catalog: this.remoteEnvNames.over(memoryCatalog(this.db)),
        changed: (runId) => this.events.emit('runs.changed', { runId }),
      });
      // A regret sweep's run another process is playing (the CLI on this memory file) is not interrupted.
      if (!this.writesPaused) svc.interruptStale((run) => typeof run.config.endpoint.sweep === 'string' && sweepRunningElsewhere(this.db, run.config.endpoint.sweep));
      this.runsSvc = svc;
    }
    return this.runsSvc;
  }

  private modelsSvc: ModelService | null = null;
  /** Model policies; API keys are named secrets of the jobs' secret store (sealed on the desktop). */
  get models(): ModelService {
    this.modelsSvc ??= new ModelService({
      episodes: this.episodes,
      secret: (name) => this.jobs.secrets.get(name),
      envInfo: (hash) => {
        const e = getEnvironmentByHash(this.db, hash);
        return { skill: e?.skill ?? null, recordedRegret: e?.regret ?? null, recordedWinRate: e?.winRate ?? null };
      },
      runs: this.runs,
      tunnel: (jobId) => this.jobs.manager.tunnelFor(jobId),
    });
    return this.modelsSvc;
  }

  /** Design rounds, made on first use; closing stops the rounds running and waits until each has stored how it ended. */
  get design(): DesignService {
    return this.lazily(
      'design',
      () => {
        const svc = new DesignService({
          db: this.db,
          dataDir: this.dataDir,
          events: this.events,
          models: () => this.models,
          episodes: () => this.episodes,
          audit: () => this.audit,
          runs: () => this.runs,
          writesPaused: () => this.writesPaused,
          spadeSrc: () => this.settings.get().spadeSrc,
          log: (level, m) => this.log(level, 'design', m),
        });
        this.addStatusProvider(() => {
          const n = svc.busy();
          return n ? [{ name: 'design', state: 'busy', detail: `${n} round${n > 1 ? 's' : ''} running` }] : [];
        });
        return svc;
      },
      (svc) => svc.close(),
    );
  }

  schemaVersion(): number {
    return schemaVersion(this.db);
  }

  /** The last structural check of the database file (quick at open, full on demand). */
  get integrity(): IntegrityReport {
    return this.integrityReport;
  }

  get writesPaused(): boolean {
    return !this.integrityReport.ok && !this.writesAllowedAnyway;
  }

  /** Re-checks the file; a damaged one pauses writes unless the user already chose to write anyway. */
  checkDatabase(full: boolean): IntegrityReport {
    this.integrityReport = checkIntegrity(this.db, full ? 'full' : 'quick');
    pauseWrites(this.db, this.writesPaused);
    this.startJobsIfWritable();
    if (!this.integrityReport.ok) this.log('error', 'database', `${this.integrityReport.checked} check found ${this.integrityReport.problems.length} problem(s): ${this.integrityReport.problems[0] ?? ''}`);
    return this.integrityReport;
  }

  private jobsStarted = false;
  private startJobsIfWritable(): void {
    if (this.jobsStarted || this.writesPaused || this.closed) return;
    this.jobsStarted = true;
    this.jobs.start();
  }

  /** The user's choice after being told the file is damaged. */
  resumeWrites(): void {
    this.writesAllowedAnyway = true;
    pauseWrites(this.db, false);
    this.startJobsIfWritable();
    this.log('warn', 'database', 'writes resumed on a database that failed its integrity check, at the user\'s request');
  }

  private pausedMessage(): string {
    return `The library database failed its ${this.integrityReport.checked} integrity check (${this.integrityReport.truncated ? 'at least ' : ''}${this.integrityReport.problems.length} problem(s)), so changes are paused. Run a full check, export what you need, or choose to keep writing.`;
  }

  /** A write refused because of the pause becomes a clear 'unavailable' instead of a bug report. */
  translateError(e: unknown): unknown {
    if (this.writesPaused && isWriteRefused(e)) return new DomainError('unavailable', this.pausedMessage(), { database: 'writes-paused' });
    return e;
  }

  addStatusProvider(p: () => ComponentStatus[]): void {
    this.statusProviders.push(p);
  }

  components(): ComponentStatus[] {
    return this.statusProviders.flatMap((p) => p());
  }

  onClose(fn: () => Promise<void> | void): void {
    this.closers.push(fn);
  }

  /** The one place a library change becomes the `memory.changed` event (at most 1,000 ids named; lists refresh either way). */
  private memoryChanged(c: MemoryChange): void {
    this.events.emit('memory.changed', c.ids ? { reason: c.reason, ids: c.ids.slice(0, 1000) } : { reason: c.reason });
  }

  log(level: 'debug' | 'info' | 'warn' | 'error', source: string, message: string): void {
    this.events.emit('log.line', { time: new Date().toISOString(), level, source, message });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const fn of this.closers.reverse()) {
      try {
        await fn();
      } catch {
        // Closing must finish even if one part fails; the database is closed last regardless.
      }
    }
    this.made.clear(); // a closed service is never handed out again (it would restart its process)
    this.db.close();
  }
}

export { defaultDataDir } from '../base/dataDir';
