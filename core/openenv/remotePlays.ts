/**
 * The app's model plays of an environment another OpenEnv server serves (a URL), as model run
 * records (core/openenv/remoteRun.ts, the CLI's `openenv-play --endpoint` in the app): the endpoint
 * as the app's other model plays take it (core/api/calls/models.ts, `local` included), progress as
 * the regret runs report it (episodes.regretProgress, by runId) and Cancel as theirs
 * (episodes.regretCancel with the runId, which the handler passes on here), so the Runs page's
 * Cancel and the play panel's are the same call. Resume plays what a run has not played well.
 */
import type { Endpoint, ModelRun } from '../api/calls/models';
import { endpointSchema } from '../api/calls/models';
import { DomainError } from '../errors';
import type { ModelService } from '../runs/modelService';
import type { RunService } from '../runs/service';
import { DEFAULT_LIMITS, describeServer, parseServerUrl, type ClientLimits, type ServerInfo } from './client';
import { gamePin } from './remotePlay';
import type { RemoteEpisode } from './remotePlay';
import { publicUrl, runRemote, type RemoteEnvNames } from './remoteRun';

export interface RemotePlayInput {
  url: string;
  endpoint: Endpoint;
  seeds: number;
  seedStart: number;
  arms: ('hint' | 'nohint')[];
  maxTurns?: number | undefined;
  runId?: string | undefined;
  /** On a serve-env that serves several games, the one to play (an env_hash of its /tasks); default its first. */
  env?: string | undefined;
}

export interface RemotePlaysDeps {
  runs(): RunService;
  models(): ModelService;
  /** The app's run service's catalog knows the servers' names through this. */
  names: RemoteEnvNames;
  progress(p: { runId: string; done: number; total: number; etaSec: number | null }): void;
  defaultMaxTurns(): number;
  /** Keeps a played episode as a record the episode view opens (remoteEpisodes.ts's recordRemoteEpisode); its id goes into the run's row. */
  record?(info: ServerInfo, e: RemoteEpisode, o: { maxTurns: number; policy: Record<string, unknown>; label: string; pin: Record<string, unknown> }): number;
  limits?: ClientLimits;
}

/** The arms a server can play: the hinted one only where its /tasks says it takes a hint (serve-env). */
export function checkArms(info: Pick<ServerInfo, 'hintMode'>, arms: ('hint' | 'nohint')[]): void {
  if (arms.includes('hint') && (info.hintMode === null || info.hintMode === 'off')) {
    throw new DomainError('invalid_input', info.hintMode === null ? "This server has no hint (only the workbench's serve-env says it takes one): play the unhinted arm only" : 'This server serves unhinted episodes only (--hint off): play the unhinted arm only');
  }
  if (arms.includes('nohint') && info.hintMode === 'on') throw new DomainError('invalid_input', 'This server serves hinted episodes only (--hint on): play the hinted arm only');
}

/** What a server says of itself, for the URL page: its name, hint mode, action field and the games it serves (serve-env's /tasks, each once). */
export async function describeGames(url: string, limits: ClientLimits = DEFAULT_LIMITS): Promise<{ url: string; name: string | null; hintMode: ServerInfo['hintMode']; textField: string | null; games: { env: string; name: string }[] }> {
  const info = await describeServer(parseServerUrl(url), limits);
  const games = new Map<string, string>();
  for (const t of info.tasks?.tasks ?? []) {
    if (typeof t.env_hash === 'string' && !games.has(t.env_hash)) games.set(t.env_hash, typeof t.env_name === 'string' ? t.env_name.slice(0, 200) : t.env_hash.slice(0, 12));
  }
  return { url: publicUrl(info.url), name: typeof info.metadata.name === 'string' ? info.metadata.name.slice(0, 200) : null, hintMode: info.hintMode, textField: info.textField, games: [...games].map(([env, name]) => ({ env, name })) };
}

export class RemotePlays {
  /** Plays in progress, by runId: their stop, and their end (closeAll waits for it: the record is written before the database closes). */
  private readonly running = new Map<string, { abort: AbortController; ended: Promise<unknown> }>();

  constructor(private readonly d: RemotePlaysDeps) {}

  play(input: RemotePlayInput, skip?: (hint: boolean, seed: number) => boolean): Promise<ModelRun> {
    const runId = input.runId ?? `run-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    if (this.running.has(runId)) throw new DomainError('conflict', `A run ${runId} is already running`);
    const abort = new AbortController();
    const playing = this.playing(input, runId, abort, skip);
    this.running.set(runId, { abort, ended: playing.catch(() => {}) });
    return playing.finally(() => this.running.delete(runId));
  }

  private async playing(input: RemotePlayInput, runId: string, abort: AbortController, skip?: (hint: boolean, seed: number) => boolean): Promise<ModelRun> {
    const models = this.d.models();
    const cfg = models.config(input.endpoint);
    const client = models.client(cfg);
    const limits = this.d.limits ?? DEFAULT_LIMITS;
    const info = await describeServer(parseServerUrl(input.url), limits);
    checkArms(info, input.arms);
    const pin = gamePin(info, input.env);
    this.d.names.add(info, pin);
    const started = performance.now();
    const maxTurns = input.maxTurns ?? this.d.defaultMaxTurns();
    const record = this.d.record;
    let fresh = 0;
    const r = await runRemote(
      this.d.runs(),
      {
        info,
        client,
        model: cfg.model,
        endpoint: cfg.baseUrl,
        // As given (a key only by its secret's name), so a resume plays with the same settings.
        endpointConfig: { ...input.endpoint },
        sampling: { temperature: cfg.temperature, topP: cfg.topP, topK: cfg.topK, maxTokens: cfg.maxTokens, thinking: cfg.thinking },
        arms: input.arms,
        seeds: input.seeds,
        seedStart: input.seedStart,
        maxTurns,
        reset: pin,
        ...(record ? { record: (e: RemoteEpisode, policy: Record<string, unknown>) => record(info, e, { maxTurns, policy, label: `openenv.remote.play ${cfg.model}`, pin }) } : {}),
        limits,
        signal: abort.signal,
        ...(skip ? { skip } : {}),
        onProgress: (done, total) => {
          fresh++;
          const per = (performance.now() - started) / 1000 / fresh;
          this.d.progress({ runId, done, total, etaSec: (total - done) * per });
        },
      },
      runId,
    );
    return models.result(r.runId, abort.signal.aborted);
  }

  /** Plays what a run of this kind has not played well (cancelled, interrupted, failed episodes), with its own settings. */
  resume(runId: string): Promise<ModelRun> {
    const runs = this.d.runs();
    const run = runs.store.get(runId);
    if (!run) throw new DomainError('not_found', `No run ${runId}`);
    if (runs.isLive(runId)) throw new DomainError('conflict', `Run ${runId} is running`);
    const url = typeof run.config.endpoint.openenv === 'string' ? run.config.endpoint.openenv : null;
    if (run.runtime !== 'openenv' || !url) throw new DomainError('invalid_input', `Run ${runId} did not play an OpenEnv server`);
    const known = Object.keys(endpointSchema.shape);
    const kept = Object.fromEntries(Object.entries({ ...run.config.endpoint, ...run.config.sampling }).filter(([k, v]) => known.includes(k) && v !== undefined));
    const parsed = endpointSchema.safeParse(kept);
    if (!parsed.success) throw new DomainError('invalid_input', `Run ${runId} was played from the command line with an endpoint the app cannot rebuild (${parsed.error.issues[0]?.message ?? 'unknown'}); play it again with openenv-play`);
    const ok = new Set(runs.store.episodes(runId).filter((e) => e.status === 'ok').map((e) => `${e.hint ? 'h' : 'n'}:${e.seed}`));
    const env = typeof run.config.endpoint.openenvGame === 'string' ? run.config.endpoint.openenvGame : undefined;
    return this.play({ url, endpoint: parsed.data, seeds: run.seeds, seedStart: run.seedStart, arms: run.arms, maxTurns: run.maxTurns, runId, env }, (hint, seed) => ok.has(`${hint ? 'h' : 'n'}:${seed}`));
  }

  /** Asks a play to stop: no new episode starts, the model turn in flight is aborted. */
  cancel(runId: string): boolean {
    const p = this.running.get(runId);
    if (!p) return false;
    p.abort.abort();
    return true;
  }

  isOpenEnvRun(runId: string): boolean {
    const run = this.d.runs().store.get(runId);
    return run?.runtime === 'openenv';
  }

  async closeAll(): Promise<void> {
    const all = [...this.running.values()];
    for (const p of all) p.abort.abort();
    await Promise.all(all.map((p) => p.ended));
  }
}
