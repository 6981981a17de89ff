// SPADE's LLM environment validator (core/design/envValidator.ts, after spade/core/env_validator.py):
// a scripted model client answers; the prompts are our own words in SPADE's shape (a `{game_code}`
// field, doubled braces), except in the last test, which reads SPADE's own templates from SPADE_SRC
// and compares the messages with Python's own str.format of them.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { envValidatorMessages, envValidatorVerdict, rejectionReason, validateEnvironment, writeRejectedGame } from '../../core/design/envValidator';
import type { Chat } from '../../core/design/attempt';
import { pyFormat, readSpadeTexts } from '../../core/design/spadeCheckout';
import { tempDir } from '../helpers/tmp';

const tmp = tempDir('spade-validator-');
afterAll(() => tmp.cleanup());

const texts = {
  validator: {
    cognitive: { system: 'JUDGE (cognitive)', template: 'Is this fine?\n```python\n{game_code}\n```\nAnswer \\boxed{{yes}} or \\boxed{{no}}.' },
    toolUse: { system: 'JUDGE (tool use)', template: 'Solvable?\n{game_code}\n\\boxed{{yes}}' },
  },
};
const CODE = 'class G:\n    d = {"a": 1}\n';

const model = (answer: string | Error | 'hang', seen: unknown[] = []): Chat => ({
  complete: (messages, opts) => {
    seen.push(messages);
    if (answer === 'hang') return new Promise((_, fail) => opts?.signal?.addEventListener('abort', () => fail(new Error('aborted'))));
    if (answer instanceof Error) return Promise.reject(answer);
    return Promise.resolve({ text: answer, reasoning: null, toolCalls: [], finishReason: 'stop', usage: undefined } as unknown as Awaited<ReturnType<Chat['complete']>>);
  },
});

describe("SPADE's environment validator", () => {
  it('sends the system prompt and the template filled as str.format fills it, by game type', async () => {
    const seen: unknown[] = [];
    await validateEnvironment(CODE, { chat: model('\\boxed{yes}', seen), texts, toolUse: false });
    expect(seen[0]).toEqual([
      { role: 'system', content: 'JUDGE (cognitive)' },
      { role: 'user', content: `Is this fine?\n\`\`\`python\n${CODE}\n\`\`\`\nAnswer \\boxed{yes} or \\boxed{no}.` },
    ]);
    expect(envValidatorMessages(CODE, texts, true)[0]).toEqual({ role: 'system', content: 'JUDGE (tool use)' });
    expect(() => pyFormat('{other}', { game_code: '' })).toThrow(/str.format would not fill/);
  });

  it('keeps a game on yes / y / true, rejects it on anything else in the first \\boxed{}, with SPADE reason and stage', async () => {
    for (const a of ['Fine. \\boxed{yes}', '\\boxed{ Y }', '\\boxed{TRUE} then \\boxed{no}']) {
      const r = await validateEnvironment(CODE, { chat: model(a), texts, toolUse: false });
      expect([r.valid, r.kind, r.reason, r.stage]).toEqual([true, 'accepted', null, null]);
    }
    const why = `The success path is unreachable:\n${'x'.repeat(300)}\n\\boxed{no}`;
    const r = await validateEnvironment(CODE, { chat: model(why), texts, toolUse: false });
    expect([r.valid, r.kind, r.stage]).toEqual([false, 'rejected', 'env_validator']);
    expect(r.reasoning).toBe(why);
    expect(r.reason).toBe(`Environment validator rejected game: ${why.slice(0, 200).replace(/\n/g, ' ')}`);
    expect(rejectionReason('a\nb')).toBe('Environment validator rejected game: a b');
    expect((await validateEnvironment(CODE, { chat: model('\\boxed{maybe}'), texts, toolUse: true })).valid).toBe(false);
  });

  it('accepts what SPADE accepts: no verdict, a verdict split over lines, an empty answer, a failed call', async () => {
    expect(envValidatorVerdict('looks fine')).toMatchObject({ valid: true, kind: 'no-verdict' });
    // Python's `.` does not cross a newline: this box is not a verdict.
    expect(envValidatorVerdict('\\boxed{n\no}')).toMatchObject({ valid: true, kind: 'no-verdict' });
    const empty = await validateEnvironment(CODE, { chat: model(''), texts, toolUse: false });
    expect([empty.valid, empty.kind, empty.reasoning]).toEqual([true, 'empty', 'Empty response from validator']);
    const failed = await validateEnvironment(CODE, { chat: model(new Error('connection refused')), texts, toolUse: false });
    expect([failed.valid, failed.kind, failed.reasoning]).toEqual([true, 'error', 'Validation error: connection refused']);
  });

  it('fails the attempt with no verdict and nothing saved when the model does not answer in time', async () => {
    const r = await validateEnvironment(CODE, { chat: model('hang'), texts, toolUse: false, timeoutMs: 50 });
    expect([r.valid, r.kind, r.stage]).toEqual([false, 'timeout', null]);
  });

  it('saves a rejected game as save_rejected_game does: the stage in the name and header, the whole reasoning beside it', () => {
    const { file, reasonFile } = writeRejectedGame(tmp.dir, { code: CODE, rollout: 3, index: 7, skill: 'Data Retrieval', stage: 'env_validator', reasoning: 'why\n\\boxed{no}' });
    expect(file).toBe(join(tmp.dir, 'spade_games_rejected', 'reject_00003_007_data_retrieval_env_validator.py'));
    expect(readFileSync(file, 'utf8')).toBe(`"""SPADE self-play REJECTED game (stage=env_validator)"""\n\n${CODE}`);
    expect(readFileSync(reasonFile, 'utf8')).toBe('why\n\\boxed{no}');
  });

  const spadeSrc = process.env.SPADE_SRC ?? '';
  const haveSpade = !!spadeSrc && existsSync(join(spadeSrc, 'spade/core/env_validator.py'));
  if (!haveSpade) console.warn('[SPADE validator prompt test skipped] set SPADE_SRC to a SPADE checkout');
  it.skipIf(!haveSpade)("fills SPADE's own templates (SPADE_SRC) exactly as Python's str.format does", async () => {
    const real = await readSpadeTexts(spadeSrc);
    const code = 'x = {"k": [1, 2]}\nprint(f"{x}")\n';
    for (const [kind, toolUse] of [['cognitive', false], ['toolUse', true]] as const) {
      const py = spawnSync('python3', ['-I', '-c', 'import sys; sys.stdout.write(sys.stdin.read().split("\\0")[0].format(game_code=sys.argv[1]))', code], { input: `${real.validator[kind].template}\0`, encoding: 'utf8' });
      expect(py.status).toBe(0);
      expect(envValidatorMessages(code, real, toolUse)).toEqual([
        { role: 'system', content: real.validator[kind].system },
        { role: 'user', content: py.stdout },
      ]);
    }
  });
});
