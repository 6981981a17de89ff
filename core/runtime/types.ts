/** What the harness (native/harness.py) answers, as the TypeScript side sees it. */
export interface HarnessError {
  kind: string;
  type: string;
  message: string;
  traceback?: string;
  line?: number;
  col?: number;
  stage?: string;
  missingModule?: string;
  frames?: { line: number; function: string }[];
  [k: string]: unknown;
}

export type HarnessReply =
  | { id: number | null; ok: true; result: unknown; output?: string }
  | { id: number | null; ok: false; error: HarnessError; output?: string };

export type HarnessCommand = 'ping' | 'check_syntax' | 'load' | 'reset' | 'step' | 'play' | 'state' | 'solution' | 'snapshot' | 'restore' | 'close' | 'tool' | 'get_tools' | (string & {});

export interface HarnessRequest {
  cmd: HarnessCommand;
  [k: string]: unknown;
}

/** A runtime that can carry harness requests for sessions it hosts. */
export interface RuntimeBackend {
  readonly kind: 'pyodide' | 'cpython';
}

export function failure(kind: string, message: string, extra: Partial<HarnessError> = {}): HarnessReply {
  return { id: null, ok: false, error: { kind, type: kind, message, ...extra } };
}

import type { SpadeReset, SpadeStep } from '../api/spadeStep';

/** SPADE's load validation, run on the instance that is then played (load in SPADE mode). */
export interface SpadeValidation {
  ok: boolean;
  /** SPADE's exact message, e.g. "Game step() failed on action 1 '\\boxed{1}': ...". */
  message: string | null;
  stage: 'reset' | 'step' | 'reset2' | null;
}

/** `load` options the harness reads. */
export interface LoadOptions {
  /** SPADE's turn budget (SpadeConfig.max_turns); default 30. */
  maxTurns?: number;
  /** 'respect' (every SPADE play, the default) or 'legacy' (pool admission, Cls(max_turns=budget) first). */
  mode?: 'respect' | 'legacy';
  /** SPADE mode (default true): load validates the played instance; no per-session seeding. */
  spadeMode?: boolean;
  /** "Workbench determinism": a private random per session, random and numpy seeded at reset(seed). */
  deterministic?: boolean;
}

export interface LoadResult {
  className: string;
  maxTurns: number | null;
  budget: number;
  toolUse: boolean;
  hasSolution: boolean;
  /** False when the game certainly has no get_tools() (its tools are then []): no call needed. */
  mayHaveTools?: boolean;
  runtime: 'pyodide' | 'cpython';
  python: string;
  spadeMode: boolean;
  deterministic: boolean;
  /** PYTHONHASHSEED of the interpreter when fixed (SPADE fixes none), else null. */
  hashSeed: string | null;
  /** Present in SPADE mode. */
  validation?: SpadeValidation;
  restoredShared?: string[];
}

export interface ResetResult {
  observation: unknown;
  info: unknown;
  types: string[];
  shape: 'tuple2' | 'str' | 'other';
  raw?: unknown;
  spade: SpadeReset;
  /** SPADE mode, seeded reset: the seeding calls the game made (random.seed, numpy.random.seed ...). */
  seeded?: string[];
  /** SPADE mode: reset(seed) seeded no generator, so SPADE could not reproduce this episode if it draws randomness. */
  seedIgnored?: true;
}

export interface StepResult {
  observation?: unknown;
  reward?: unknown;
  terminated?: unknown;
  truncated?: unknown;
  info?: unknown;
  /** Real Python type names of the returned values (e.g. numpy.bool_). */
  types: string[];
  shape: 'tuple5' | 'other';
  raw?: unknown;
  spade: SpadeStep;
  state?: unknown;
}

/**
 * A step or reset that raised answers ok:false; its error carries `spade` (SPADE's view of the
 * failed call). Inside `play`, the failed step is `{action, error, spade}` and the reset `{error, spade}`.
 */
export interface FailedCall {
  action?: string;
  error: HarnessError;
  spade?: SpadeStep | SpadeReset;
}

/** `tool` (SPADE's execute_tool): output and returncode; `raw` when a game's override returned something else. */
export interface ToolResult {
  output: string | null;
  returncode: 0 | 1 | number | null;
  raw?: unknown;
}

/** `get_tools`: the game's OpenAI-style tool list ([] for plain games). */
export type ToolList = { type: 'function'; function: { name: string; description: string; parameters: unknown } }[];
