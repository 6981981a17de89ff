/**
 * A model playing an environment another OpenEnv server serves, as a model run (core/runs), with the
 * same model client as every local play (core/models/client.ts: an endpoint, or `local`, the embedded
 * model). The run's one "environment" is the server: its hash is sha256 of `openenv:` + the URL (no
 * library version has such a hash), and its name says where it was served. Each (arm, seed) is one
 * episode on a fresh /ws session; the return recorded is the last reward (serve-env's SPADE return),
 * and a failed episode (dead session, model error) is recorded as failed and left out of the means.
 */
import { createHash } from 'node:crypto';
import { errorMessage } from '../api/errorMessage';
import type { ChatClient, ChatMessage } from '../models/client';
import type { RunService } from '../runs/service';
import type { EnvCatalog, EnvSourceInfo } from '../episodes/catalog';
import { WireSession, type ClientLimits, type ServerInfo } from './client';
import { observationText, playRemote, type RemoteActor, type RemoteEpisode } from './remotePlay';

/** The hint a remote run plays with: the server's own (serve-env's), which the client never sees apart from the observation. */
const SERVER_HINT = "(the server's own hint)";

/**
 * The URL as stored (a run's selection and config, a wire audit): without its `?token=`, which is a
 * secret (serve-env's web-host token rule) and never written to the database.
 */
export function publicUrl(url: string): string {
  const u = new URL(url);
  u.searchParams.delete('token');
  return u.href;
}

/** Reset fields that pin one game on a server that serves several (remotePlay.ts's pinOf: serve-env's `env`). */
export type Pin = Record<string, unknown>;

/**
 * The "environment" a remote play records: the server's public URL and, on a server that serves
 * several games, the game pinned (serve-env's `env`), so two games of one server never share a hash
 * (and a run's per-environment rows never mix them). No library version has such a hash.
 */
export function remoteHash(url: string, pin: Pin = {}): string {
  const env = typeof pin.env === 'string' ? `#env=${pin.env}` : '';
  return createHash('sha256').update(`openenv:${publicUrl(url)}${env}`).digest('hex');
}

/**
 * The names of the servers this process has played, for a run service whose catalog is the
 * library's (the app's): the run's rows then say the environment is the OpenEnv server.
 */
export class RemoteEnvNames {
  private readonly known = new Map<string, EnvSourceInfo>();

  add(info: ServerInfo, pin: Pin = {}): void {
    const one = remoteCatalog({ byHash: () => null }, info, pin);
    const hash = remoteHash(info.url, pin);
    const self = one.byHash(hash);
    if (self) this.known.set(hash, self);
  }

  over(inner: Pick<EnvCatalog, 'byHash'>): Pick<EnvCatalog, 'byHash'> {
    return { byHash: (h) => this.known.get(h) ?? inner.byHash(h) };
  }
}

/** The served game's name where the server says it (serve-env's task of the pinned game, else its first), else the server's. */
export function remoteName(info: Pick<ServerInfo, 'metadata' | 'tasks' | 'url'>, pin: Pin = {}): string {
  const tasks = info.tasks?.tasks ?? [];
  const task = (typeof pin.env === 'string' ? tasks.find((t) => t.env_hash === pin.env) : tasks[0])?.env_name;
  const n = typeof task === 'string' && task ? task.slice(0, 100) : typeof info.metadata.name === 'string' ? info.metadata.name.slice(0, 100) : 'OpenEnv environment';
  return `${n} (OpenEnv ${new URL(info.url).host})`;
}

/** The run service's catalog, knowing the served environment's name and whether it takes a hint. */
export function remoteCatalog(inner: Pick<EnvCatalog, 'byHash'>, info: ServerInfo, pin: Pin = {}): Pick<EnvCatalog, 'byHash'> {
  const hash = remoteHash(info.url, pin);
  const self: EnvSourceInfo = { hash, source: '', name: remoteName(info, pin), className: null, hint: info.hintMode === null || info.hintMode === 'off' ? null : SERVER_HINT, toolUse: false, fileStem: null };
  return { byHash: (h) => (h === hash ? self : inner.byHash(h)) };
}

/**
 * The model as the agent: the first user message is the reset observation (serve-env's `prompt`,
 * SPADE's first user message, where it gives one), then each later observation as the next user
 * message; the reply is sent as the action's text.
 */
export function modelActor(client: Pick<ChatClient, 'complete'>): RemoteActor & { messages: ChatMessage[] } {
  const messages: ChatMessage[] = [];
  const actor = async (turns: Parameters<RemoteActor>[0], signal?: AbortSignal): Promise<string | null> => {
    const last = turns.at(-1)!;
    const obs = last.observation;
    const user = last.idx === 0 && obs && typeof obs.prompt === 'string' ? obs.prompt : observationText(obs);
    messages.push({ role: 'user', content: user });
    const c = await client.complete(messages, signal ? { signal } : {});
    messages.push({ role: 'assistant', content: c.text });
    return c.text;
  };
  return Object.assign(actor, { messages });
}

export interface RemoteRunSpec {
  info: ServerInfo;
  client: Pick<ChatClient, 'complete'>;
  model: string;
  endpoint: string;
  sampling: { temperature: number; topP: number; topK: number | null; maxTokens: number; thinking: boolean | null };
  arms: ('hint' | 'nohint')[];
  seeds: number;
  seedStart: number;
  maxTurns: number;
  /** Extra reset fields (serve-env's `env` or `task_id`). */
  reset?: Record<string, unknown>;
  limits?: ClientLimits;
  signal?: AbortSignal;
  onEpisode?: (e: RemoteEpisode, failed: string | null) => void;
  /** Keeps each played episode as a record (remoteEpisodes.ts's recordRemoteEpisode): its id goes into the run's row. */
  record?: (e: RemoteEpisode, policy: Record<string, unknown>) => number;
  /** After each episode recorded (or skipped): how many of the run's episodes are done. */
  onProgress?: (done: number, total: number) => void;
  /** The endpoint as the run keeps it (the app's: as given, a key only by its secret's name); default: its URL and model. */
  endpointConfig?: Record<string, unknown>;
  /** Episodes already played well (a resume): not played again. */
  skip?: (hint: boolean, seed: number) => boolean;
}

export async function runRemote(runs: RunService, spec: RemoteRunSpec, runId = `run-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`): Promise<{ runId: string; episodes: { seed: number; hint: boolean; ret: number | null; endedBy: string; error: string | null; turns: number }[] }> {
  const hash = remoteHash(spec.info.url, spec.reset ?? {});
  const url = publicUrl(spec.info.url);
  const total = spec.arms.length * spec.seeds;
  let done = 0;
  runs.begin({ id: runId, model: spec.model, endpoint: spec.endpoint, config: { endpoint: { ...(spec.endpointConfig ?? { baseUrl: spec.endpoint, model: spec.model }), openenv: url, ...(typeof spec.reset?.env === 'string' ? { openenvGame: spec.reset.env } : {}) }, sampling: spec.sampling, hintText: spec.info.hintMode === null || spec.info.hintMode === 'off' ? null : SERVER_HINT }, hintSource: spec.info.hintMode === null ? 'none' : 'server', seeds: spec.seeds, seedStart: spec.seedStart, arms: spec.arms, maxTurns: spec.maxTurns, runtime: 'openenv', selection: `openenv:${url}`, hashes: [hash], estimator: 'paired' });
  const out: { seed: number; hint: boolean; ret: number | null; endedBy: string; error: string | null; turns: number }[] = [];
  let status: 'done' | 'failed' | 'cancelled' = 'done';
  let runError: string | null = null;
  try {
    for (const arm of spec.arms) {
      for (let seed = spec.seedStart; seed < spec.seedStart + spec.seeds; seed++) {
        if (spec.signal?.aborted) {
          status = 'cancelled';
          return { runId, episodes: out };
        }
        const hint = arm === 'hint';
        if (spec.skip?.(hint, seed)) {
          spec.onProgress?.(++done, total);
          continue;
        }
        let ep: RemoteEpisode | null = null;
        let failed: string | null = null;
        try {
          const s = await WireSession.open(spec.info.url, spec.limits);
          try {
            ep = await playRemote(s, spec.info, { seed, hint, maxTurns: spec.maxTurns, actor: modelActor(spec.client), ...(spec.reset ? { reset: spec.reset } : {}), ...(spec.signal ? { signal: spec.signal } : {}) });
          } finally {
            await s.close();
          }
          if (ep.endedBy === 'error') failed = ep.turns.at(-1)?.error ?? 'the session failed';
          if (ep.endedBy === 'stopped') failed = 'stopped';
        } catch (e) {
          failed = errorMessage(e);
        }
        // An episode cut by Cancel is not a failure of the server or the model: it is left unrecorded, to play on a resume.
        if (spec.signal?.aborted) {
          status = 'cancelled';
          return { runId, episodes: out };
        }
        const ret = failed ? null : (ep?.lastReward ?? 0);
        const endedBy = failed ? 'error' : ep!.endedBy === 'done' ? 'env' : 'budget';
        const episodeId = ep && spec.record ? spec.record(ep, { kind: 'llm', model: spec.model, endpoint: spec.endpoint, runId, ...spec.sampling }) : null;
        runs.recordRow(runId, { envHash: hash, hint, seed, status: failed ? 'failed' : 'ok', ret, endedBy, error: failed, episodeId });
        out.push({ seed, hint, ret, endedBy, error: failed, turns: ep ? ep.turns.length - 1 : 0 });
        if (ep) spec.onEpisode?.(ep, failed);
        spec.onProgress?.(++done, total);
      }
    }
    return { runId, episodes: out };
  } catch (e) {
    status = 'failed';
    runError = errorMessage(e);
    throw e;
  } finally {
    runs.end(runId, status, runError);
  }
}
