import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Services } from '../../../core/services/services';
import { ingest } from '../../../core/memory/repository';
import { sha256 } from '../../../core/memory/parse';
import { tempDir } from '../../helpers/tmp';

// Issue 46: a tool-use solution() that describes its calls in words, then the answer (the shape of
// SPADE's own prompt examples), is played by the episodes' `solution` policy as those calls (to
// execute_tool), then the answer, as the audit plays it; not sent whole as one answer.
const tmp = tempDir('spade-episodes-described-');
let s: Services;
const hashes: Record<string, string> = {};

beforeAll(() => {
  s = new Services({ dataDir: tmp.dir, shell: 'in-process' });
  for (const name of ['tool_pantry', 'tool_steps']) {
    const file = join(process.cwd(), 'tests', 'integration', 'audit', 'fixtures', 'issue46', `${name}.py`);
    const source = readFileSync(file, 'utf8');
    ingest(s.db, { source, path: file, fileStem: name });
    hashes[name] = sha256(source);
  }
});
afterAll(async () => {
  await s.close();
  tmp.cleanup();
});

describe('the solution policy plays a described tool-use solution()', () => {
  it.each([
    ['tool_pantry', 'pyodide', 3],
    ['tool_pantry', 'cpython', 3],
    ['tool_steps', 'pyodide', 3],
    ['tool_steps', 'cpython', 3],
  ] as const)('%s in %s: the described calls reach execute_tool, then the answer wins', async (name, runtime, calls) => {
    const ep = s.episodes;
    const { episode } = await ep.open({ hash: hashes[name]!, seed: 0, hint: false, label: '', runtime });
    const ran = await ep.run(episode.id, { kind: 'solution' }, { kind: 'done' }, 50);
    const last = ran.steps.at(-1)!;
    expect(last.reward, JSON.stringify(ran.steps.map((x) => x.action))).toBe(1);
    expect(last.terminated).toBe(true);
    expect(last.action).not.toContain('go(');
    const toolTurns = (ran.episode.meta as { agent?: { toolTurns?: unknown[] } }).agent?.toolTurns ?? [];
    expect(toolTurns.length).toBe(calls);
  }, 120_000);
});
