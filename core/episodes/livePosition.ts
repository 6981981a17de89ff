/**
 * Where a live episode's session stands in its recording, and how it is moved there: snapshots
 * every SNAPSHOT_EVERY steps, restore the nearest one, re-execute the recorded steps after it.
 */
import { DomainError } from '../errors';
import type { EpisodeContext, PlayMode, RuntimeKind } from './context';
import { planOf, playPlan } from './rollout';
import type { EnvSession } from './session';
import type { StepRecord } from './episodeStore';

/** A snapshot every this many steps bounds a scrub to that many re-executed steps. */
export const SNAPSHOT_EVERY = 16;
/** Steps sent to the interpreter per round trip. */
export const CHUNK = SNAPSHOT_EVERY;

/** Cancel came: nothing more is recorded, and the call answers `cancelled` (LiveSessions.cancellable). */
export function stillWanted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new DomainError('cancelled', 'cancelled');
}

export interface Live {
  session: EnvSession;
  cursor: number;
  snapshots: Map<number, string>;
  runtime: RuntimeKind;
  /** Re-opened sessions are made the same way, or re-execution would not reproduce the recording. */
  mode: PlayMode;
}

/** Brings the session from step `from` (already applied) to step `to` by re-executing recorded steps, snapshotting on the way. */
export async function reexecute(live: Live, steps: StepRecord[], from: number, to: number, signal?: AbortSignal): Promise<number> {
  if (to <= from) {
    live.cursor = to;
    return 0;
  }
  const r = await playPlan(live.session, planOf(steps, from + 1, to), {
    firstIdx: from + 1,
    batch: CHUNK,
    stopWhenDone: false,
    maxSteps: Number.MAX_SAFE_INTEGER,
    afterBatch: async (_kept, cursor) => {
      stillWanted(signal);
      live.cursor = cursor;
      if (cursor % SNAPSHOT_EVERY === 0 && !live.snapshots.has(cursor)) {
        const t = await live.session.snapshot();
        if (t) live.snapshots.set(cursor, t);
      }
    },
  });
  live.cursor = to;
  return r.steps.length;
}

/** Moves the live session of episode `id` to step idx: restore the nearest snapshot at or before it, re-execute the rest. */
export async function moveTo(ctx: EpisodeContext, id: number, live: Live, idx: number, signal?: AbortSignal): Promise<number> {
  if (live.cursor === idx) return 0;
  const steps = ctx.d.store.steps(id);
  let base = -1;
  for (const k of live.snapshots.keys()) if (k <= idx && k > base) base = k;
  if (live.cursor < idx && live.cursor > base) return reexecute(live, steps, live.cursor, idx, signal);
  if (base < 0) {
    // No usable snapshot (state not copyable): start over in a fresh session.
    const m = ctx.meta(id);
    await live.session.close();
    live.session = await ctx.openSession(ctx.env(m.envHash).source, m.maxTurns, live.runtime, false, live.mode, signal);
    live.snapshots.clear();
    return reexecute(live, steps, -1, idx, signal);
  }
  await live.session.restore(live.snapshots.get(base)!);
  live.cursor = base;
  return reexecute(live, steps, base, idx, signal);
}

/** Appends one step the session just played, and snapshots where a later scrub will want one. */
export async function recordStep(ctx: EpisodeContext, id: number, live: Live, rec: Omit<StepRecord, 'state'>, known?: unknown): Promise<StepRecord> {
  const state = known !== undefined ? known : await live.session.state();
  const full = { ...rec, state };
  ctx.d.store.appendSteps(id, [full]);
  live.cursor = rec.idx;
  if (rec.idx % SNAPSHOT_EVERY === 0 || rec.kind === 'reset') {
    const t = await live.session.snapshot();
    if (t) live.snapshots.set(rec.idx, t);
  }
  return full;
}
