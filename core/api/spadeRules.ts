/**
 * SPADE's rules that both the host and the Python harness apply, in one place
 * (docs/spade-formats.md sections 2, 4 and 5). native/spade_rules.py is generated from this module
 * (scripts/gen-python-contract.mjs); tests/integration/runtime/contract.test.ts fails when it is
 * stale, and runs a shared corpus of tool calls through both sides.
 *
 * Pure data, no Node: the renderer may read it too.
 */

/** Check ids. SPADE's own start with `spade.` and alone decide SPADE's verdict; the rest are the workbench's. */
export const SPADE_CHECKS = ['spade.exec', 'spade.class', 'spade.instantiate', 'spade.methods', 'spade.reset', 'spade.step', 'spade.reset2', 'spade.admission'] as const;
export const PLAY_CHECKS = ['determinism', 'seed-ignored', 'reset-leak', 'aliasing', 'crash-on-action', 'types', 'solution', 'too-easy', 'max-turns', 'hint-leak', 'timing'] as const;
export const TOOL_CHECKS = ['tool.schema', 'tool.methods', 'tool.params', 'tool.reset_gate', 'tool.criteria_at_reset', 'tool.done_reachable'] as const;
export const OUTPUT_CHECKS = ['output-flood'] as const;

/** The loader's selection rule: the first name in namespace order ending in this suffix, callable, not one of the excluded names. */
export const ENV_CLASS_SUFFIX = 'Env';
export const ENV_CLASS_EXCLUDED = ['Env', 'ToolUseBaseEnv'] as const;

/** SPADE's turn budget (SpadeConfig.max_turns) and the one pool admission uses. */
export const DEFAULT_BUDGET = 30;
export const ADMISSION_BUDGET = 1000;

/** The load validation's probe steps, in order (stop early when done). */
export const PROBE_ACTIONS = ['\\boxed{1}', '\\boxed{test}', '\\boxed{42}'] as const;
/** Pool admission's raw steps. */
export const ADMISSION_ACTIONS = ['1', '2', 'test'] as const;
/** A probe step's reward must lie in this closed range. */
export const REWARD_RANGE = [-10, 10] as const;

/** SPADE's limits: 30 s per env call, 60 s for the whole pool admission. */
export const SPADE_CALL_SEC = 30;
export const SPADE_ADMISSION_SEC = 60;
/** The workbench's own checks: a call past this many seconds is a finding (not SPADE's rule; its label is `timing`). */
export const WORKBENCH_CALL_SEC = 5;

/** SPADE's wrapper cuts longer actions (spade/core/envs/synthetic_game_env.py:372-373); the harness does the same. */
export const MAX_ACTION_CHARS = 100_000;
/**
 * The longest action any call accepts (runtime.step/play, episodes.step/script): the workbench's
 * bound on what it takes in, not SPADE's rule. Larger than MAX_ACTION_CHARS on purpose: SPADE cuts a
 * longer action and plays it, it does not refuse it, so a call must take one to behave the same.
 */
export const MAX_ACTION_INPUT_CHARS = 1_000_000;
/**
 * Nesting (runs of [ and { outside JSON strings) past which SPADE's json.loads raises RecursionError
 * (CPython 3.10-3.12: recursion limit 1000, less its rollout's frames), which its tool-call parser does
 * not catch, so the episode fails. Near enough, and one depth for the host, both runtimes and a sweep's
 * node (Pyodide's stack is not CPython's, and a deep enough value aborts Pyodide outright).
 */
export const MAX_CALL_NESTING = 900;

/**
 * SPADE's tool-call parser (spade/core/utils/tool_call_parser.py, described in section 4), as
 * regular-expression sources written in the common subset of Python's `re` and JavaScript (with the
 * `u` flag, `[\p{L}\p{N}_]` in JavaScript is what Python's `\w` is on str). `dotAll` everywhere.
 */
export const TOOL_CALL_PATTERNS = {
  block: '<tool_call>(.*?)</tool_call>',
  xmlFunction: '<function=(WORD+)>(.*?)</function>',
  xmlParameter: '<parameter=(WORD+)>(.*?)</parameter>',
  /** The arguments end at the first `}` then the closing brace: nested objects decode to {} (SPADE's quirk, kept). */
  jsonCall: '\\{\\s*"name"\\s*:\\s*"(WORD+)"\\s*,\\s*"arguments"\\s*:\\s*(\\{.*?\\})\\s*\\}',
  answer: '<answer>(.*?)</answer>',
} as const;
/** Stripped from the end of a reply before parsing. */
export const END_OF_TURN = '<|im_end|>';

/**
 * SPADE's agent messages (section 2 and 3): the first user message of a cognitive game is
 * PREFIX + observation + SUFFIX; with the hint, the first observation is observation + HINT + hint.
 */
export const AGENT_PROMPT = {
  firstPrefix: 'You are playing a language game. Make valid actions to win.\nObservation: ',
  firstSuffix: '\nPlease reason step by step, and put your final answer within \\boxed{}.',
  hintSeparator: '\n\nHINT: ',
  /** Thinking mode: only the text after the last THINK_END counts. */
  thinkEnd: '</think>',
} as const;

/**
 * SPADE's action extraction (section 2): the first match of each of these in turn (the answer is
 * group 1), then the last `\boxed` with a balanced `{...}`. Sources in the common subset of
 * Python's `re` and JavaScript.
 */
export const BOXED_PATTERNS = ['\\\\boxed\\{([^{}]+)\\}', '\\\\boxed\\{\\{([^{}]+)\\}\\}', '\\\\boxed\\{\\{\\{([^{}]+)\\}\\}\\}'] as const;

/** A pattern for JavaScript (u + s flags). */
export function jsPattern(source: string, flags = ''): RegExp {
  return new RegExp(source.replaceAll('WORD', '[\\p{L}\\p{N}_]'), `su${flags}`);
}
