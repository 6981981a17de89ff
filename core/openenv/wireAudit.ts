/**
 * An audit of an environment served over OpenEnv's protocol, from the outside: only what a client can
 * see over the wire, so these are checks of their own, with ids of their own (`wire.*`), never SPADE's
 * audit ids (core/api/spadeRules.ts), which judge the program itself:
 *  - wire.determinism: the same seed and actions on two fresh sessions give the same observations,
 *    rewards and ends;
 *  - wire.seed_use: different seeds give different first observations (a server that ignores the
 *    seed gives every episode the same start);
 *  - wire.malformed_action: a step with an action of the wrong shape gets the server's error and the
 *    session still answers (a dead session or a silent acceptance is reported);
 *  - wire.reward_range: every reward is a finite number, within [-1, 1] (SPADE's clamped return,
 *    docs/spade-formats.md section 2) unless another range is given.
 */
import { errorMessage } from '../api/errorMessage';
import type { CheckResult, CheckStatus } from '../audit/types';
import { DomainError } from '../errors';
import { DEFAULT_LIMITS, describeServer, parseServerUrl, ServerError, WireSession, type ClientLimits, type ServerInfo } from './client';
import { actionFor, pinOf, playRemote, resetData, scriptedActor, type RemoteEpisode } from './remotePlay';

export const WIRE_CHECKS = ['wire.determinism', 'wire.seed_use', 'wire.malformed_action', 'wire.reward_range'] as const;
export type WireCheckId = (typeof WIRE_CHECKS)[number];

export interface WireAudit {
  url: string;
  server: { name: string | null; version: string | null; hintMode: ServerInfo['hintMode']; textField: string | null };
  verdict: 'pass' | 'warn' | 'fail';
  checks: (CheckResult & { id: WireCheckId })[];
  elapsedMs: number;
}

export interface WireAuditOptions {
  seeds: number[];
  /** Texts sent as the steps of each probe episode. */
  actions: string[];
  maxTurns: number;
  rewardRange: [number, number];
  /** Reset fields that pin the environment (default: pinOf, serve-env's first task's version). */
  reset?: Record<string, unknown>;
  limits?: ClientLimits;
  signal?: AbortSignal;
}

export const DEFAULT_WIRE_AUDIT: WireAuditOptions = { seeds: [0, 1, 2, 3], actions: ['\\boxed{0}', '\\boxed{1}', 'hello'], maxTurns: 3, rewardRange: [-1, 1] };

/** Per-episode ids a server may put in an observation; they differ between two plays by design. */
const VOLATILE = new Set(['workbench_episode', 'episode_id']);

function stable(obs: Record<string, unknown> | null): unknown {
  if (!obs) return null;
  return Object.fromEntries(Object.entries(obs).filter(([k]) => !VOLATILE.has(k)));
}

function trace(e: RemoteEpisode): unknown[] {
  return e.turns.map((t) => ({ observation: stable(t.observation), reward: t.reward, done: t.done, error: t.error }));
}

async function play(info: ServerInfo, seed: number, o: WireAuditOptions, limits: ClientLimits): Promise<RemoteEpisode> {
  const s = await WireSession.open(info.url, limits);
  try {
    return await playRemote(s, info, { seed, hint: false, maxTurns: o.maxTurns, actor: scriptedActor(o.actions), reset: o.reset ?? pinOf(info), ...(o.signal ? { signal: o.signal } : {}) });
  } finally {
    await s.close();
  }
}

function check(id: WireCheckId, status: CheckStatus, message: string, evidence: Record<string, unknown> = {}): CheckResult & { id: WireCheckId } {
  return { id, status, message, evidence };
}

async function malformed(info: ServerInfo, seed: number, pin: Record<string, unknown>, limits: ClientLimits): Promise<CheckResult & { id: WireCheckId }> {
  const id = 'wire.malformed_action';
  let s: WireSession;
  try {
    s = await WireSession.open(info.url, limits);
  } catch (e) {
    return check(id, 'fail', `Could not open a session: ${errorMessage(e)}`);
  }
  try {
    await s.reset({ ...resetData(info, seed, false), ...pin });
    // No field the schema asks for, one it does not know: an action of the wrong shape on any server.
    const bad = { __wire_probe__: [1, 2, 3] };
    let refused: string | null = null;
    let accepted = false;
    try {
      await s.step(bad);
      accepted = true;
    } catch (e) {
      if (e instanceof ServerError) refused = e.message;
      else return check(id, 'fail', `A malformed action killed the session: ${errorMessage(e)}`, { action: bad });
    }
    // The session must still answer after it.
    try {
      await s.state();
    } catch (e) {
      if (!(e instanceof ServerError)) return check(id, 'fail', `After a malformed action the session no longer answers: ${errorMessage(e)}`, { action: bad, refused });
    }
    try {
      await s.step(actionFor(info, '\\boxed{0}'));
    } catch (e) {
      if (!(e instanceof ServerError)) return check(id, 'fail', `After a malformed action a well-formed step kills the session: ${errorMessage(e)}`, { action: bad, refused });
    }
    if (accepted) return check(id, 'warn', 'The server accepted an action of the wrong shape without an error', { action: bad });
    return check(id, 'pass', 'A malformed action gets the server\'s error, and the session goes on answering', { action: bad, refused });
  } catch (e) {
    return check(id, 'fail', `The probe failed before its malformed step: ${errorMessage(e)}`);
  } finally {
    await s.close();
  }
}

export async function auditWire(url: string, opts: Partial<WireAuditOptions> = {}): Promise<WireAudit> {
  const o: WireAuditOptions = { ...DEFAULT_WIRE_AUDIT, ...opts };
  if (o.seeds.length < 2) throw new DomainError('invalid_input', 'The wire audit needs at least two seeds');
  const limits = o.limits ?? DEFAULT_LIMITS;
  const t0 = Date.now();
  const info = await describeServer(parseServerUrl(url), limits);
  const checks: (CheckResult & { id: WireCheckId })[] = [];
  const episodes: RemoteEpisode[] = [];
  const first = o.seeds[0]!;

  // Determinism: the first seed twice, on two fresh sessions.
  try {
    const a = await play(info, first, o, limits);
    const b = await play(info, first, o, limits);
    episodes.push(a, b);
    const ta = trace(a);
    const tb = trace(b);
    const at = ta.findIndex((x, i) => JSON.stringify(x) !== JSON.stringify(tb[i]));
    const differ = at >= 0 || ta.length !== tb.length;
    const idx = at >= 0 ? at : Math.min(ta.length, tb.length);
    checks.push(differ ? check('wire.determinism', 'fail', `Seed ${first} played twice with the same actions differs at turn ${idx}`, { seed: first, actions: o.actions, turn: idx, first: ta[idx] ?? null, second: tb[idx] ?? null, ignored: [...VOLATILE] }) : check('wire.determinism', 'pass', `Seed ${first} played twice with the same ${a.turns.length - 1} action(s) gives the same observations, rewards and ends`, { seed: first, actions: o.actions, turns: a.turns.length, ignored: [...VOLATILE] }));
  } catch (e) {
    checks.push(check('wire.determinism', 'fail', `Could not play seed ${first}: ${errorMessage(e)}`, { seed: first }));
  }

  // Seed use: the first observation of each seed.
  try {
    const starts = new Map<string, number[]>();
    for (const seed of o.seeds) {
      const s = await WireSession.open(info.url, limits);
      try {
        const r = await s.reset({ ...resetData(info, seed, false), ...(o.reset ?? pinOf(info)) });
        const k = JSON.stringify(stable(r.observation));
        starts.set(k, [...(starts.get(k) ?? []), seed]);
      } finally {
        await s.close();
      }
    }
    const groups = [...starts.values()];
    checks.push(
      groups.length === 1
        ? check('wire.seed_use', 'warn', `All ${o.seeds.length} seeds give the same first observation: the server seems to ignore the seed`, { seeds: o.seeds })
        : check('wire.seed_use', 'pass', `${o.seeds.length} seeds give ${groups.length} different first observations`, { seeds: o.seeds, same: groups.filter((g) => g.length > 1) }),
    );
  } catch (e) {
    checks.push(check('wire.seed_use', 'fail', `Could not reset with each seed: ${errorMessage(e)}`, { seeds: o.seeds }));
  }

  checks.push(await malformed(info, first, o.reset ?? pinOf(info), limits));

  // Reward range over every reward the probes saw.
  const [lo, hi] = o.rewardRange;
  const rewards = episodes.flatMap((e) => e.turns.filter((t) => t.error === null).map((t) => ({ seed: e.seed, turn: t.idx, reward: t.reward })));
  const bad = rewards.filter((r) => r.reward !== null && !Number.isFinite(r.reward));
  const out = rewards.filter((r) => r.reward !== null && Number.isFinite(r.reward) && (r.reward < lo || r.reward > hi));
  const seen = rewards.map((r) => r.reward).filter((r): r is number => r !== null && Number.isFinite(r));
  const range = seen.length ? [Math.min(...seen), Math.max(...seen)] : null;
  if (!rewards.length) checks.push(check('wire.reward_range', 'skip', 'No reward was seen (the probe episodes did not play)'));
  else if (bad.length) checks.push(check('wire.reward_range', 'fail', `${bad.length} reward(s) are not finite numbers`, { examples: bad.slice(0, 5) }));
  else if (out.length) checks.push(check('wire.reward_range', 'warn', `${out.length} of ${rewards.length} rewards fall outside [${lo}, ${hi}]`, { range, examples: out.slice(0, 5) }));
  else checks.push(check('wire.reward_range', 'pass', `All ${rewards.length} rewards seen are within [${lo}, ${hi}]${range ? ` (seen ${range[0]} to ${range[1]})` : ''}`, { range, count: rewards.length }));

  const verdict = checks.some((c) => c.status === 'fail') ? 'fail' : checks.some((c) => c.status === 'warn') ? 'warn' : 'pass';
  const m = info.metadata;
  return { url: info.url, server: { name: typeof m.name === 'string' ? m.name : null, version: typeof m.version === 'string' ? m.version : null, hintMode: info.hintMode, textField: info.textField }, verdict, checks, elapsedMs: Date.now() - t0 };
}
