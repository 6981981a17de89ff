/**
 * Trajectory import: bind OpenAI-style messages to a library environment, find the seed that deals
 * their first observation when none is recorded, record them and replay them.
 */
import { DomainError } from '../errors';
import type { EnvSourceInfo } from './catalog';
import type { EpisodeContext, RuntimeChoice } from './context';
import { replayEpisode } from './replay';
import { feedOf, playPlan } from './rollout';
import type { StepRecord } from './episodeStore';
import { candidateStems, parseTrajectories, type Trajectory, type TrajectoryStep } from './trajectory';

const FRESH_SEED_TRIES = 64;
const MAX_CONFIRMATIONS = 20;

export function bind(ctx: EpisodeContext, t: Trajectory, fileName: string | undefined, envHash: string | undefined): { env: EnvSourceInfo; by: 'hash' | 'file' | 'given' } {
    if (envHash) return { env: ctx.env(envHash), by: 'given' };
    if (t.envHash) {
      const env = ctx.d.catalog.byHash(t.envHash);
      if (env) return { env, by: 'hash' };
    }
    for (const stem of candidateStems(t.gameFile, fileName)) {
      const env = ctx.d.catalog.byStem(stem);
      if (env) return { env, by: 'file' };
    }
    throw new DomainError(
      'not_found',
      `Trajectory ${t.index + 1}: cannot tell which environment it was played in (no known env_hash, and no game file name matches the library${t.gameFile ? `: ${t.gameFile}` : ''}); pass envHash`,
    );
  }

  /** Seeds 0..limit-1 until reset's first observation equals the recorded one (fresh session for each try is too slow; a leaky game is re-checked fresh). */
export async function findSeed(
    ctx: EpisodeContext,
    source: string,
    maxTurns: number,
    runtime: RuntimeChoice,
    observation: string,
    limit: number,
    confirm?: (seed: number) => Promise<boolean>,
    signal?: AbortSignal,
  ): Promise<{ seed: number | null; tried: number }> {
    const session = await ctx.openSession(source, maxTurns, runtime, false, 'spade', signal);
    // Several seeds can deal the same first observation (a game that shows only part of its state):
    // with `confirm`, a candidate must also reproduce the rest of the recording; else the first one wins.
    let fallback: { seed: number; tried: number } | null = null;
    let confirmed = 0;
    try {
      for (let s = 0; s < limit; s++) {
        if (signal?.aborted) throw new DomainError('cancelled', 'The seed search was cancelled');
        const r = await session.reset(0, s);
        if (r.observation !== observation) continue;
        if (!confirm) return { seed: s, tried: s + 1 };
        fallback ??= { seed: s, tried: s + 1 };
        if (await confirm(s)) return { seed: s, tried: s + 1 };
        if (++confirmed >= MAX_CONFIRMATIONS) return fallback;
      }
    } finally {
      await session.close();
    }
    if (fallback) return { ...fallback, tried: limit };
    // A game that leaks state across reset deals differently on a reused instance: try the
    // first seeds again, each on a fresh instance (slower, so bounded more tightly).
    const fresh = Math.min(limit, FRESH_SEED_TRIES);
    for (let s = 0; s < fresh; s++) {
      if (signal?.aborted) throw new DomainError('cancelled', 'The seed search was cancelled');
      const one = await ctx.openSession(source, maxTurns, runtime, false, 'spade', signal);
      try {
        const r = await one.reset(0, s);
        if (r.observation === observation) return { seed: s, tried: limit + s + 1 };
      } finally {
        await one.close();
      }
    }
    return { seed: null, tried: limit + fresh };
  }

  /** Whether a seed reproduces every recorded observation and reward of a trajectory. */
export async function agrees(ctx: EpisodeContext, source: string, maxTurns: number, runtime: RuntimeChoice, seed: number, t: Trajectory, signal?: AbortSignal): Promise<boolean> {
    const session = await ctx.openSession(source, maxTurns, runtime, false, 'spade', signal);
    try {
      const r = await session.reset(0, seed);
      if (r.observation !== t.initialObservation) return false;
      let k = 0;
      const played = await playPlan(
        session,
        feedOf(() => {
          const x = t.steps[k++];
          if (!x) return null;
          return x.tool ? { kind: 'tool', calls: x.tool.calls, raw: x.raw } : { kind: 'step', action: x.action, raw: null };
        }),
        { firstIdx: 1, batch: 256, stopWhenDone: false, maxSteps: t.steps.length },
      );
      // Tool outputs count too: they tell apart seeds whose first observation is the same.
      const toolOut = played.toolTurns.map((tt) => tt.outputs.map((o) => o.output));
      const tools = t.steps.filter((x) => x.tool);
      if (tools.some((x, i) => x.tool!.outputs.length > 0 && JSON.stringify(x.tool!.outputs) !== JSON.stringify(toolOut[i] ?? null))) return false;
      const steps = t.steps.filter((x) => !x.tool);
      return steps.every((x, i) => {
        const g = played.steps[i];
        if (!g) return false;
        return (x.observation === null || x.observation === g.observation) && (x.reward === null || x.reward === g.reward);
      });
    } finally {
      await session.close();
    }
  }

/**
 * `signal` (Cancel): the seed search's and the replay's interpreters are stopped, and the import is
 * undone (the episodes it recorded so far are deleted), so a cancelled import leaves nothing.
 */
export async function importTrajectories(
    ctx: EpisodeContext,
    input: { text: string; fileName?: string | undefined; envHash?: string | undefined; seed?: number | undefined; seedSearchLimit: number; thinking?: boolean | undefined; runtime?: RuntimeChoice | undefined },
    signal?: AbortSignal,
  ) {
    const created: number[] = [];
    try {
      return await importNow(ctx, input, created, signal);
    } catch (e) {
      if (signal?.aborted && created.length) {
        ctx.d.store.delete(created);
        ctx.d.changed?.(created);
      }
      throw e;
    }
  }

async function importNow(ctx: EpisodeContext, input: Parameters<typeof importTrajectories>[1], created: number[], signal?: AbortSignal) {
    const trajs = parseTrajectories(input.text, input.thinking);
    const defaults = ctx.d.defaults();
    const runtime: RuntimeChoice = input.runtime ?? 'auto';
    const results = [];
    for (const t of trajs) {
      if (signal?.aborted) throw new DomainError('cancelled', 'The import was cancelled');
      const { env, by } = bind(ctx, t, input.fileName, input.envHash);
      const maxTurns = defaults.maxTurns;
      let seed: number | null = input.seed ?? t.seed;
      let seedFrom: 'recorded' | 'given' | 'search' | 'none' = input.seed !== undefined ? 'given' : t.seed !== null ? 'recorded' : 'none';
      let tried = 0;
      if (seed === null && t.initialObservation !== null) {
        const found = await findSeed(ctx, env.source, maxTurns, runtime, t.initialObservation, input.seedSearchLimit, (candidate) => agrees(ctx, env.source, maxTurns, runtime, candidate, t, signal), signal);
        tried = found.tried;
        if (found.seed !== null) {
          seed = found.seed;
          seedFrom = 'search';
        }
      }
      if (signal?.aborted) throw new DomainError('cancelled', 'The import was cancelled');
      const id = ctx.d.store.create({
        envHash: env.hash,
        envName: env.name,
        className: env.className,
        seed,
        hintEnabled: t.hint !== null,
        hintText: t.hint,
        maxTurns,
        runtime,
        origin: 'imported',
        label: `${input.fileName ?? 'trajectory'}${trajs.length > 1 ? ` #${t.index + 1}` : ''}`,
        policy: { kind: 'trajectory' },
        meta: { flagsRecorded: false, toolUse: t.toolUse, boundBy: by, seedFrom, seedsTried: tried, fileName: input.fileName ?? null, ...toolTurnsMeta(t) },
      });
      const steps: StepRecord[] = [
        { idx: 0, kind: 'reset', action: null, rawAction: null, seed, observation: t.initialObservation, reward: null, terminated: false, truncated: false, info: {}, error: null, state: null, types: null },
        ...t.steps.filter((s) => !s.tool).map((s, i) => ({
          idx: i + 1,
          kind: 'step' as const,
          action: s.action,
          rawAction: s.raw === s.action ? null : s.raw,
          seed: null,
          observation: s.observation,
          reward: s.reward,
          terminated: false,
          truncated: false,
          info: {},
          error: null,
          state: null,
          types: null,
        })),
      ];
      created.push(id);
      ctx.d.store.appendSteps(id, steps);
      const report = await replayEpisode(ctx, id, { runtime, source: env.source, ...(signal ? { signal } : {}) });
      results.push({ episodeId: id, envHash: env.hash, envName: env.name, boundBy: by, seed, seedFrom, seedsTried: tried, report });
    }
    return { results };
  }

/** A trajectory's tool turns where they happened (after the step with index afterIdx; 0 is the reset), as episodes keep them. */
function toolTurnsMeta(t: Trajectory): { agent?: { toolTurns: { afterIdx: number; calls: NonNullable<TrajectoryStep['tool']>['calls']; outputs: { output: string; returncode: number }[]; raw: string }[] } } {
  const toolTurns = [];
  let idx = 0;
  for (const s of t.steps) {
    if (!s.tool) {
      idx++;
      continue;
    }
    toolTurns.push({ afterIdx: idx, calls: s.tool.calls, outputs: s.tool.outputs.map((output) => ({ output, returncode: 0 })), raw: s.raw });
  }
  return toolTurns.length ? { agent: { toolTurns } } : {};
}
