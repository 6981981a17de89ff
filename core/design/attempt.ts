/**
 * One game of a design round, attempt by attempt: the designer's prompt (seeds drawn afresh for
 * every attempt, as SPADE draws them), its answer, the program taken from it, SPADE's load checks,
 * SPADE's random-guess test and the workbench's audit; on a rejection the next attempt; on
 * acceptance a hint written by a model from the code. Play and class come after the game is in
 * memory (core/design/round.ts). Every attempt is returned whole: nothing a model wrote is lost.
 *
 * Feedback: SPADE's default re-samples a rejected game with no word about why; its repair mode
 * sends the error back in the same conversation. `feedback: 'repair'` (the default here, as the
 * researcher wants to see whether the model can fix its game) does the latter; `'spade'` the former.
 */
import type { ChatMessage, Completion } from '../models/client';
import type { CheckResult, EnvAudit } from '../audit/types';
import { designerPrompt, extractProgram, type Difficulty, type GameClass } from './prompt';
import { drawSeeds, type MemoryRecord } from './seeds';
import { HINT_TRIES, hintMessages, parseHint } from './hint';
import { hintTooLarge } from '../api/limits';
import { errorMessage } from '../api/errors';

export interface Chat {
  complete(messages: ChatMessage[], opts?: { signal?: AbortSignal }): Promise<Completion>;
}

export interface PlayOutcome {
  rHint: number;
  rNoHint: number;
  regret: number;
  /** Share of unhinted episodes with return above 0 (SPADE's actor_win_rate). */
  winRate: number;
  hintedWinRate: number;
  episodes: number;
  failed: number;
  /** Where the episodes were played: `local`, or the cluster target (`ray://HOST:PORT`, `slurm:HOST`). */
  on?: string;
  /** Which estimator made `regret` (core/episodes/estimator.ts); absent in plays stored before it was said: paired. */
  estimator?: 'spade' | 'paired';
}

export interface DesignDeps {
  designer: Chat;
  /** Writes hints; the designer when absent (SPADE's 'self' hint mode). */
  hinter?: Chat;
  /** SPADE's load checks, its random-guess test and the workbench's audit of a program. */
  check(code: string): Promise<EnvAudit>;
  /**
   * The workbench's hint-leak check of an accepted program with the hint just written for it. The
   * program's audit ran before the hint existed, so without this a designed hint is never checked.
   * It is the workbench's check, not SPADE's: it is recorded and never rejects a game SPADE keeps.
   */
  checkHint?(code: string, hint: string): Promise<CheckResult | null>;
  now?: () => number;
}

export interface GameSpec {
  skill: string;
  difficulty: Difficulty;
  maxTurns: number;
  template: string;
  memory: readonly MemoryRecord[];
  pins?: readonly number[];
  bans?: readonly number[];
  attempts: number;
  feedback: 'repair' | 'spade';
  /** Seeds draws: attempt k uses seed + k. */
  seed: number;
  /** Which non-SPADE check failures reject an attempt: any ('fail'), or none but `sandbox` ('spade-only'). */
  gate: 'fail' | 'spade-only';
  /** The researcher's extra words, last in the prompt (core/design/prompt.ts). */
  instruction?: string;
}

export interface AttemptRecord {
  n: number;
  prompt: string;
  /** The whole conversation sent (system, prompt, and in repair mode the earlier answers and feedback). */
  messages: ChatMessage[];
  answer: string;
  code: string;
  codeFrom: 'python-fence' | 'whole-answer';
  verdicts: Pick<CheckResult, 'id' | 'status' | 'message'>[];
  rejectedBecause: string | null;
  seeds: { positives: (number | null)[]; negatives: (number | null)[] };
  tokens: { prompt: number | null; completion: number | null };
  ms: number;
  error: string | null;
}

export interface GameRecord {
  skill: string;
  attempts: AttemptRecord[];
  accepted: boolean;
  code: string | null;
  className: string | null;
  hint: string | null;
  hintMessages: ChatMessage[] | null;
  hintError: string | null;
  /** The hint-leak check of the hint (null: no hint, or no checker given). */
  hintLeak: Pick<CheckResult, 'status' | 'message'> | null;
  play: PlayOutcome | null;
  /** Why the accepted game has no numbers (its play failed). */
  playError: string | null;
  cls: GameClass | null;
  difficultyScore: number | null;
  /** Library ids of the seeds the accepted attempt was shown (its parents). */
  parents: number[];
}

export type DesignProgress = { stage: 'designing' | 'checking' | 'hinting' | 'playing'; attempt: number; of: number; tokensPerSec?: number };

/** Why an audit rejects a program, or null: SPADE's own failures first, then too-easy, then the workbench's. */
export function rejection(audit: EnvAudit, gate: GameSpec['gate']): string | null {
  const failed = audit.checks.filter((c) => c.status === 'fail');
  const spade = failed.find((c) => c.id.startsWith('spade.'));
  if (spade) return `${spade.id}: ${spade.message}`;
  const easy = failed.find((c) => c.id === 'too-easy');
  if (easy) return `too-easy: ${easy.message}`;
  // A program that tried to leave the sandbox is never accepted, whatever the gate: it is not a
  // quality verdict but the one thing the workbench must not store, hint, play and export (issue 46).
  const sandbox = failed.find((c) => c.id === 'sandbox');
  if (sandbox && gate !== 'fail') return `sandbox: ${sandbox.message}`;
  if (gate === 'fail' && failed.length) return failed.map((c) => `${c.id}: ${c.message}`).join('; ');
  return null;
}

function feedbackText(reason: string): string {
  return `Your program was rejected: ${reason}\nWrite the complete corrected program, the same game idea, in one \`\`\`python fenced block.`;
}

export async function designGame(
  spec: GameSpec,
  deps: DesignDeps,
  hooks: { progress?: (p: DesignProgress) => void; attempt?: (a: AttemptRecord) => void } = {},
  signal?: AbortSignal,
): Promise<GameRecord> {
  const now = deps.now ?? (() => performance.now());
  const onProgress = hooks.progress ?? (() => {});
  const attempts: AttemptRecord[] = [];
  const keep = (a: AttemptRecord) => {
    attempts.push(a);
    hooks.attempt?.(a);
  };
  let conversation: ChatMessage[] = [];
  for (let n = 1; n <= spec.attempts; n++) {
    if (signal?.aborted) break;
    const draw = drawSeeds(spec.memory, { skill: spec.skill, pins: spec.pins ?? [], bans: spec.bans ?? [], seed: spec.seed + n - 1 });
    const prompt = designerPrompt({ template: spec.template, skill: spec.skill, difficulty: spec.difficulty, maxTurns: spec.maxTurns, seeds: draw, ...(spec.instruction ? { instruction: spec.instruction } : {}) });
    const last = attempts.at(-1);
    const messages: ChatMessage[] =
      spec.feedback === 'repair' && last && last.rejectedBecause && !last.error && conversation.length
        ? [...conversation, { role: 'assistant', content: last.answer }, { role: 'user', content: feedbackText(last.rejectedBecause) }]
        : [{ role: 'user', content: prompt }];
    conversation = messages;
    const seeds = { positives: draw.positives.map((r) => r.envId), negatives: draw.negatives.map((r) => r.envId) };
    const t0 = now();
    onProgress({ stage: 'designing', attempt: n, of: spec.attempts });
    let completion: Completion;
    try {
      completion = await deps.designer.complete(messages, signal ? { signal } : {});
    } catch (e) {
      keep({ n, prompt, messages, answer: '', code: '', codeFrom: 'whole-answer', verdicts: [], rejectedBecause: `the designer did not answer: ${errorMessage(e)}`, seeds, tokens: { prompt: null, completion: null }, ms: now() - t0, error: errorMessage(e) });
      if (signal?.aborted) break;
      continue;
    }
    const genMs = now() - t0;
    const completionTokens = completion.usage?.completion_tokens ?? null;
    onProgress({ stage: 'checking', attempt: n, of: spec.attempts, ...(completionTokens ? { tokensPerSec: (completionTokens / genMs) * 1000 } : {}) });
    const { code, from } = extractProgram(completion.text);
    const audit = await deps.check(code);
    const rejectedBecause = rejection(audit, spec.gate);
    keep({
      n,
      prompt,
      messages,
      answer: completion.text,
      code,
      codeFrom: from,
      verdicts: audit.checks.map((c) => ({ id: c.id, status: c.status, message: c.message })),
      rejectedBecause,
      seeds,
      tokens: { prompt: completion.usage?.prompt_tokens ?? null, completion: completionTokens },
      ms: now() - t0,
      error: null,
    });
    if (rejectedBecause) continue;

    const parents = draw.positives.map((r) => r.envId).filter((x): x is number => x !== null);
    const record: GameRecord = { skill: spec.skill, attempts, accepted: true, code, className: audit.className, hint: null, hintMessages: null, hintError: null, hintLeak: null, play: null, playError: null, cls: null, difficultyScore: null, parents };
    onProgress({ stage: 'hinting', attempt: n, of: spec.attempts });
    record.hintMessages = hintMessages(code, audit.toolUse);
    for (let k = 0; k < HINT_TRIES && record.hint === null && !signal?.aborted; k++) {
      try {
        const h = parseHint((await (deps.hinter ?? deps.designer).complete(record.hintMessages, signal ? { signal } : {})).text);
        // A hint the library could not export and import again is not kept (core/api/limits.ts).
        const big = h ? hintTooLarge(h) : null;
        if (big) record.hintError = `the hint model's answer is ${big}`;
        else if (h) record.hint = h;
        else record.hintError = 'the hint model answered with nothing';
      } catch (e) {
        record.hintError = errorMessage(e);
      }
    }
    if (record.hint !== null) record.hintError = null;
    if (record.hint !== null && deps.checkHint && !signal?.aborted) {
      try {
        const c = await deps.checkHint(code, record.hint);
        record.hintLeak = c ? { status: c.status, message: c.message } : null;
      } catch (e) {
        record.hintLeak = { status: 'skip', message: `The hint-leak check did not run: ${errorMessage(e)}` };
      }
    }
    return record;
  }
  return { skill: spec.skill, attempts, accepted: false, code: null, className: null, hint: null, hintMessages: null, hintError: null, hintLeak: null, play: null, playError: null, cls: null, difficultyScore: null, parents: [] };
}
