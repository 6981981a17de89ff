import { cpus } from 'node:os';
import type { Db } from '../../memory/db';
import type { EventBus } from '../../server/events';
import type { EventPayload } from '../../api';
import { errorMessage } from '../../api';
import { DomainError } from '../../errors';
import { probePython } from '../../runtime/native';
import { validateCheckIds, verdictOf, spadeAccepts, type AuditOptions } from '../types';
import { drivePoolSweep, poolItems, preparePoolSweep, stopPoolSweep, type StoredSweepOptions } from './poolAudit';
import { SweepCancelled, type SweepProgress } from './sweep';
import { getSweep, recentSweeps, savedJobHosts, setSweepState, sweepCounts, sweepResults, type SweepRow } from './sweepStore';
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

interface Live {
  abort: AbortController;
  progress: SweepProgress | null;
  /** Failures among the results that had arrived before this run (runSweep counts this run's). */
  failedBefore: number;
  done: Promise<void>;
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
  private readonly live = new Map<string, Live>();
  private closed = false;

  constructor(private readonly o: PoolAuditServiceOptions) {}

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
    if (resumed && this.live.has(sweep.id)) return this.view(sweep);
    return this.drive(sweep);
  }

  resume(id: string): SweepView {
    const sweep = getSweep(this.o.db, id);
    if (!sweep || sweep.kind !== 'audit') throw new DomainError('not_found', `No audit sweep ${id}`);
    if (this.live.has(id)) return this.view(sweep);
    if (sweep.state === 'done') throw new DomainError('conflict', `Audit sweep ${id} is finished`);
    setSweepState(this.o.db, id, 'running');
    return this.drive(getSweep(this.o.db, id)!);
  }

  /** Stops the sweep's work (here, or its Ray job or Slurm array); what arrived stays. */
  async cancel(id: string): Promise<{ cancelled: boolean; stopped: string[] }> {
    const sweep = getSweep(this.o.db, id);
    if (!sweep || sweep.kind !== 'audit') throw new DomainError('not_found', `No audit sweep ${id}`);
    const l = this.live.get(id);
    if (l) {
      l.abort.abort();
      await l.done;
      const after = getSweep(this.o.db, id)!;
      return { cancelled: after.state === 'cancelled', stopped: [] };
    }
    if (sweep.state !== 'running') return { cancelled: false, stopped: [] };
    // Interrupted: nothing follows it here, but its Ray job or Slurm array may still run.
    const stopped = await stopPoolSweep(this.o.db, this.o.dataDir, sweep);
    setSweepState(this.o.db, id, 'cancelled');
    this.emit(getSweep(this.o.db, id)!, stopped.join('; ') || null);
    return { cancelled: true, stopped };
  }

  list(limit: number): SweepView[] {
    return recentSweeps(this.o.db, limit).map((s) => this.view(s));
  }

  results(id: string): { envId: number | null; name: string; hash: string; verdict: 'pass' | 'warn' | 'fail' | null; spadeAccepts: boolean | null; failing: string[] }[] {
    const sweep = getSweep(this.o.db, id);
    if (!sweep || sweep.kind !== 'audit') throw new DomainError('not_found', `No audit sweep ${id}`);
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
    return this.live.size;
  }

  /** Cancels what runs, as Ctrl-C does to the CLI (its work on the engine stopped, what arrived kept, resumable), and waits for each to end. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.live.values()];
    for (const l of all) l.abort.abort();
    await Promise.all(all.map((l) => l.done));
  }

  private drive(sweep: SweepRow): SweepView {
    if (this.closed) throw new DomainError('unavailable', 'The workbench is shutting down');
    const abort = new AbortController();
    const l: Live = { abort, progress: null, failedBefore: sweepCounts(this.o.db, sweep.id).failed, done: Promise.resolve() };
    this.live.set(sweep.id, l);
    let last = 0;
    l.done = drivePoolSweep(this.o.db, this.o.dataDir, sweep, {
      signal: abort.signal,
      onProgress: (p) => {
        l.progress = p;
        // The end (done, cancelled) goes out from finish(), once this sweep no longer runs here.
        if (p.phase === 'done' || p.phase === 'cancelled') return;
        if (p.phase === 'submitting' || Date.now() - last >= 250) {
          last = Date.now();
          this.emit(getSweep(this.o.db, sweep.id)!);
        }
      },
      onSubmitted: (h) => this.o.log?.('info', `audit sweep ${sweep.id} on ${sweep.target}: submitted ${JSON.stringify(h)}`),
    })
      .then(
        () => this.finish(sweep.id, null),
        // What a cluster answered to the stop is worth showing; this machine's audits just end.
        (e: unknown) => this.finish(sweep.id, e instanceof SweepCancelled ? (sweep.target === 'local' ? null : e.stopped.join('; ') || null) : errorMessage(e), !(e instanceof SweepCancelled)),
      );
    return this.view(getSweep(this.o.db, sweep.id)!);
  }

  private finish(id: string, message: string | null, failed = false): void {
    const l = this.live.get(id);
    this.live.delete(id);
    const s = getSweep(this.o.db, id);
    if (!s) return;
    // A sweep that threw before runSweep could mark it (a lost version, an engine refusing the submission) failed.
    if (failed && s.state === 'running') setSweepState(this.o.db, id, 'failed');
    if (failed) this.o.log?.('error', `audit sweep ${id} on ${s.target}: ${message ?? 'failed'}`);
    this.emit(getSweep(this.o.db, id)!, message, l?.progress ?? null);
  }

  private emit(s: SweepRow, message: string | null = null, progress?: SweepProgress | null): void {
    this.o.events.emit('audit.sweepProgress', this.view(s, message, progress));
  }

  private view(s: SweepRow, message: string | null = null, progress?: SweepProgress | null): SweepView {
    const l = this.live.get(s.id);
    const p = progress ?? l?.progress ?? null;
    // While it runs, its own counts (reading a large sweep's results four times a second would cost more than the audits).
    const { done, failed } = l && p ? { done: p.done, failed: l.failedBefore + p.failed } : sweepCounts(this.o.db, s.id);
    const state: SweepView['state'] = s.state === 'running' && !l ? 'interrupted' : s.state;
    return {
      id: s.id,
      query: s.query,
      target: s.target,
      state,
      phase: l && p && (p.phase === 'submitting' || p.phase === 'following') ? p.phase : null,
      done,
      total: s.items.length,
      failed,
      envsPerSec: p?.envsPerSec ?? null,
      message,
      createdAt: s.createdAt,
      updatedAt: s.updatedAt,
    };
  }
}
