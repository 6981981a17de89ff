/**
 * The one decision of where an environment runs, shared by sessions (RuntimeService) and audits
 * (auditIn): the Pyodide sandbox unless the game needs a module it does not ship, seen in the
 * source before loading or in the load's ModuleNotFoundError after, in which case native CPython.
 */
import { wheelsPresent } from './paths';
import type { RuntimeChoice, RuntimeKind } from '../api/schemas';

export type { RuntimeChoice, RuntimeKind };

/**
 * Modules generated games use that the bundled Pyodide cannot provide (nothing is fetched at run
 * time). math_verify and sympy come from the wheels vendored at build time where they are present.
 */
export const PYODIDE_MISSING_MODULES: ReadonlySet<string> = new Set(['numpy', 'scipy', 'pandas', 'sklearn', 'torch', 'networkx', ...(wheelsPresent() ? [] : ['math_verify', 'sympy'])]);

const NEEDS_NATIVE = new RegExp(`^\\s*(?:import|from)\\s+(${[...PYODIDE_MISSING_MODULES].join('|')})\\b|\\bnp\\.|\\bnumpy\\.`, 'm');

/** Why a source needs native CPython in 'auto' mode, or null. */
export function nativeReason(source: string): string | null {
  const m = NEEDS_NATIVE.exec(source);
  if (!m) return null;
  return `uses ${m[1] ?? 'numpy'}, which the sandboxed runtime does not ship`;
}

/**
 * Where to run first; `why` says why native was chosen over the sandbox. A game that needs native
 * goes there even where native runs are refused, so the answer is the refusal's sentence rather
 * than a missing-module error from the sandbox. A preference for native applies only where usable.
 */
export function chooseRuntime(o: { choice: RuntimeChoice; source: string; preferred: RuntimeKind; nativeUsable: boolean }): { kind: RuntimeKind; why?: string } {
  if (o.choice !== 'auto') return { kind: o.choice };
  const why = nativeReason(o.source);
  if (why) return { kind: 'cpython', why };
  return { kind: o.preferred === 'cpython' && o.nativeUsable ? 'cpython' : 'pyodide' };
}

/** After a sandbox load failed on a missing module: the reason to retry natively, or null. */
export function retryNatively(missingModule: string | null | undefined): string | null {
  if (!missingModule || !PYODIDE_MISSING_MODULES.has(missingModule)) return null;
  return `imports ${missingModule}, which the sandboxed runtime does not ship`;
}

/**
 * Whether a game reaches for math_verify (or the sympy under it): such games start from an
 * interpreter that has it imported already (importing sympy costs about half a second), the
 * others from a lighter one, which is quicker to copy for every environment. Read from the
 * source text, as SPADE's prompt writes the import; a game that builds the name at run time
 * imports it itself, inside the sandbox.
 */
export function usesMathVerify(source: string): boolean {
  return /\b(?:math_verify|sympy|latex2sympy2_extended)\b/.test(source);
}
