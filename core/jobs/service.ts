import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JobArtefacts, JobMetrics, JobSummary, LaunchInput } from '../api/calls/jobs';
import { continueInput, jobArtefacts } from './artefacts';
import { loadRecipes } from './recipes';
import type { Db } from '../memory/db';
import { exportEnvironments, type MeasuredRuns } from '../memory/exporter';
import type { EventBus } from '../server/events';
import { buildSpec } from './launch';
import { attachedOwner, JobManager } from './manager';
import { listConfigHosts, readSshConfig } from './ssh/config';
import { KeychainSecretStore, MemorySecretStore, type Sealer, type SecretStore } from './secrets';
import type { EnvironmentImporter } from './flowback';
import type { JobRecord } from './types';
import type { TrainRun } from '../api/calls/train';
import { evaluateInput, trainRun } from './trainRun';

export interface JobServiceDeps {
  db: Db;
  dataDir: string;
  events: EventBus;
  importer: EnvironmentImporter | null;
  /** Model runs' measurements, which a shipped pool's env_memory.json carries (core/runs' RunStore). */
  runs: MeasuredRuns;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** Electron's safeStorage on the desktop; absent in web mode (secrets stay in memory). */
  sealer?: Sealer | undefined;
}

/** The jobs part of the engine: the manager, the secret store and the summaries the UI sees. */
export class JobService {
  readonly manager: JobManager;
  readonly secrets: SecretStore;

  constructor(private readonly deps: JobServiceDeps) {
    const sealedFile = join(deps.dataDir, 'secrets.sealed.json');
    this.secrets = deps.sealer
      ? new KeychainSecretStore(deps.sealer, {
          load: () => (existsSync(sealedFile) ? (JSON.parse(readFileSync(sealedFile, 'utf8')) as Record<string, string>) : {}),
          save: (sealed) => writeFileSync(sealedFile, JSON.stringify(sealed), { mode: 0o600 }),
        })
      : new MemorySecretStore();
    this.manager = new JobManager({
      db: deps.db,
      dataDir: deps.dataDir,
      secrets: this.secrets,
      importer: deps.importer,
      onChange: (j) => deps.events.emit('jobs.changed', this.summary(j)),
      onLog: (id, size) => deps.events.emit('jobs.logGrew', { id, size }),
      onError: (m) => deps.log('warn', m),
    });
  }

  start(): void {
    this.manager.start();
  }

  summary(j: JobRecord): JobSummary {
    return {
      id: j.id,
      name: j.name,
      backend: j.backend,
      host: j.host,
      recipe: j.recipe,
      state: j.state,
      detail: j.detail,
      exitCode: j.exitCode,
      externalId: j.externalId,
      createdAt: j.createdAt,
      startedAt: j.startedAt,
      finishedAt: j.finishedAt,
      logSize: j.localLogSize,
      command: j.spec.command,
      workdir: j.spec.workdir,
      env: j.spec.env,
      secretEnv: j.spec.secretEnv,
      filesBack: this.manager.store.files(j.id).length,
      ssh: Boolean(j.spec.ssh),
      attached: Boolean(j.spec.attached),
      owner: j.spec.attached ? attachedOwner(j) : null,
    };
  }

  sshHosts(): string[] {
    return listConfigHosts(readSshConfig());
  }

  async submit(input: LaunchInput): Promise<JobSummary> {
    let poolDir: string | null | undefined = input.noPool ? null : undefined;
    let tmpPool: string | null = null;
    if (input.poolEnvIds && input.poolEnvIds.length > 0) {
      // The pool to ship: the chosen environments exported from memory in SPADE's layout.
      tmpPool = join(this.deps.dataDir, 'jobs', 'pools', `pool-${Date.now().toString(36)}`);
      mkdirSync(tmpPool, { recursive: true });
      exportEnvironments(this.deps.db, input.poolEnvIds, { format: 'spade', outDir: tmpPool }, this.deps.runs);
      poolDir = tmpPool;
    }
    try {
      const spec = buildSpec({ ...input, poolDir, dataDir: this.deps.dataDir });
      const job = await this.manager.submit(spec);
      return this.summary(job);
    } finally {
      if (tmpPool) rmSync(tmpPool, { recursive: true, force: true });
    }
  }

  /** A job's series, each on its own x axis, and the games' returns its log named ([REGRET] lines). */
  metrics(id: string, keys?: string[]): JobMetrics {
    const all = this.manager.store.metricKeys(id);
    const points = this.manager.store.metrics(id, keys && keys.length ? keys : undefined);
    const by = new Map<string, JobMetrics['series'][number]>();
    for (const p of points) {
      let s = by.get(p.key);
      if (!s) by.set(p.key, (s = { key: p.key, axis: p.axis, steps: [], values: [] }));
      s.steps.push(p.step);
      s.values.push(p.value);
    }
    return { keys: all, series: [...by.values()], games: this.manager.store.games(id) };
  }

  /** The run's checkpoints and offline evaluations, read now from its folder over the job's connection. */
  async artefacts(id: string): Promise<JobArtefacts> {
    const job = this.manager.get(id);
    return jobArtefacts(job, await this.manager.files(job), loadRecipes().find((r) => r.id === job.recipe));
  }

  /** Launches the run's recipe again from its newest checkpoint (or the save folder named), as a new job. */
  async continueRun(id: string, loadDir?: string): Promise<JobSummary> {
    const job = this.manager.get(id);
    const recipe = loadRecipes().find((r) => r.id === job.recipe);
    const a = await jobArtefacts(job, await this.manager.files(job), recipe);
    return this.submit(continueInput(job, recipe, a, loadDir));
  }

  /** A train-grpo job's adapters and finished evaluations (its run folder and log). */
  trainRun(id: string): TrainRun {
    const job = this.manager.get(id);
    return trainRun(job, this.manager.readLog(id, 0, 1 << 26).text);
  }

  /** Evaluates one of a finished train-grpo job's adapters, as a new job. */
  trainEvaluate(id: string, adapter: string): Promise<JobSummary> {
    const job = this.manager.get(id);
    return this.submit(evaluateInput(job, this.trainRun(id), adapter));
  }

  close(): Promise<void> {
    return this.manager.close();
  }
}
