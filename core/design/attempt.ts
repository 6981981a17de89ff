/**
 * One game of a design round, attempt by attempt: the designer's prompt (seeds drawn afresh for
 * every attempt, as SPADE draws them), its answer, the program taken from it, its audit and the
 * acceptance verdict (core/design/acceptance.ts: SPADE's trainer acceptance by default, the
 * random-guess test and the workbench's checks as advice); on a rejection the next attempt; on
 * acceptance a hint written by a model from the code. Play and class come after the game is in
 * memory (core/design/round.ts). Every attempt is returned whole: nothing a model wrote is lost.
 *
 * Feedback: SPADE's default re-samples a rejected game with no word about why; its repair mode
 * sends the error back in the same conversation. `feedback: 'spade'` (the SPADE presets) does the
 * former; `'repair'` (the "quick, laptop" preset) the latter.
 */
import type { ChatMessage, Completion } from '../models/client';
import type { CheckResult, EnvAudit } from '../audit/types';
import { designerPrompt, extractProgram, withAppendix, type Difficulty, type GameClass } from './prompt';
import { drawSeeds, type MemoryRecord } from './seeds';
import { HINT_TRIES, hintMessages, parseHint, parseSpadeHint, spadeHintMessages } from './hint';
import type { GroundingDoc, PromptSource } from './promptSource';
import { TOOL_USE_SKILLS } from '../api/skills';
import { hintTooLarge } from '../api/limits';
import { errorMessage } from '../api/errors';
import type { AuditOptions } from '../audit/types';
import { acceptanceAuditOptions, decideAcceptance, type AcceptancePolicy, type AcceptanceVerdict, type EnvValidatorStep } from './acceptance';

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
  /**
   * SPADE's load checks, its random-guess test and the workbench's audit of a program; `extra`
   * carries what the acceptance needs of the audit (acceptanceAuditOptions).
   */
  check(code: string, extra?: Pick<AuditOptions, 'admissionAlways' | 'guessLoad' | 'resetGate'>): Promise<EnvAudit>;
  /** SPADE's LLM environment validator, where the policy asks for it (absent: "LLM validator not run"). */
  validator?: EnvValidatorStep | null;
  /**
   * The workbench's hint-leak check of an accepted program with the hint just written for it. The
   * program's audit ran before the hint existed, so without this a designed hint is never checked.
   * It is the workbench's check, not SPADE's: it is recorded and never rejects a game SPADE keeps.
   */
  checkHint?(code: string, hint: string): Promise<CheckResult | null>;
  now?: () => number;
  /** Waits between SPADE's hint retries (1, 2, 4 s); tests pass one that does not wait. */
  sleep?: (ms: number) => Promise<void>;
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
  /** What decides acceptance (core/design/acceptance.ts): SPADE's trainer, or the labelled workbench gate. */
  acceptance: AcceptancePolicy;
  /** SPADE's rollout id for the round (its seq): the reset gate applies from rollout 1. */
  rollout?: number;
  /** The researcher's extra words, last in the prompt (core/design/prompt.ts). */
  instruction?: string;
  /**
   * Where each attempt's prompt comes from (core/design/promptSource.ts): SPADE's texts from a
   * checkout, or the workbench's own template. Absent: `template`, filled as the workbench's.
   */
  prompts?: PromptSource;
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
  /** The acceptance verdict: its steps, SPADE's reason and kind, the advice (null: no program was checked). */
  acceptance: AcceptanceVerdict | null;
  seeds: { positives: (number | null)[]; negatives: (number | null)[] };
  /** The corpus document the prompt was grounded on (null: no corpus). */
  document: GroundingDoc | null;
  /** What built the prompt's body (core/design/promptSource.ts AttemptPrompt.builder). */
  builder: string;
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

/** An attempt's rejection as one line: the kind (SPADE's reject stage where it has one), then the reason. */
export const rejectionLine = (v: AcceptanceVerdict): string | null => (v.accepted ? null : `${v.kind}: ${v.reason}`);

/** The attempt's prompt: its source's body (or the workbench template) with the memory appendix and the researcher's words. */
async function buildPrompt(spec: GameSpec, draw: ReturnType<typeof drawSeeds>, seed: number): Promise<{ system: string | null; prompt: string; document: GroundingDoc | null; builder: string }> {
  const instruction = spec.instruction ? { instruction: spec.instruction } : {};
  if (!spec.prompts) return { system: null, prompt: designerPrompt({ template: spec.template, skill: spec.skill, difficulty: spec.difficulty, maxTurns: spec.maxTurns, seeds: draw, ...instruction }), document: null, builder: 'workbench:template' };
  const a = await spec.prompts.next({ skill: spec.skill, difficulty: spec.difficulty, maxTurns: spec.maxTurns, seed, seeds: draw });
  return { system: a.system, prompt: withAppendix(a.body, a.withSeeds ? { positives: [], negatives: [] } : draw, spec.instruction), document: a.document, builder: a.builder };
}

/**
 * SPADE's hint (hint_generator.py:135-201, retries 164-196): its system prompt by game type
 * (get_hint_system_prompt, :78-82), the code as the user message, three tries (max_retries=3, :167),
 * after each failed try a wait of 2^attempt s (1, 2, 4, :183-191; the last before giving up, as SPADE
 * waits), an empty answer is a failed try (:160). The hint model's sampling is the caller's client:
 * temperature 0.3 and 2048 tokens (types.py:154-155, hint_generator.py:91-92).
 */
async function spadeHint(record: GameRecord, code: string, prompts: { cognitive: string; toolUse: string }, toolUse: boolean, deps: DesignDeps, signal?: AbortSignal): Promise<void> {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  record.hintMessages = spadeHintMessages(code, toolUse ? prompts.toolUse : prompts.cognitive);
  for (let k = 0; k < HINT_TRIES && record.hint === null && !signal?.aborted; k++) {
    try {
      const text = (await (deps.hinter ?? deps.designer).complete(record.hintMessages, signal ? { signal } : {})).text;
      if (!text) throw new Error('not-user-facing: Empty response from hint model');
      const h = parseSpadeHint(text);
      const big = hintTooLarge(h);
      if (big) record.hintError = `the hint model's answer is ${big}`;
      else record.hint = h;
    } catch (e) {
      record.hintError = errorMessage(e);
    }
    if (record.hint === null && !signal?.aborted) await sleep(2 ** k * 1000);
  }
  if (record.hint !== null) record.hintError = null;
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
    const seeds = { positives: draw.positives.map((r) => r.envId), negatives: draw.negatives.map((r) => r.envId) };
    const t0 = now();
    let built: { system: string | null; prompt: string; document: GroundingDoc | null; builder: string };
    try {
      built = await buildPrompt(spec, draw, spec.seed + n - 1);
    } catch (e) {
      // A checkout that cannot build this prompt fails the attempt with the reason; nothing is sent.
      keep({ n, prompt: '', messages: [], answer: '', code: '', codeFrom: 'whole-answer', verdicts: [], rejectedBecause: `the prompt could not be built: ${errorMessage(e)}`, acceptance: null, seeds, document: null, builder: spec.prompts?.kind ?? 'workbench', tokens: { prompt: null, completion: null }, ms: now() - t0, error: errorMessage(e) });
      continue;
    }
    const { prompt, document, builder } = built;
    const last = attempts.at(-1);
    const first: ChatMessage[] = [...(built.system !== null ? [{ role: 'system' as const, content: built.system }] : []), { role: 'user', content: prompt }];
    const messages: ChatMessage[] =
      spec.feedback === 'repair' && last && last.rejectedBecause && !last.error && conversation.length
        ? [...conversation, { role: 'assistant', content: last.answer }, { role: 'user', content: feedbackText(last.rejectedBecause) }]
        : first;
    conversation = messages;
    onProgress({ stage: 'designing', attempt: n, of: spec.attempts });
    let completion: Completion;
    try {
      completion = await deps.designer.complete(messages, signal ? { signal } : {});
    } catch (e) {
      keep({ n, prompt, messages, answer: '', code: '', codeFrom: 'whole-answer', verdicts: [], rejectedBecause: `the designer did not answer: ${errorMessage(e)}`, acceptance: null, seeds, document, builder, tokens: { prompt: null, completion: null }, ms: now() - t0, error: errorMessage(e) });
      if (signal?.aborted) break;
      continue;
    }
    const genMs = now() - t0;
    const completionTokens = completion.usage?.completion_tokens ?? null;
    onProgress({ stage: 'checking', attempt: n, of: spec.attempts, ...(completionTokens ? { tokensPerSec: (completionTokens / genMs) * 1000 } : {}) });
    const { code, from } = extractProgram(completion.text);
    const rollout = spec.rollout ?? 1;
    const audit = await deps.check(code, acceptanceAuditOptions(spec.acceptance, rollout));
    const verdict = await decideAcceptance(audit, code, spec.acceptance, { rollout, skill: spec.skill, validator: deps.validator ?? null, ...(signal ? { signal } : {}) });
    const rejectedBecause = rejectionLine(verdict);
    keep({
      n,
      prompt,
      messages,
      answer: completion.text,
      code,
      codeFrom: from,
      verdicts: audit.checks.map((c) => ({ id: c.id, status: c.status, message: c.message })),
      rejectedBecause,
      acceptance: verdict,
      seeds,
      document,
      builder,
      tokens: { prompt: completion.usage?.prompt_tokens ?? null, completion: completionTokens },
      ms: now() - t0,
      error: null,
    });
    if (rejectedBecause) continue;

    const parents = draw.positives.map((r) => r.envId).filter((x): x is number => x !== null);
    const record: GameRecord = { skill: spec.skill, attempts, accepted: true, code, className: audit.className, hint: null, hintMessages: null, hintError: null, hintLeak: null, play: null, playError: null, cls: null, difficultyScore: null, parents };
    onProgress({ stage: 'hinting', attempt: n, of: spec.attempts });
    const spadeHints = spec.prompts?.hints ?? null;
    if (spadeHints) await spadeHint(record, code, spadeHints, (TOOL_USE_SKILLS as readonly string[]).includes(spec.skill), deps, signal);
    const ours = hintMessages(code, audit.toolUse);
    if (!spadeHints) record.hintMessages = ours;
    for (let k = 0; !spadeHints && k < HINT_TRIES && record.hint === null && !signal?.aborted; k++) {
      try {
        const h = parseHint((await (deps.hinter ?? deps.designer).complete(ours, signal ? { signal } : {})).text);
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
