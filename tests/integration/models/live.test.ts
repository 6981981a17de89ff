import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../../core/cli/main';
import type { CliIO } from '../../../core/cli/command';

// Live smoke test against a real OpenAI-compatible server (SGLang, vLLM, OpenAI, OpenRouter...).
// Runs only when SPADE_TEST_OPENAI_BASE_URL is set (model: SPADE_TEST_OPENAI_MODEL, key: SPADE_TEST_OPENAI_API_KEY).
const base = process.env.SPADE_TEST_OPENAI_BASE_URL;
const model = process.env.SPADE_TEST_OPENAI_MODEL ?? 'default';

describe.skipIf(!base)('live model endpoint (SPADE_TEST_OPENAI_BASE_URL)', () => {
  it('plays one seed-pack game hinted and unhinted with SPADE messages and returns', async () => {
    let out = '';
    let err = '';
    const io: CliIO = { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`) };
    const args = ['play', join(process.cwd(), 'resources', 'seed-pack', 'games', 'game_00000_005_spatial_reasoning.py'), '--endpoint', base!, '--model', model, '--seeds', '1', '--compare-hint', '--max-turns', '5', '--max-tokens', '1024', '--top-k', process.env.SPADE_TEST_OPENAI_TOP_K ?? 'none', '--runtime', 'pyodide', '--json'];
    if (process.env.SPADE_TEST_OPENAI_API_KEY) args.push('--api-key-env', 'SPADE_TEST_OPENAI_API_KEY');
    const code = await main(args, io);
    expect(err).toBe('');
    expect(code).toBe(0);
    const j = JSON.parse(out) as { episodes: { hint: boolean; return: number; messages: { role: string; content: string }[]; turns: { error: string | null }[] }[]; regret: { regret: number }[] };
    expect(j.episodes).toHaveLength(2);
    for (const e of j.episodes) {
      expect(e.turns.every((t) => t.error === null)).toBe(true);
      expect(e.messages[0]!.content.startsWith('You are playing a language game.')).toBe(true);
      expect(e.messages[0]!.content.includes('\n\nHINT: ')).toBe(e.hint);
      expect([-1, 0, 1].some((x) => Math.abs(e.return - x) <= 1)).toBe(true);
    }
    expect(typeof j.regret[0]!.regret).toBe('number');
  }, 600_000);
});
