import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Services } from '../../../core/services/services';
import { ingest } from '../../../core/memory/repository';
import { sha256 } from '../../../core/memory/parse';
import { tempDir } from '../../helpers/tmp';

const FILE = join(process.cwd(), 'resources', 'seed-pack', 'tool-use', 'tooluse_001_data_retrieval.py');
const tmp = tempDir('spade-episodes-tools-');
let s: Services;
let hash: string;

beforeAll(() => {
  s = new Services({ dataDir: tmp.dir, shell: 'in-process' });
  const source = readFileSync(FILE, 'utf8');
  ingest(s.db, { source, path: FILE, fileStem: 'tooluse_001_data_retrieval' });
  hash = sha256(source);
});
afterAll(async () => {
  await s.close();
  tmp.cleanup();
});

describe('tool-use episodes', () => {
  it('plays solution() tool calls, and an OpenAI tool_calls trajectory of it replays without divergence', async () => {
    const ep = s.episodes;
    const { episode } = await ep.open({ hash, seed: 4, hint: false, label: '', runtime: 'pyodide' });
    const ran = await ep.run(episode.id, { kind: 'solution' }, { kind: 'done' }, 50);
    expect(ran.steps.at(-1)!.reward).toBe(1);
    expect(ran.steps.at(-1)!.terminated).toBe(true);
    // SPADE's orchestrator: solution()'s tool calls went to execute_tool (kept with the episode, not
    // steps); only the <answer> reached step. The same play as a training log: assistant tool_calls,
    // tool results, then the final answer.
    const toolTurns = (ran.episode.meta as { agent?: { toolTurns?: { calls: { name: string; arguments: unknown }[]; outputs: { output: string }[] }[] } }).agent?.toolTurns ?? [];
    expect(toolTurns.length).toBeGreaterThan(0);
    expect(ran.steps.filter((x) => x.kind === 'step').every((x) => !x.action!.includes('<tool_call>'))).toBe(true);
    const msgs: Record<string, unknown>[] = [{ role: 'user', content: ran.steps[0]!.observation }];
    for (const t of toolTurns) {
      msgs.push({ role: 'assistant', content: '', tool_calls: t.calls.map((c) => ({ type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })) });
      t.outputs.forEach((o, i) => msgs.push({ role: 'tool', name: t.calls[i]!.name, content: o.output }));
    }
    const last = ran.steps.at(-1)!;
    msgs.push({ role: 'assistant', content: `<think>sum it</think>${last.action}` });
    msgs.push({ role: 'user', content: last.observation, reward: last.reward });
    // No seed in the log: the search finds it by replaying, tool outputs included.
    const out = await ep.importTrajectories({ text: JSON.stringify({ messages: msgs }), fileName: 'tooluse_001_data_retrieval.json', seedSearchLimit: 50, runtime: 'pyodide' });
    const r = out.results[0]!;
    expect(r.boundBy).toBe('file');
    expect(r.seed).toBe(4);
    expect(r.report.divergence, JSON.stringify(r.report.divergence)).toBeNull();
    expect(r.report.compared).toBe(ran.steps.length);
    // A different final answer than the environment accepts is caught at its step.
    const wrong = msgs.map((m, i) => (i === msgs.length - 1 ? { ...m, content: 'Correct!', reward: 0 } : m));
    const bad = await ep.importTrajectories({ text: JSON.stringify({ messages: wrong, seed: 4 }), envHash: hash, seedSearchLimit: 1, runtime: 'pyodide' });
    expect(bad.results[0]!.seedFrom).toBe('recorded');
    expect(bad.results[0]!.report.divergence?.idx).toBe(1);
  });
});
