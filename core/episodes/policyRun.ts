/**
 * "Run until": a scripted policy plays on from where a live episode stands, in batches, until the
 * game ends, the turn budget is spent, a reward arrives, a state condition holds or N steps pass.
 */
import type { Policy } from '../api/calls/episodes';
import type { EpisodeContext } from './context';
import { CHUNK, moveTo, stillWanted, type Live } from './livePosition';
import { actionSourceFor, describePolicy, feedFromSource } from './policy';
import { playPlan } from './rollout';
import type { StateTree } from './stateDiff';
import { evaluate, parseCondition } from './until';

export type Until = { kind: 'done' } | { kind: 'reward' } | { kind: 'expr'; expr: string } | { kind: 'steps'; count: number };

/** Plays episode `id` on from its live session's cursor; returns why it stopped. The caller holds the episode's lock. */
export async function runPolicy(ctx: EpisodeContext, id: number, live: Live, policy: Policy, until: Until, maxSteps: number, signal?: AbortSignal): Promise<string> {
  const store = ctx.d.store;
  const m = ctx.meta(id);
  const cond = until.kind === 'expr' ? parseCondition(until.expr) : null;
  const src = await actionSourceFor(live.session, policy, m.seed, m.meta.toolUse === true);
  const start = live.cursor;
  // SPADE's rollout stops after the budget of agent turns: steps since the latest reset count.
  const recorded = store.steps(id);
  const lastReset = recorded.reduce((k, s) => (s.kind === 'reset' && s.idx <= start ? s.idx : k), 0);
  const used = recorded.filter((s) => s.kind === 'step' && s.idx > lastReset && s.idx <= start).length;
  const budgetLeft = Math.max(0, m.maxTurns - used);
  const r = await playPlan(live.session, feedFromSource(src, m.meta.toolUse === true), {
    firstIdx: start + 1,
    batch: CHUNK,
    stopWhenDone: true,
    maxSteps: Math.min(maxSteps, budgetLeft),
    stopAt: (s, n) => {
      if (until.kind === 'reward' && (s.reward ?? 0) > 0) return 'reward > 0';
      if (cond && evaluate(cond, s.state as StateTree)) return `state: ${cond.text}`;
      if (until.kind === 'steps' && n >= until.count && !(s.spade?.terminated || s.spade?.truncated)) return `${until.count} steps`;
      return null;
    },
    beforeBatch: async (cursor) => {
      if (!live.snapshots.has(cursor)) {
        const t = await live.session.snapshot();
        if (t) live.snapshots.set(cursor, t);
      }
    },
    afterBatch: async (kept) => {
      // Steps recorded before Cancel stay; none after it.
      stillWanted(signal);
      store.appendSteps(id, kept);
    },
  });
  live.cursor = start + r.steps.length + r.overshoot;
  // The interpreter went past the stop inside its batch: bring it back to the last recorded step.
  if (r.overshoot > 0) await moveTo(ctx, id, live, start + r.steps.length);
  const stopped = r.reason === 'budget' ? (budgetLeft <= maxSteps ? `budget of ${m.maxTurns} turns` : 'max steps') : r.reason;
  // Tool turns (a tool-use game's scripted tool calls, sent to execute_tool) are not steps: they
  // are kept where they happened, as a model episode keeps them, so replay puts them back.
  const agent = (m.meta.agent ?? {}) as { toolTurns?: unknown[] };
  const toolMeta = r.toolTurns.length ? { agent: { ...agent, toolTurns: [...(agent.toolTurns ?? []), ...r.toolTurns] } } : {};
  store.setDivergence(id, null, { policy: describePolicy(policy), ...toolMeta });
  return stopped;
}
