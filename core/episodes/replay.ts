/**
 * Replay: re-execute a recording in a fresh session and find the first step where what happens
 * now differs from what was recorded. The comparison is a pure function of the two recordings.
 */
import { DomainError } from '../errors';
import type { Divergence, ReplayReport } from '../api/calls/episodes';
import type { EpisodeContext, RuntimeChoice } from './context';
import { planOf, playPlan, type RecordedToolTurn } from './rollout';
import { diffLines, diffStates, type StateTree } from './stateDiff';
import { toViews, type EpisodeMeta, type StepRecord } from './episodeStore';
import { modeOf } from './session';

/** Replays read this many recorded steps per interpreter round trip. */
const REPLAY_BATCH = 256;

/** The tool turns a model episode recorded (meta.agent.toolTurns), in order. */
export function recordedToolTurns(meta: Record<string, unknown>): RecordedToolTurn[] {
  const agent = meta.agent as { toolTurns?: { afterIdx?: unknown; calls?: unknown }[] } | undefined;
  const out: RecordedToolTurn[] = [];
  for (const t of agent?.toolTurns ?? []) {
    if (typeof t.afterIdx !== 'number' || !Array.isArray(t.calls)) continue;
    out.push({ afterIdx: t.afterIdx, calls: t.calls as RecordedToolTurn['calls'] });
  }
  return out.sort((a, b) => a.afterIdx - b.afterIdx);
}

export function firstDivergence(m: Pick<EpisodeMeta, 'hintEnabled' | 'hintText' | 'meta'>, recorded: StepRecord[], replayed: StepRecord[]): Divergence | null {
  const flagsRecorded = m.meta.flagsRecorded !== false;
  for (let k = 0; k < recorded.length; k++) {
    const a = recorded[k]!;
    const b = replayed[k];
    const fields: Divergence['fields'] = [];
    if (!b) fields.push('missing');
    else {
      if (a.observation !== null && a.observation !== b.observation) fields.push('observation');
      if (a.reward !== null && b.reward !== a.reward) fields.push('reward');
      if (flagsRecorded && a.kind === 'step' && a.terminated !== b.terminated) fields.push('terminated');
      if (flagsRecorded && a.kind === 'step' && a.truncated !== b.truncated) fields.push('truncated');
      if (flagsRecorded && !!a.error !== !!b.error) fields.push('error');
    }
    if (fields.length === 0) continue;
    const rView = toViews(m, recorded.slice(0, k + 1)).at(-1)!;
    const pView = b ? toViews(m, replayed.slice(0, k + 1)).at(-1)! : null;
    const stateChanges = b ? (a.state ? diffStates(a.state as StateTree, b.state as StateTree) : diffStates((replayed[k - 1]?.state ?? null) as StateTree, b.state as StateTree)) : [];
    return {
      idx: k,
      fields,
      recorded: rView,
      replayed: pView,
      stateChanges,
      observationDiff: b && a.observation !== null && b.observation !== null ? diffLines(a.observation, b.observation) : [],
    };
  }
  return null;
}

/** Re-executes a recording in a fresh session, comparing step by step; the replay is kept as its own episode. */
/** `signal` (Cancel): the replay's interpreter is stopped and nothing is recorded. */
export async function replayEpisode(ctx: EpisodeContext, id: number, opts: { runtime?: RuntimeChoice | undefined; source?: string; signal?: AbortSignal } = {}): Promise<ReplayReport> {
  const m = ctx.meta(id);
  const source = opts.source ?? ctx.env(m.envHash).source;
  const recorded = ctx.d.store.steps(id, true);
  const runtime: RuntimeChoice = opts.runtime ?? (m.runtime === 'cpython' ? 'cpython' : 'pyodide');
  const mode = modeOf(m.meta);
  const signal = opts.signal;
  // Cancel stops the session's calls as well as its load (see EnvSession.open).
  const session = await ctx.openSession(source, m.maxTurns, runtime, false, mode, signal);
  let replayed: StepRecord[];
  try {
    // A recording is replayed as it was made: every recorded step, no budget and no early stop
    // beyond the interpreter's own stop at an error (the rest cannot be compared).
    const toolTurns = recordedToolTurns(m.meta);
    replayed = (await playPlan(session, planOf(recorded, 0, recorded.length - 1, toolTurns, typeof m.meta.preseed === 'number' ? m.meta.preseed : undefined), { firstIdx: 0, batch: REPLAY_BATCH, stopWhenDone: false, maxSteps: recorded.length + toolTurns.length })).steps;
  } finally {
    await session.close();
  }
  if (signal?.aborted) throw new DomainError('cancelled', 'The replay was cancelled');
  const divergence = firstDivergence(m, recorded, replayed);
  const replayId = ctx.d.store.create({
    envHash: m.envHash,
    envName: m.envName,
    className: m.className,
    seed: m.seed,
    hintEnabled: m.hintEnabled,
    hintText: m.hintText,
    maxTurns: m.maxTurns,
    runtime: session.info.runtime,
    origin: 'replay',
    label: `replay of #${id}`,
    parentId: id,
    policy: { kind: 'replay', of: id },
    meta: { replayOf: id, ...(mode !== 'spade' ? { mode } : {}) },
  });
  ctx.d.store.appendSteps(replayId, replayed);
  ctx.d.store.setDivergence(replayId, divergence?.idx ?? null);
  ctx.d.store.setDivergence(id, divergence?.idx ?? null, {
    lastReplay: replayId,
    divergenceFields: divergence?.fields ?? [],
    divergenceStateChanges: divergence?.stateChanges.slice(0, 100) ?? [],
  });
  ctx.d.changed?.([id, replayId]);
  return { episodeId: id, replayId, compared: Math.min(recorded.length, replayed.length), divergence };
}
