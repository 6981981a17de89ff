import { cpus } from 'node:os';
import type { Db } from '../../memory/db';
import type { EventBus } from '../../server/events';
import type { EventPayload } from '../../api';
import { DomainError } from '../../errors';
import { probePython } from '../../runtime/native';
import { validateCheckIds, verdictOf, spadeAccepts, type AuditOptions } from '../types';
import { drivePoolSweep, poolItems, preparePoolSweep, stopPoolSweep, type StoredSweepOptions } from './poolAudit';
import { BackgroundSweeps } from './backgroundSweeps';
import { recentSweeps, savedJobHosts, sweepCounts, sweepResults } from './sweepStore';
import { parseTarget, type DispatchSettings, type SweepTarget } from './targets';
import type { SshTarget } from '../../jobs/types';

export type SweepView = EventPayload<'audit.sweepProgress'>;

/** A target as the API names it: `local`, a saved job host (Slurm over SSH), or a Ray head. */
export type TargetInput = { kind: 'local' } | { kind: 'slurm'; host: string } | { kind: 'ray'; address: string; python?: string | undefined };

export interface PoolAuditServiceOptions {
  db: Db;
  dataDir: string;
  events: EventBus;
  /** SPADE's turn budget as the user set it (the CLI's --max-turns default is the same 30). */
  maxTurns: () => number;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

/** `HOST:PORT`, `ray://HOST:PORT` or `http://HOST:PORT`, as parseTarget reads `--on ray://...`. */
function rayTarget(address: string): SweepTarget {
  const hostPort = address.trim().replace(/^(ray|https?):\/\//, '').replace(/\/$/, '');
  try {
    return parseTarget(`ray://${hostPort}`);
  } catch {
    throw new DomainError('invalid_input', `Not a Ray address: ${address} (give HOST:PORT of the head's dashboard, e.g. 127.0.0.1:8265)`);
  }
}

function hostLabel(h: SshTarget): string {
  return `${h.user ? `${h.user}@` : ''}${h.host}${h.port ? `:${h.port}` : ''}`;
}

/** The SSH targets of jobs launched before over SSH or Slurm, each once, newest first. */
export function jobHosts(db: Db): string[] {
  return [...new Set((savedJobHosts(db) as SshTarget[]).map(hostLabel))];
}

/**
 * A target as the API names it, checked, with what its work needs (the app's defaults, the CLI's:
 * one worker a core here, shards of 30, two minutes an environment). Shared by pool audits and
 * design rounds, so that both reach a target the same way.
 */
export function resolveTarget(db: Db, target: TargetInput): { target: SweepTarget; dispatch: DispatchSettings } {
  const t: SweepTarget = target.kind === 'local' ? { kind: 'local' } : target.kind === 'ray' ? rayTarget(target.address) : { kind: 'slurm', host: target.host };
  if (t.kind === 'slurm' && !jobHosts(db).includes(t.host) && !/^(?:[^@\s]+@)?[^:@\s]+(?::\d+)?$/.test(t.host)) throw new DomainError('invalid_input', `Not a job host: ${t.host}`);
  // This machine's audits find their own interpreter; a cluster's nodes are named this one's path (same image).
  const python = t.kind === 'local' ? '' : probePython()?.path;
  if (t.kind !== 'local' && python === undefined) throw new DomainError('unavailable', 'No Python here to name for the nodes (the work runs the interpreter this machine audits with)');
  return { target: t, dispatch: { workers: Math.max(1, cpus().length), shardSize: 30, envTimeoutSec: 120, python: python ?? '', ...(target.kind === 'ray' && target.python ? { rayPython: target.python } : {}) } };
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
        kind: 'audit',
        label: 'audit sweep',
        counts: sweepCounts,
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
    return recentSweeps(this.o.db, limit).map((s) => this.sweeps.view(s));
  }

  results(id: string): { envId: number | null; name: string; hash: string; verdict: 'pass' | 'warn' | 'fail' | null; spadeAccepts: boolean | null; failing: string[] }[] {
    const sweep = this.sweeps.find(id);
    const got = sweepResults(this.o.db, id);
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
