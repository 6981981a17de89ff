import type { Db } from '../memory/db';
import type { EventBus } from '../server/events';
import type { EventPayload } from '../api';
import { DomainError } from '../errors';
import { validateCheckIds, verdictOf, spadeAccepts, type AuditOptions, type EnvAudit } from './types';
import { drivePoolSweep, poolItems, preparePoolSweep, stopPoolSweep, type StoredSweepOptions } from './poolAudit';
import { auditSweeps } from './sweepKind';
import { BackgroundSweeps } from '../sweeps/backgroundSweeps';
import { recentSweeps, sweepResults } from '../sweeps/sweepStore';
import { jobHosts, resolveTarget, type TargetInput } from '../sweeps/targets';

export type SweepView = EventPayload<'audit.sweepProgress'>;

export interface PoolAuditServiceOptions {
  db: Db;
  dataDir: string;
  events: EventBus;
  /** SPADE's turn budget as the user set it (the CLI's --max-turns default is the same 30). */
  maxTurns: () => number;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

/**
 * Pool audit sweeps started from the app: the same sweep as `audit --pool` (poolAudit.ts), run in
 * the background with its progress as `audit.sweepProgress`, cancellable and resumable. A sweep
 * left 'running' by a workbench that stopped is shown as interrupted, to resume.
 */
export class PoolAuditService {
  private readonly sweeps: BackgroundSweeps<SweepView>;

  constructor(private readonly o: PoolAuditServiceOptions) {
    this.sweeps = new BackgroundSweeps<SweepView>(
      o.db,
      {
        info: auditSweeps,
        run: (sweep, signal, onProgress, onSubmitted) => drivePoolSweep(o.db, o.dataDir, sweep, { signal, onProgress, onSubmitted }),
        stopInterrupted: (sweep) => stopPoolSweep(o.db, o.dataDir, sweep),
        view: (s, live, message) => ({
          id: s.id,
          query: s.query,
          target: s.target,
          state: live.state,
          phase: live.phase,
          done: live.done,
          total: s.items.length,
          failed: live.failed,
          envsPerSec: live.progress?.envsPerSec ?? null,
          message,
          createdAt: s.createdAt,
          updatedAt: s.updatedAt,
        }),
        emit: (view) => o.events.emit('audit.sweepProgress', view),
      },
      o.log,
    );
  }

  /** The SSH targets of jobs launched before over SSH or Slurm, each once, newest first. */
  hosts(): string[] {
    return jobHosts(this.o.db);
  }

  start(query: string, target: TargetInput = { kind: 'local' }, checks?: string[]): SweepView {
    const bad = checks ? validateCheckIds(checks) : [];
    if (bad.length) throw new DomainError('invalid_input', `Unknown check id(s): ${bad.join(', ')}`);
    const { target: t, dispatch } = resolveTarget(this.o.db, target);
    const audit: AuditOptions = { maxTurns: this.o.maxTurns(), callTimeoutSec: 5, ...(checks?.length ? { checks } : {}) };
    const stored: StoredSweepOptions = {
      audit,
      target: t,
      dispatch,
    };
    const items = poolItems(this.o.db, query.trim(), audit);
    if (!items.length) throw new DomainError('invalid_input', `No environment in the library matches "${query.trim()}"`);
    const { sweep, resumed } = preparePoolSweep(this.o.db, query.trim(), stored, items);
    if (resumed && this.sweeps.isLive(sweep.id)) return this.sweeps.view(sweep);
    return this.sweeps.drive(sweep);
  }

  resume(id: string): SweepView {
    return this.sweeps.resume(id);
  }

  /** Stops the sweep's work (here, or its Ray job or Slurm array); what arrived stays. */
  cancel(id: string): Promise<{ cancelled: boolean; stopped: string[] }> {
    return this.sweeps.cancel(id);
  }

  list(limit: number): SweepView[] {
    return recentSweeps(this.o.db, limit, auditSweeps.kind).map((s) => this.sweeps.view(s));
  }

  results(id: string): { envId: number | null; name: string; hash: string; verdict: 'pass' | 'warn' | 'fail' | null; spadeAccepts: boolean | null; failing: string[] }[] {
    const sweep = this.sweeps.find(id);
    const got = sweepResults<EnvAudit>(this.o.db, id);
    return sweep.items.map((it) => {
      const a = got.get(it.key);
      const envId = /^memory:(\d+)$/.exec(it.file)?.[1];
      return {
        envId: envId ? Number(envId) : null,
        name: it.name,
        hash: it.sha256,
        verdict: a ? verdictOf(a.checks) : null,
        spadeAccepts: a ? spadeAccepts(a.checks) : null,
        failing: a ? a.checks.filter((c) => c.status === 'fail').map((c) => c.id) : [],
      };
    });
  }

  busy(): number {
    return this.sweeps.busy();
  }

  /** Cancels what runs, as Ctrl-C does to the CLI (its work on the engine stopped, what arrived kept, resumable), and waits for each to end. */
  close(): Promise<void> {
    return this.sweeps.close();
  }
}
