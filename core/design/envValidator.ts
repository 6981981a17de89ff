/**
 * SPADE's LLM environment validator (spade/core/env_validator.py at 9b2b813), for the acceptance
 * pipeline's validator step: the training model reads the generated program and answers
 * \boxed{yes} or \boxed{no}. Its prompts come from the SPADE checkout at run time
 * (core/design/spadeCheckout.ts: ENV_VALIDATION_* for cognitive games, TOOL_USE_ENV_VALIDATION_*
 * for tool-use ones, get_env_validation_prompts :91-103); what it does with the answer is SPADE's:
 * - the user message is the template `.format(game_code=code)` (:150), after the system message (:151-154);
 * - sampling: temperature 0.3, 16384 tokens (slime/arguments.py:532-541, types.py:188-189), the
 *   caller's client (`chat`) carries them; VALIDATOR_SAMPLING says what to give it;
 * - an empty answer accepts ("Empty response from validator", :166-168);
 * - the first \boxed{...} (one line, non-greedy, :171) decides: yes / y / true (stripped, lower-cased)
 *   keeps the game, anything else rejects it; no \boxed{} accepts (:175-178);
 * - a failed call accepts ("Validation error: <e>", :182-185): SPADE never blocks training on it;
 * - the orchestrator waits 120 s (orchestrator.py:1158-1161); past that the attempt fails with no
 *   verdict and nothing saved (its TimeoutError falls to the attempt's except, :1195-1199);
 * - a rejection fails the attempt with "Environment validator rejected game: " and the first 200
 *   characters of the reasoning, newlines as spaces (orchestrator.py:1171-1174), and is saved with its whole
 *   reasoning by save_rejected_game (utils/game_files.py:39-60): writeRejectedGame below.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage } from '../models/client';
import type { Chat } from './attempt';
import { pyFormat, type SpadeTexts } from './spadeCheckout';
import { errorMessage } from '../api/errors';
import type { EnvValidatorStep } from './acceptance';

/** The validator's sampling as SPADE's recipes run it: give the client these. */
export const VALIDATOR_SAMPLING = { temperature: 0.3, maxTokens: 16384 } as const;
/** The orchestrator's wait for one validation (orchestrator.py:1160). */
export const VALIDATOR_TIMEOUT_MS = 120_000;

export type EnvValidatorKind = 'accepted' | 'rejected' | 'no-verdict' | 'empty' | 'error' | 'timeout';

export interface EnvValidatorResult {
  /** SPADE keeps the game (every kind but `rejected` and `timeout`). */
  valid: boolean;
  kind: EnvValidatorKind;
  /** The model's whole answer, or SPADE's own words for an empty answer or a failed call. */
  reasoning: string;
  /** The attempt's failure as SPADE words it (null when the game is kept). */
  reason: string | null;
  /** SPADE's reject_stage for save_rejected_game (null when nothing is saved). */
  stage: 'env_validator' | null;
  /** The exact messages sent. */
  messages: ChatMessage[];
}

export interface EnvValidatorOptions {
  /** The judging model's client (SPADE: the training model, env_validator_model "self"), sampling as VALIDATOR_SAMPLING. */
  chat: Chat;
  /** The checkout's texts (readSpadeTexts): the validator prompts are taken from them. */
  texts: Pick<SpadeTexts, 'validator'>;
  /** A tool-use game (SPADE's game_type "tool_use") gets the tool-use auditor's prompts. */
  toolUse: boolean;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** The messages SPADE sends for `code` (env_validator.py:150-154). */
export function envValidatorMessages(code: string, texts: Pick<SpadeTexts, 'validator'>, toolUse: boolean): ChatMessage[] {
  const p = toolUse ? texts.validator.toolUse : texts.validator.cognitive;
  return [
    { role: 'system', content: p.system },
    { role: 'user', content: pyFormat(p.template, { game_code: code }) },
  ];
}

/** SPADE's reading of a validator answer (env_validator.py:164-178). */
export function envValidatorVerdict(answer: string): { valid: boolean; kind: 'accepted' | 'rejected' | 'no-verdict' | 'empty'; reasoning: string } {
  if (!answer) return { valid: true, kind: 'empty', reasoning: 'Empty response from validator' };
  // Python's `.` in re.search without DOTALL: any character but a newline.
  const m = /\\boxed\{([^\n]+?)\}/.exec(answer);
  if (!m) return { valid: true, kind: 'no-verdict', reasoning: answer };
  const verdict = m[1]!.trim().toLowerCase();
  const valid = verdict === 'yes' || verdict === 'y' || verdict === 'true';
  return { valid, kind: valid ? 'accepted' : 'rejected', reasoning: answer };
}

/** SPADE's message for a rejected attempt (orchestrator.py:1171-1174). */
export const rejectionReason = (reasoning: string): string => `Environment validator rejected game: ${reasoning.slice(0, 200).replace(/\n/g, ' ')}`;

/** One validation, SPADE's way. Never throws for the model's failures: SPADE's kinds say what happened. */
export async function validateEnvironment(code: string, o: EnvValidatorOptions): Promise<EnvValidatorResult> {
  const messages = envValidatorMessages(code, o.texts, o.toolUse);
  const timeoutMs = o.timeoutMs ?? VALIDATOR_TIMEOUT_MS;
  const ac = new AbortController();
  const onAbort = () => ac.abort();
  o.signal?.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((r) => {
    timer = setTimeout(() => {
      ac.abort();
      r('timeout');
    }, timeoutMs);
  });
  try {
    const answer = await Promise.race([o.chat.complete(messages, { signal: ac.signal }).then((c) => c.text), timedOut]);
    if (answer === 'timeout') {
      return { valid: false, kind: 'timeout', reasoning: `The validator did not answer within ${timeoutMs / 1000} s`, reason: `env_validator: no answer within ${timeoutMs / 1000} s (SPADE's wait_for fails the attempt)`, stage: null, messages };
    }
    const v = envValidatorVerdict(answer);
    return { ...v, reason: v.valid ? null : rejectionReason(v.reasoning), stage: v.valid ? null : 'env_validator', messages };
  } catch (e) {
    if (o.signal?.aborted) throw e;
    return { valid: true, kind: 'error', reasoning: `Validation error: ${errorMessage(e)}`, reason: null, stage: null, messages };
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * A rejected game saved as SPADE saves it (utils/game_files.py:39-60): beside `spade_games/` under
 * `out`, spade_games_rejected/reject_{rollout:05d}_{index:03d}_{skill slug}_{stage}.py with SPADE's
 * header line naming the stage, and {stem}.reason.txt holding the whole reasoning.
 */
export function writeRejectedGame(out: string, r: { code: string; rollout: number; index: number; skill: string; stage: string; reasoning: string }): { file: string; reasonFile: string } {
  const dir = join(out, 'spade_games_rejected');
  mkdirSync(dir, { recursive: true });
  const stem = `reject_${String(r.rollout).padStart(5, '0')}_${String(r.index).padStart(3, '0')}_${r.skill.toLowerCase().replace(/ /g, '_')}_${r.stage}`;
  const file = join(dir, `${stem}.py`);
  const reasonFile = join(dir, `${stem}.reason.txt`);
  writeFileSync(file, `"""SPADE self-play REJECTED game (stage=${r.stage})"""\n\n${r.code}`);
  writeFileSync(reasonFile, r.reasoning);
  return { file, reasonFile };
}

/**
 * The acceptance pipeline's validator step (core/design/acceptance.ts) over validateEnvironment:
 * SPADE's verdict as (valid, reasoning); a timeout throws, as SPADE's wait_for fails the attempt
 * (the pipeline reports it as env_validator_error and saves nothing, as SPADE saves nothing).
 */
export function envValidatorStep(chat: Chat, texts: Pick<SpadeTexts, 'validator'>): EnvValidatorStep {
  return async (code, ctx) => {
    const r = await validateEnvironment(code, { chat, texts, toolUse: ctx.toolUse, ...(ctx.signal ? { signal: ctx.signal } : {}) });
    if (r.kind === 'timeout') throw new Error(r.reason ?? r.reasoning);
    return { valid: r.valid, reasoning: r.reasoning };
  };
}
