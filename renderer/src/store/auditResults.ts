import { create } from 'zustand';
import type { CallOutput } from '../../../core/api';
import { backend, useApp, type Problem } from './app';
import { attempt } from './report';

export type StoredAudit = NonNullable<CallOutput<'audit.results'>>;

interface AuditResultsState {
  /** Stored audits by version hash, as last fetched or run here (null: never audited). */
  byHash: Record<string, StoredAudit | null>;
  /** Bumped whenever any audit finished, so lists (library verdicts, Problems) refetch. */
  generation: number;
}

/**
 * One place that knows the latest audit of each version: the audit tab, the editor's squiggles,
 * the library's verdict column and Problems all read it, so an "Audit again" shows everywhere at once.
 */
export const useAuditResults = create<AuditResultsState>(() => ({ byHash: {}, generation: 0 }));

function remember(hash: string, a: StoredAudit | null, bump: boolean): void {
  useAuditResults.setState((s) => ({ byHash: { ...s.byHash, [hash]: a }, generation: bump ? s.generation + 1 : s.generation }));
}

export async function loadAudit(hash: string): Promise<StoredAudit | null> {
  const a = await backend().call('audit.results', { hash });
  remember(hash, a, false);
  return a;
}

/** `runId`: the audit reports as audit.runProgress under this id, and audit.runCancel stops it. */
export async function runAudit(hash: string, runId?: string): Promise<StoredAudit> {
  const a = await backend().call('audit.run', { hash, ...(runId ? { runId } : {}) });
  remember(hash, a, true);
  void refreshAuditProblems();
  return a;
}

/** A batch finished somewhere: forget what we hold (it may be stale) and let lists refetch. */
export function auditsChanged(): void {
  useAuditResults.setState((s) => ({ byHash: {}, generation: s.generation + 1 }));
  void refreshAuditProblems();
}

const PROBLEM_LIMIT = 200;

/** Problems lists every environment whose head version fails its stored audit. */
export async function refreshAuditProblems(): Promise<void> {
  // Follows every audit: a list that cannot be had leaves the last one in Problems and says why in the Logs.
  await attempt('audit', 'Could not list failing audits', async () => {
    const { rows, total } = await backend().call('memory.search', { query: '', filters: { audit: { status: 'fail' } }, limit: PROBLEM_LIMIT, sort: { field: 'name', dir: 'asc' } });
    const verdicts = rows.length ? await backend().call('audit.verdicts', { hashes: rows.map((r) => r.hash) }) : [];
    const failing = new Map(verdicts.map((v) => [v.hash, v.failing]));
    const list: Problem[] = rows.map((r) => ({
      id: `audit:${r.id}`,
      severity: 'error',
      message: `${r.name}: audit fails ${(failing.get(r.hash) ?? []).join(', ') || '(checks)'} (version ${r.hash.slice(0, 12)})`,
      source: 'audit',
      target: { tab: { kind: 'audit', envId: r.id }, title: `Audit: ${r.name}` },
    }));
    if (total > rows.length) list.push({ id: 'audit:more', severity: 'info', message: `…and ${total - rows.length} more failing environments (Pool audit dashboard)`, source: 'audit' });
    useApp.getState().setProblems('audit', list);
  }, { quiet: 'warn' });
}
