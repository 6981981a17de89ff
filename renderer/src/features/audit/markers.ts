import type { CallOutput } from '../../../../core/api';

type Check = NonNullable<CallOutput<'audit.results'>>['checks'][number];

/** A Monaco-shaped marker (no Monaco import here, so any editor can use it). */
export interface AuditMarker {
  startLineNumber: number;
  startColumn: number;
  endLineNumber: number;
  endColumn: number;
  message: string;
  /** Monaco's MarkerSeverity: 8 error, 4 warning. */
  severity: 8 | 4;
  source: string;
  code: string;
}

/** Markers at the offending lines of an audit: failed checks as errors, warnings as warnings. */
export function auditMarkers(checks: readonly Check[], lineCount = Number.MAX_SAFE_INTEGER): AuditMarker[] {
  const out: AuditMarker[] = [];
  for (const c of checks) {
    if (c.status !== 'fail' && c.status !== 'warn') continue;
    const lines = new Set<number>();
    const line = c.evidence.line;
    if (typeof line === 'number' && line >= 1) lines.add(line);
    const crashes = c.evidence.crashes;
    if (Array.isArray(crashes)) for (const x of crashes) if (x && typeof x.line === 'number') lines.add(x.line as number);
    const mism = c.evidence.mismatches;
    if (Array.isArray(mism)) for (const x of mism) if (x && typeof x.line === 'number') lines.add(x.line as number);
    for (const l of lines) {
      const ln = Math.min(l, lineCount);
      out.push({ startLineNumber: ln, startColumn: 1, endLineNumber: ln, endColumn: 10_000, message: `${c.id}: ${c.message}`, severity: c.status === 'fail' ? 8 : 4, source: 'audit', code: c.id });
    }
  }
  return out;
}

interface MonacoLike {
  editor: { setModelMarkers(model: unknown, owner: string, markers: AuditMarker[]): void };
}

/** For the editor: put (or clear, with no checks) the audit's markers on a model. */
export function applyAuditMarkers(monaco: MonacoLike, model: { getLineCount(): number } | null, checks: readonly Check[] | null): void {
  if (!model) return;
  monaco.editor.setModelMarkers(model, 'audit', checks ? auditMarkers(checks, model.getLineCount()) : []);
}
