/**
 * The spellings of the runtime kind (core/api/schemas.ts builds RuntimeKind and RuntimeChoice from
 * them), kept free of zod so the CLI can check `--runtime` without loading it: `--help` must load
 * nothing heavy (tests/integration/cli.test.ts).
 */
export const RUNTIME_KINDS = ['pyodide', 'cpython'] as const;
/** A runtime, or `auto` (the sandbox unless the game needs native modules: core/runtime/choice.ts). */
export const RUNTIME_CHOICES = ['auto', ...RUNTIME_KINDS] as const;
