import type { PyodidePool } from '../runtime/pyodidePool';
import { replyOf } from '../runtime/harnessMessages';
import { chooseRuntime, PYODIDE_MISSING_MODULES, retryNatively } from '../runtime/choice';
import { AuditCancelled, deadAudit, withHostChecks, type AuditControl, type AuditPool } from './pool';
import type { SandboxViolation } from '../runtime/supervisor';
import type { AuditOptions, EnvAudit } from './types';
import type { RuntimeKind } from '../api/schemas';

/**
 * Whole audits inside the Pyodide sandbox, one environment per call on the runtime's pool (the
 * checks module is loaded into every interpreter). Per-call limits reach the child's watchdog
 * through lines on stderr (see native/audit_checks.py, Timer); the command as a whole is bounded
 * by `envTimeoutMs`, and an interpreter that dies or hangs in C code is replaced by the pool, the
 * audit then failing the check it was running, as in the native pool.
 */
export class PyodideAuditRunner {
  constructor(
    private readonly pool: () => PyodidePool,
    private readonly envTimeoutMs: number,
  ) {}

  get workers(): number {
    return this.pool().size;
  }

  get limitSec(): number {
    return this.envTimeoutMs / 1000;
  }

  async audit(source: string, options: AuditOptions, ctl: AuditControl = {}): Promise<EnvAudit> {
    const started = Date.now();
    // streamResults: the judge dies with the game's interpreter here, so it sends each result as decided.
    const ask = async () => replyOf('audit', await this.pool().anyCall({ cmd: 'audit', source, options: { ...options, phases: true, streamResults: true } }, this.envTimeoutMs, ctl));
    let r = await ask();
    // Queued behind an audit whose interpreter was killed: it never ran, so it runs on the replacement.
    for (let retry = 0; !r.ok && r.error.notStarted === true && !ctl.signal?.aborted && retry < 3; retry++) r = await ask();
    if (ctl.signal?.aborted) throw new AuditCancelled();
    const violations = (r as { violations?: SandboxViolation[] }).violations ?? [];
    if (r.ok) return withHostChecks(r.result, violations, options, 'pyodide');
    const phase = typeof r.error.phase === 'string' ? r.error.phase : 'spade.exec';
    const timedOut = r.error.kind === 'timeout';
    return withHostChecks(deadAudit(options, phase, r.error.message, '', Date.now() - started, timedOut, r.error.results), violations, options, 'pyodide');
  }
}

/** A Pyodide audit whose load failed only because the sandbox lacks a module the game imports. */
export function needsNativeModule(a: EnvAudit): string | null {
  const exec = a.checks.find((c) => c.id === 'spade.exec');
  if (!exec || exec.status !== 'fail') return null;
  const text = `${exec.message} ${JSON.stringify(exec.evidence ?? {})}`;
  const top = /No module named '([\w]+)/.exec(text)?.[1];
  if (top && PYODIDE_MISSING_MODULES.has(top)) return top;
  return /name 'np' is not defined/.test(text) ? 'numpy' : null;
}

/**
 * A Pyodide audit whose interpreter died of WebAssembly's stack (a value nested 100,000 deep: even
 * freeing it recurses there, where CPython's trashcan does not): the game is SPADE's to judge in
 * CPython, as SPADE runs it, so the runtimes give one verdict (issue 46). The reason, or null.
 */
export function outgrewSandboxStack(a: EnvAudit): string | null {
  const died = a.checks.some((c) => c.status === 'fail' && c.message.startsWith('Crashed during this check') && /Maximum call stack size exceeded/.test(c.message));
  return died ? "its values nest deeper than the sandbox's WebAssembly stack holds (Maximum call stack size exceeded)" : null;
}

/**
 * One audit where asked: in the sandbox unless the game needs a module Pyodide does not ship (seen
 * in the source, or when loading it fails there), which then runs in native CPython.
 */
export async function auditIn(
  where: RuntimeKind,
  runners: { native: () => AuditPool; sandbox: (() => PyodideAuditRunner) | undefined },
  source: string,
  options: AuditOptions,
  ctl: AuditControl & { onRuntime?: (runtime: RuntimeKind, limitSec: number) => void } = {},
): Promise<{ audit: EnvAudit; runtime: RuntimeKind; why?: string }> {
  const native = () => {
    const p = runners.native();
    ctl.onRuntime?.('cpython', p.limitSec);
    return p.audit(source, options, ctl);
  };
  if (where === 'pyodide' && runners.sandbox) {
    const first = chooseRuntime({ choice: 'auto', source, preferred: 'pyodide', nativeUsable: true });
    if (first.kind === 'cpython') return { audit: await native(), runtime: 'cpython', ...(first.why ? { why: first.why } : {}) };
    const sandbox = runners.sandbox();
    ctl.onRuntime?.('pyodide', sandbox.limitSec);
    const a = await sandbox.audit(source, options, ctl);
    const why = retryNatively(needsNativeModule(a)) ?? outgrewSandboxStack(a);
    if (!why) return { audit: a, runtime: 'pyodide' };
    return { audit: await native(), runtime: 'cpython', why };
  }
  return { audit: await native(), runtime: 'cpython' };
}
