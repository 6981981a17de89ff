import type { Diagnostic, LoadCheck } from '../api/calls/editor';
import type { AuditService } from '../audit/service';
import type { CheckResult } from '../audit/types';

/**
 * SPADE's loading checks for the editor: the audit's `spade.*` checks (docs/spade-formats.md section 5:
 * compile, exec, class, instantiate, reset(seed=42), the three boxed probes, reset(seed=123), pool
 * admission), run where the app audits and judged outside the game's interpreter, so the editor,
 * the audit and the CLI say the same thing in SPADE's words. The first failure becomes a
 * diagnostic on the line it is about.
 */
const FALLBACK: Record<string, RegExp> = {
  reset: /^\s+def\s+reset\s*\(/,
  step: /^\s+def\s+step\s*\(/,
  instantiate: /^\s+def\s+__init__\s*\(/,
};
const CLASS_RE = /^class\s+\w+/;

function lineOf(source: string, re: RegExp): number {
  const i = source.split('\n').findIndex((l) => re.test(l));
  return i >= 0 ? i + 1 : 1;
}

/** The line a failed check is about: its evidence, else the game's last frame, else the method. */
function lineFor(source: string, c: CheckResult, stage: string): number {
  const ev = c.evidence;
  if (typeof ev.line === 'number' && ev.line > 0) return ev.line;
  const frames = typeof ev.traceback === 'string' ? [...ev.traceback.matchAll(/File "<env>", line (\d+)/g)] : [];
  const last = frames.at(-1);
  if (last) return Number(last[1]);
  return lineOf(source, FALLBACK[stage] ?? CLASS_RE);
}

function diag(source: string, message: string, stage: string, line: number): Diagnostic {
  const lines = source.split('\n');
  const l = Math.min(Math.max(1, line), Math.max(1, lines.length));
  const text = lines[l - 1] ?? '';
  const c = text.length - text.trimStart().length + 1;
  return { severity: 'error', message, line: l, column: c, endLine: l, endColumn: Math.max(c + 1, text.length + 1), source: 'spade-load', stage };
}

export async function quickLoadCheck(audit: AuditService, source: string, signal?: AbortSignal): Promise<LoadCheck> {
  const r = await audit.checkSource(source, ['spade.*'], signal);
  if (r.unavailable) return { ran: false, ok: false, detail: r.unavailable, diagnostics: [] };
  const failed = r.audit.checks.find((c) => c.id.startsWith('spade.') && c.status === 'fail');
  const where = r.runtime === 'pyodide' ? 'the Pyodide sandbox' : 'native CPython';
  if (!failed) return { ran: true, ok: true, detail: `Passes SPADE's loading checks in ${where}`, diagnostics: [] };
  // The check's own name is the stage (spade.step -> step); both resets are 'reset'.
  const stage = failed.id === 'spade.reset2' ? 'reset' : failed.id.slice('spade.'.length);
  return { ran: true, ok: false, detail: `Fails SPADE's loading checks in ${where}`, diagnostics: [diag(source, failed.message, stage, lineFor(source, failed, stage))] };
}
