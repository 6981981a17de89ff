import { ALL_CHECKS, spadeVerdictOf, verdictOf, workbenchVerdictOf, type CheckResult, type CheckStatus, type EnvAudit, type Verdict } from './types';

/** The JSON report of `spade-workbench audit --format json`. Names are stable: scripts depend on them. */
export interface ReportEnv {
  file: string;
  sha256: string;
  name: string;
  /** The workbench's overall verdict (all checks). */
  verdict: Verdict;
  /** SPADE's verdict: decided by the spade.* checks alone, with SPADE's message when it rejects. */
  spade: { verdict: 'accept' | 'reject'; message: string | null; check: string | null };
  /** The workbench's own checks alone, apart from SPADE's verdict. */
  workbenchVerdict: Verdict;
  checks: CheckResult[];
}

export interface AuditReport {
  tool: Record<string, unknown>;
  environments: ReportEnv[];
  summary: { environments: number; by_check: Record<string, Record<CheckStatus, number>> };
}

export function reportEnv(file: string, sha256: string, fallbackName: string, a: EnvAudit): ReportEnv {
  return { file, sha256, name: a.className ?? fallbackName, verdict: verdictOf(a.checks), spade: spadeVerdictOf(a.checks), workbenchVerdict: workbenchVerdictOf(a.checks), checks: a.checks };
}

export function summarize(envs: readonly { checks: readonly CheckResult[] }[]): AuditReport['summary'] {
  const by: Record<string, Record<CheckStatus, number>> = {};
  const order = new Map(ALL_CHECKS.map((c, i) => [c, i]));
  for (const e of envs) {
    for (const c of e.checks) {
      const row = (by[c.id] ??= { pass: 0, warn: 0, fail: 0, skip: 0 });
      row[c.status]++;
    }
  }
  const sorted = Object.fromEntries(Object.entries(by).sort(([a], [b]) => (order.get(a) ?? 99) - (order.get(b) ?? 99)));
  return { environments: envs.length, by_check: sorted };
}

export function buildReport(tool: Record<string, unknown>, envs: ReportEnv[]): AuditReport {
  return { tool, environments: envs, summary: summarize(envs) };
}

function evidenceLine(c: CheckResult): string {
  const e = c.evidence;
  const parts: string[] = [];
  if (e.seed !== undefined) parts.push(`seed ${JSON.stringify(e.seed)}`);
  if (e.line !== undefined) parts.push(`line ${String(e.line)}`);
  if (Array.isArray(e.actions) && e.actions.length) parts.push(`actions ${JSON.stringify(e.actions.slice(0, 3)).slice(0, 120)}`);
  return parts.join(', ');
}

export function toMarkdown(r: AuditReport): string {
  const out: string[] = ['# Audit report', ''];
  const counts = { pass: 0, warn: 0, fail: 0 };
  for (const e of r.environments) counts[e.verdict]++;
  const rejected = r.environments.filter((e) => e.spade.verdict === 'reject').length;
  out.push(`${r.summary.environments} environment(s): ${counts.fail} fail, ${counts.warn} warn, ${counts.pass} pass. SPADE rejects ${rejected}.`, '');
  out.push('| check | pass | warn | fail | skip |', '|---|---:|---:|---:|---:|');
  for (const [id, c] of Object.entries(r.summary.by_check)) out.push(`| ${id} | ${c.pass} | ${c.warn} | ${c.fail} | ${c.skip} |`);
  for (const e of r.environments) {
    out.push('', `## ${e.name} (${e.verdict})`, '', `\`${e.file}\` sha256 \`${e.sha256.slice(0, 12)}\``, '');
    out.push(e.spade.verdict === 'accept' ? 'SPADE accepts it.' : `SPADE rejects it: ${(e.spade.message ?? '').replace(/\|/g, '\\|')}`, '');
    const bad = e.checks.filter((c) => c.status === 'fail' || c.status === 'warn');
    if (!bad.length) out.push('All checks pass or were skipped.');
    for (const c of bad) {
      const ev = evidenceLine(c);
      out.push(`- **${c.status}** \`${c.id}\`: ${c.message.replace(/\|/g, '\\|')}${ev ? ` (${ev})` : ''}`);
    }
  }
  return out.join('\n') + '\n';
}

export function toTable(r: AuditReport): string {
  const rows = r.environments.map((e) => [e.verdict.toUpperCase(), e.spade.verdict.toUpperCase(), e.name, e.checks.filter((c) => c.status === 'fail').map((c) => c.id).join(',') || '-', e.checks.filter((c) => c.status === 'warn').map((c) => c.id).join(',') || '-', e.file]);
  const head = ['VERDICT', 'SPADE', 'NAME', 'FAILED', 'WARNED', 'FILE'];
  const w = head.map((h, i) => Math.min(60, Math.max(h.length, ...rows.map((row) => row[i]!.length))));
  const fmt = (row: string[]) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(w[i]!))).join('  ');
  const lines = [fmt(head), ...rows.map(fmt), ''];
  const n = { pass: 0, warn: 0, fail: 0 };
  for (const e of r.environments) n[e.verdict]++;
  lines.push(`${r.summary.environments} environments: ${n.fail} fail, ${n.warn} warn, ${n.pass} pass`);
  return lines.join('\n') + '\n';
}

export function failOnMet(r: AuditReport, level: 'fail' | 'warn' | undefined): boolean {
  if (!level) return false;
  return r.environments.some((e) => e.verdict === 'fail' || (level === 'warn' && e.verdict === 'warn'));
}
