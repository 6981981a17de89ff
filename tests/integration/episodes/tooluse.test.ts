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
    // the same play as a training log: assistant tool_calls, tool results, the final answer
    const msgs: Record<string, unknown>[] = [{ role: 'user', content: ran.steps[0]!.observation }];
    for (const st of ran.steps.slice(1)) {
      const call = /<tool_call>(.*)<\/tool_call>/s.exec(st.action!);
      if (call) {
        const c = JSON.parse(call[1]!) as { name: string; arguments: unknown };
        msgs.push({ role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } }] });
        for (const t of st.info.tool_messages as { name: string; content: string }[]) msgs.push({ role: 'tool', name: t.name, content: t.content });
      } else {
        msgs.push({ role: 'assistant', content: `<think>sum it</think>${st.action}` });
        msgs.push({ role: 'user', content: st.observation, reward: st.reward });
      }
    }
    const out = await ep.importTrajectories({ text: JSON.stringify({ messages: msgs }), fileName: 'tooluse_001_data_retrieval.json', seedSearchLimit: 50, runtime: 'pyodide' });
    const r = out.results[0]!;
    expect(r.boundBy).toBe('file');
    expect(r.seed).toBe(4);
    expect(r.report.divergence).toBeNull();
    expect(r.report.compared).toBe(ran.steps.length);
    // a tool result that the environment would not give is caught at its step
    const tampered = msgs.map((m) => (m.role === 'tool' ? { ...m, content: 'P999: Fake' } : m));
    const bad = await ep.importTrajectories({ text: JSON.stringify({ messages: tampered, seed: 4 }), envHash: hash, seedSearchLimit: 1, runtime: 'pyodide' });
    expect(bad.results[0]!.seedFrom).toBe('recorded');
    expect(bad.results[0]!.report.divergence?.idx).toBe(1);
  });
});
