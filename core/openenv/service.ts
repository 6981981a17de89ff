/**
 * The app's OpenEnv server: at most one, over a library selection, bound to 127.0.0.1 (the app never
 * exposes it; `serve-env --host` does that on purpose). It plays through the app's own
 * EpisodeService, so its episodes land in the library the app shows, in the app's sandbox.
 */
import { DomainError } from '../errors';
import type { Db } from '../memory/db';
import type { EpisodeService } from '../episodes/service';
import type { OpenEnvStatus } from '../api/calls/openenv';
import { startOpenEnvServer, type OpenEnvServer } from './server';
import { resolveEnvs, taskList, type HintMode } from './tasks';
import type { Served } from './episode';

export interface OpenEnvStartInput {
  selection: string;
  port: number;
  hint: HintMode;
  maxTurns: number;
  concurrency: number;
  seeds: number;
  seedStart: number;
}

export class OpenEnvService {
  private running: { server: OpenEnvServer; input: OpenEnvStartInput; envs: number; tasks: number; skipped: string[]; startedAt: string } | null = null;
  private starting = false;

  constructor(private readonly d: { db: Db; episodes: () => EpisodeService; version: string; log?: (msg: string) => void }) {}

  status(): OpenEnvStatus {
    const r = this.running;
    if (!r) return { running: false, url: null, selection: null, environments: 0, tasks: 0, hint: null, maxTurns: null, concurrency: null, startedAt: null, sessions: [], skipped: [] };
    return { running: true, url: r.server.url, selection: r.input.selection, environments: r.envs, tasks: r.tasks, hint: r.input.hint, maxTurns: r.input.maxTurns, concurrency: r.input.concurrency, startedAt: r.startedAt, sessions: r.server.sessions(), skipped: r.skipped };
  }

  async start(input: OpenEnvStartInput): Promise<OpenEnvStatus> {
    if (this.running || this.starting) throw new DomainError('conflict', `An OpenEnv server already runs${this.running ? ` at ${this.running.server.url}` : ''}; stop it first`);
    this.starting = true;
    try {
      const { envs, skipped } = resolveEnvs(this.d.db, { selection: input.selection });
      if (envs.length === 0) throw new DomainError('invalid_input', `No environment to serve matches "${input.selection}"${skipped.length ? ` (${skipped.length} tool-use left out)` : ''}`);
      const tasks = taskList(envs, { seeds: input.seeds, seedStart: input.seedStart, hint: input.hint });
      if (tasks.length === 0) throw new DomainError('invalid_input', 'No task to serve: with the hint on, every selected environment lacks a hint');
      let next = 0;
      const served: Served = { svc: this.d.episodes(), envs, tasks, hint: input.hint, maxTurns: input.maxTurns, runtime: 'auto', nextTask: () => tasks[next++ % tasks.length]! };
      let server: OpenEnvServer;
      try {
        server = await startOpenEnvServer({ served, port: input.port, concurrency: input.concurrency, version: this.d.version, ...(this.d.log ? { log: this.d.log } : {}) });
      } catch (e) {
        const code = (e as { code?: unknown }).code;
        if (code === 'EADDRINUSE') throw new DomainError('conflict', `Port ${input.port} is in use on 127.0.0.1; choose another (0: any free port)`);
        throw e;
      }
      this.running = { server, input, envs: envs.length, tasks: tasks.length, skipped, startedAt: new Date().toISOString() };
      return this.status();
    } finally {
      this.starting = false;
    }
  }

  async stop(): Promise<OpenEnvStatus> {
    const r = this.running;
    this.running = null;
    if (r) await r.server.close();
    return this.status();
  }

  async close(): Promise<void> {
    await this.stop();
  }
}
