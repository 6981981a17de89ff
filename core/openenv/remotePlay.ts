/**
 * Playing an episode of an environment that another process serves over OpenEnv's protocol (./client.ts):
 * the action is the agent's text in the action's one required string field (serve-env's and
 * OpenEnv's template's `message`) or, on a server whose action has another shape, a JSON object the
 * agent gives; what the agent reads is the observation's `text` where it has one (serve-env's, with
 * SPADE's hint and conversion), else the observation's fields as JSON.
 * The episode ends when the server says `done`, after the budget of turns, or at a failure (a dead
 * session, a server error), which is kept as the last turn rather than thrown away.
 */
import { DomainError } from '../errors';
import { errorMessage } from '../api/errorMessage';
import type { ServerInfo, StepResultWire, WireSession } from './client';

export interface RemoteTurn {
  /** 0: the reset. */
  idx: number;
  /** What the agent sent (null at the reset). */
  text: string | null;
  action: Record<string, unknown> | null;
  observation: Record<string, unknown> | null;
  reward: number | null;
  done: boolean;
  error: string | null;
}

export interface RemoteEpisode {
  url: string;
  seed: number | null;
  hint: boolean;
  turns: RemoteTurn[];
  endedBy: 'done' | 'budget' | 'error' | 'stopped';
  /** The last reward (OpenEnv's result carries the reward of that step; serve-env gives SPADE's return at the end). */
  lastReward: number | null;
  sumReward: number;
}

/** What the agent reads of an observation. */
export function observationText(obs: Record<string, unknown> | null): string {
  if (!obs) return '';
  if (typeof obs.text === 'string') return obs.text;
  const rest = Object.fromEntries(Object.entries(obs).filter(([k]) => k !== 'metadata'));
  return JSON.stringify(rest, null, 1);
}

/** The action a text becomes on this server. */
export function actionFor(info: Pick<ServerInfo, 'textField'>, text: string): Record<string, unknown> {
  if (info.textField) return { [info.textField]: text };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new DomainError('invalid_input', "This server's action is not one text field: give the action as a JSON object (GET /schema says its fields)");
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new DomainError('invalid_input', "This server's action is a JSON object (GET /schema says its fields)");
  return v as Record<string, unknown>;
}

/** Reset data for a seed and hint: `hint` only goes to a server that takes one (serve-env's /tasks says so). */
export function resetData(info: Pick<ServerInfo, 'hintMode'>, seed: number | null, hint: boolean): Record<string, unknown> {
  if (hint && info.hintMode === null) throw new DomainError('invalid_input', 'This server has no hint: an OpenEnv server other than the workbench\'s serve-env says nothing of one, so it is played unhinted only');
  if (hint && info.hintMode === 'off') throw new DomainError('invalid_input', 'This server serves unhinted episodes only (--hint off)');
  if (!hint && info.hintMode === 'on') throw new DomainError('invalid_input', 'This server serves hinted episodes only (--hint on)');
  return { ...(seed !== null ? { seed } : {}), ...(info.hintMode !== null ? { hint } : {}) };
}

export function turnOf(idx: number, text: string | null, action: Record<string, unknown> | null, r: StepResultWire): RemoteTurn {
  return { idx, text, action, observation: r.observation, reward: r.reward, done: r.done, error: null };
}

/** The agent: given the turns so far, the next text to send, or null to stop. */
export type RemoteActor = (turns: RemoteTurn[], signal?: AbortSignal) => Promise<string | null>;

export async function playRemote(session: WireSession, info: ServerInfo, o: { seed: number | null; hint: boolean; maxTurns: number; actor: RemoteActor; reset?: Record<string, unknown>; signal?: AbortSignal; onTurn?: (t: RemoteTurn) => void }): Promise<RemoteEpisode> {
  const turns: RemoteTurn[] = [];
  const push = (t: RemoteTurn) => {
    turns.push(t);
    o.onTurn?.(t);
  };
  const end = (endedBy: RemoteEpisode['endedBy']): RemoteEpisode => {
    const played = turns.slice(1).filter((t) => t.error === null);
    return { url: info.url, seed: o.seed, hint: o.hint, turns, endedBy, lastReward: played.at(-1)?.reward ?? null, sumReward: played.reduce((a, t) => a + (t.reward ?? 0), 0) };
  };
  push(turnOf(0, null, null, await session.reset({ ...resetData(info, o.seed, o.hint), ...(o.reset ?? {}) })));
  for (let n = 1; n <= o.maxTurns; n++) {
    if (o.signal?.aborted) return end('stopped');
    const text = await o.actor(turns, o.signal);
    if (text === null) return end('stopped');
    const action = actionFor(info, text);
    try {
      const r = await session.step(action);
      push(turnOf(n, text, action, r));
      if (r.done) return end('done');
    } catch (e) {
      push({ idx: n, text, action, observation: null, reward: null, done: true, error: errorMessage(e) });
      return end('error');
    }
  }
  return end('budget');
}

/** An actor that sends the given texts in order, then stops. */
export function scriptedActor(texts: string[]): RemoteActor {
  return (turns) => Promise.resolve(texts[turns.length - 1] ?? null);
}

/**
 * Reset fields that pin one environment on a server that serves several: serve-env's `env` (its
 * first task's version), so that two resets with one seed mean the same game; nothing elsewhere.
 */
export function pinOf(info: Pick<ServerInfo, 'tasks'>): Record<string, unknown> {
  const h = info.tasks?.tasks[0]?.env_hash;
  return typeof h === 'string' ? { env: h } : {};
}

/** The reset fields that play `env` on this server (one of its /tasks' games), or its first game's when none is asked for. */
export function gamePin(info: Pick<ServerInfo, 'tasks'>, env: string | undefined): Record<string, unknown> {
  if (env === undefined) return pinOf(info);
  if (!(info.tasks?.tasks ?? []).some((t) => t.env_hash === env)) throw new DomainError('invalid_input', `This server serves no game ${env.slice(0, 12)} (its GET /tasks lists the games it serves)`);
  return { env };
}

/** An observation without the ids a server gives each episode (serve-env's recorded episode, OpenEnv's episode_id): what two sessions of one game compare on. */
export function withoutEpisodeIds(obs: Record<string, unknown> | null): Record<string, unknown> | null {
  if (!obs) return null;
  return Object.fromEntries(Object.entries(obs).filter(([k]) => k !== 'workbench_episode' && k !== 'episode_id'));
}
