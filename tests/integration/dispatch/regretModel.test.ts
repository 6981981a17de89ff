import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../core/memory/db';
import { startStandIn, type StandIn } from '../../helpers/standInOpenAi';
import { tempDir } from '../../helpers/tmp';
import { ciRay } from '../jobs/helpers';
import { cli, importPool } from './pool';

// A regret sweep played by a served model (the stand-in OpenAI server: no model can serve HTTP
// here) here, by the workbench's agent (core/episodes/agent.ts), and on the real Ray head, by the
// node's agent (native/dispatch/shard_agent.py): the server receives the same request bodies byte
// for byte, and every episode has the same return and transcript, in cognitive games and in tool-use
// games (tool calls as text, as the server's structured tool_calls, a tool that raises, an unknown one).
const ray = ciRay();
if (!ray) console.warn('[regret model sweep tests skipped] no Ray head: `.ci/services.sh start` (CI does)');
const d = ray ? describe : describe.skip;
const root = join(__dirname, '..', '..', '..');

interface SweepOut {
  sweep: string;
  run_id: string;
  envs: { env: string; r_hint: number; r_no_hint: number; regret: number }[];
  episodes: { hash: string; seed: number; hint: boolean; return: number | null; endedBy: string; failed: boolean; error: string | null; episodeId: number }[];
}

/** A model that answers from what it was sent (so concurrency does not change its answers): its turn count, boxed, some of it not ASCII. */
function answer(body: Record<string, unknown>): { content: string; finish_reason?: string; tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[] } {
  const messages = body.messages as { role: string; content: string }[];
  const turn = messages.filter((m) => m.role === 'assistant').length + 1;
  if (body.tools) {
    if (turn === 1) return { content: 'Je cherche. <tool_call>{"name": "lookup", "arguments": {"item": "apple"}}</tool_call>\n<tool_call>{"name": "nope", "arguments": {}}</tool_call>' };
    if (turn === 2) return { content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"x": 3, "y": 5.0}' } }, { id: 'call_2', type: 'function', function: { name: 'lookup', arguments: '{"item": "kiwi"}' } }] };
    return { content: messages.some((m) => m.role === 'tool' && m.content.includes('8')) ? 'So <answer>8</answer>' : 'no idea' };
  }
  const hinted = messages[0]!.content.includes('\n\nHINT: ');
  if (turn === 3 && !hinted) return { content: 'trop long… \\boxed{', finish_reason: 'length' };
  return { content: `Réponse ${turn}: <think>\\boxed{0}</think> so \\boxed{${turn + (hinted ? 1 : 0)}}` };
}

function transcripts(dataDir: string, runId: string): unknown[] {
  const db = openDatabase(join(dataDir, 'workbench.sqlite'));
  try {
    const rows = db.prepare("SELECT env_hash, hint_enabled, seed, meta FROM episodes WHERE json_extract(meta, '$.run') = ? ORDER BY env_hash, hint_enabled, seed").all(runId) as { env_hash: string; hint_enabled: number; seed: number; meta: string }[];
    return rows.map((r) => {
      const agent = (JSON.parse(r.meta) as { agent?: { messages?: unknown; endedBy?: unknown } }).agent;
      return { hash: r.env_hash, hint: r.hint_enabled, seed: r.seed, messages: agent?.messages, endedBy: agent?.endedBy };
    });
  } finally {
    db.close();
  }
}

d('regret --pool with a served model: the node sends what this workbench sends', () => {
  let tmp: ReturnType<typeof tempDir>;
  let server: StandIn;
  beforeAll(async () => {
    tmp = tempDir('spade-regret-model-');
    server = await startStandIn((body) => answer(body));
    await importPool(tmp.dir, [
      ...['001_pattern_recognition', '002_logical_deduction', '004_mathematical_reasoning'].map((n) => join(root, 'resources', 'seed-pack', 'games', `game_00000_${n}.py`)),
      ...['g01_seeded_win', 't01_tool_calls_then_answer', 't04_unknown_tool_and_tool_error'].map((n) => join(root, 'tests', 'fixtures', 'spade-corpus', `${n}.py`)),
    ]);
  }, 60_000);
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  it('the same requests byte for byte and the same returns here and on the Ray head', async () => {
    const args = ['regret', '--pool', '', '--estimator', 'paired', '--seeds', '2', '--max-turns', '4', '--endpoint', server.url, '--model', 'stand-in', '--json', '--data-dir', tmp.dir];
    const here = await cli([...args, '--quiet']);
    expect(here.code, here.err).toBe(0);
    const sentHere = [...server.rawRequests].sort();
    server.rawRequests.length = 0;
    const there = await cli([...args, '--on', `ray://${new URL(ray!.address).host}`, '--ray-python', join(ray!.bin, 'python'), '--shard-size', '8']);
    expect(there.code, there.err).toBe(0);
    expect(there.out).not.toContain('went another way');
    const a = JSON.parse(here.out) as SweepOut;
    const b = JSON.parse(there.out) as SweepOut;
    // The episodes really talked to the model: several turns, a reply cut by max_tokens, wins and losses.
    expect(sentHere.length).toBeGreaterThan(a.episodes.length);
    expect(a.episodes.map((e) => e.endedBy)).toContain('length');
    expect(a.episodes.some((e) => e.failed)).toBe(false);
    // Tool-use games took the tool path and won through it.
    expect(sentHere.filter((b) => b.includes('"tools":[')).length).toBeGreaterThan(4);
    expect(sentHere.some((b) => b.includes('"role":"tool","content":"Error calling lookup'))).toBe(true);
    expect(sentHere.some((b) => b.includes('"tool_call_id":"call_1"'))).toBe(true);
    // The server's arguments string {"x": 3, "y": 5.0} reached tool_add as json.loads reads it, here and on the node.
    expect(sentHere.some((b) => b.includes('"role":"tool","content":"8.0 (int)"'))).toBe(true);
    expect(a.envs.find((e) => e.env === 'ShopEnv')?.r_no_hint).toBe(1);
    expect([...server.rawRequests].sort()).toEqual(sentHere);
    const strip = (o: SweepOut) => ({ envs: o.envs, episodes: o.episodes.map(({ episodeId: _id, ...e }) => e) });
    expect(strip(b)).toEqual(strip(a));
    expect(transcripts(tmp.dir, b.run_id)).toEqual(transcripts(tmp.dir, a.run_id));
  }, 120_000);
});
