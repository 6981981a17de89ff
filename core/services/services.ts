import { join } from 'node:path';
import { homedir } from 'node:os';
import { openDatabase, schemaVersion, type Db } from '../memory/db';
import { MemoryService } from '../memory/service';
import { PyodidePool } from '../runtime/pyodidePool';
import { RuntimeService } from '../runtime/service';
import { JobService } from '../jobs/service';
import { AuditService } from '../audit/service';
import { EpisodeService } from '../episodes/service';
import { ModelService } from '../models/service';
import { getEnvironmentByHash } from '../memory/repository';
import { EpisodeStore } from '../episodes/store';
import { memoryCatalog } from '../episodes/catalog';
import type { Sealer } from '../jobs/secrets';
import { EventBus } from '../server/events';
import { SettingsStore } from './settings';

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
    pickPaths?: (opts: { title: string; folders: boolean }) => Promise<string[]>;
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
  readonly events = new EventBus();
  readonly settings: SettingsStore;
  readonly memory: MemoryService;
  readonly runtime: RuntimeService;
  readonly jobs: JobService;
  readonly shell: Shell;
  readonly startedAt = Date.now();
  readonly platform: NonNullable<ServiceOptions['platform']>;
  private readonly statusProviders: (() => ComponentStatus[])[] = [];
  private readonly closers: (() => Promise<void> | void)[] = [];
  private closed = false;
  private auditSvc: AuditService | null = null;
  private episodesSvc: EpisodeService | null = null;

  constructor(opts: ServiceOptions) {
    this.dataDir = opts.dataDir;
    this.dbPath = join(opts.dataDir, 'workbench.sqlite');
    this.shell = opts.shell;
    this.platform = opts.platform ?? {};
    this.db = openDatabase(this.dbPath, opts.nativeBinding ? { nativeBinding: opts.nativeBinding } : {});
    this.settings = new SettingsStore(this.db);
    this.memory = new MemoryService({
      db: this.db,
      dbPath: this.dbPath,
      events: this.events,
      log: (level, message) => this.log(level, 'memory', message),
      ...(opts.nativeBinding ? { nativeBinding: opts.nativeBinding } : {}),
    });
    this.onClose(() => this.memory.close());
    this.runtime = new RuntimeService({ settings: () => this.settings.get(), log: (level, message) => this.log(level, 'runtime', message) });
    this.onClose(() => this.runtime.shutdown());
    this.jobs = new JobService({
      db: this.db,
      dataDir: opts.dataDir,
      events: this.events,
      sealer: opts.secretSealer,
      log: (level, message) => this.log(level, 'jobs', message),
      importer: async (paths, o) => {
        const summary = await this.memory.startImport(paths, { jobId: o.jobId, runId: o.runId }).done;
        if (!summary) throw new Error('the import failed (see the log)');
        return summary;
      },
    });
    this.onClose(() => this.jobs.close());
    this.jobs.start();
    this.addStatusProvider(() => this.runtime.components());
    this.addStatusProvider(() => {
      const n = this.memory.busy();
      return [{ name: 'memory', state: n ? 'busy' : 'ready', detail: n ? `importing (${n} job${n > 1 ? 's' : ''})` : 'library ready' }];
    });
  }

  /** Audits, made on first use so an app that never audits starts no Python. */
  get audit(): AuditService {
    if (!this.auditSvc) {
      const svc = new AuditService({
        db: this.db,
        events: this.events,
        maxTurns: () => this.settings.get().maxTurns,
        runtime: () => this.settings.get().auditRuntime,
        makePyodide: () => new PyodidePool({ log: (level, m) => this.log(level, 'audit', m) }),
        log: (level, m) => this.log(level, 'audit', m),
      });
      this.auditSvc = svc;
      this.onClose(() => svc.close());
      this.addStatusProvider(() => {
        const n = svc.busy();
        return n ? [{ name: 'audit', state: 'busy', detail: `${n} batch${n > 1 ? 'es' : ''} running` }] : [];
      });
    }
    return this.auditSvc;
  }

  /** Episodes, made on first use; it closes its runtime sessions before the runtime shuts down. */
  get episodes(): EpisodeService {
    if (!this.episodesSvc) {
      const svc = new EpisodeService({
        store: new EpisodeStore(this.db),
        catalog: memoryCatalog(this.db),
        runtime: this.runtime,
        defaults: () => ({ maxTurns: this.settings.get().maxTurns }),
        changed: (ids) => this.events.emit('episodes.changed', { ids }),
        regretProgress: (p) => this.events.emit('episodes.regretProgress', p),
      });
      this.episodesSvc = svc;
      this.onClose(() => svc.closeAll());
    }
    return this.episodesSvc;
  }

  private modelsSvc: ModelService | null = null;
  /** Model policies; API keys are named secrets of the jobs' secret store (sealed on the desktop). */
  get models(): ModelService {
    this.modelsSvc ??= new ModelService({
      episodes: this.episodes,
      secret: (name) => this.jobs.secrets.get(name),
      envInfo: (hash) => {
        const e = getEnvironmentByHash(this.db, hash);
        return { skill: e?.skill ?? null, recordedRegret: e?.regret ?? null };
      },
    });
    return this.modelsSvc;
  }

  schemaVersion(): number {
    return schemaVersion(this.db);
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
    this.db.close();
  }
}

export function defaultDataDir(): string {
  return process.env.SPADE_DATA_DIR || join(homedir(), '.spade-workbench');
}
