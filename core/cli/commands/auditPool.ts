import { TARGET_OPTIONS, cliTarget, nodePython, reachSettings } from './targetOptions';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import type { CliIO } from '../command';
import { UsageError } from '../command';
import { openDataDir } from '../../memory/cliDb';
import { outputOptions, writeReport } from './auditOutput';
import { validateCheckIds, type AuditOptions } from '../../audit/types';
import type { SweepProgress } from '../../sweeps/sweep';
import { followSweep } from './sweepCli';
import { refuseIfOwned } from '../../sweeps/sweepOwner';
import { getSweep, setSweepState, type SweepRow } from '../../sweeps/sweepStore';
import type { DispatchSettings } from '../../sweeps/targets';
import { drivePoolSweep, preparePoolSweep, stopPoolSweep } from '../../audit/poolAudit';

/** True when the audit command line is a pool sweep (`--pool`, `--resume`, `--cancel`). */
export function isPoolAudit(argv: readonly string[]): boolean {
  return argv.some((a) => /^--(pool|resume|cancel)(=|$)/.test(a));
}

function progressLine(label: string, p: SweepProgress): string {
  const rate = p.envsPerSec !== null ? `, ${p.envsPerSec.toFixed(1)} envs/s` : '';
  const eta = p.envsPerSec ? `, about ${Math.ceil((p.total - p.done) / p.envsPerSec)} s left` : '';
  return `audit sweep ${p.sweepId} on ${label}: ${p.done}/${p.total} audited (${p.failed} fail${p.repeats ? `, ${p.repeats} repeated result(s) not counted` : ''}${rate}${eta})${p.phase === 'submitting' ? ', submitting' : ''}`;
}

/**
 * `audit --pool QUERY [--on TARGET]`: the library's environments that match QUERY, audited here or
 * on a cluster as a sweep kept in SQLite as results arrive. Running the same command again (or
 * `--resume ID`) finishes an interrupted sweep; `--cancel ID` stops its work on the cluster.
 */
export async function runPoolAudit(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    allowPositionals: false,
    options: {
      pool: { type: 'string' },
      ...TARGET_OPTIONS,
      resume: { type: 'string' },
      cancel: { type: 'string' },
      checks: { type: 'string' },
      format: { type: 'string' },
      json: { type: 'boolean' },
      out: { type: 'string' },
      'fail-on': { type: 'string' },
      workers: { type: 'string' },
      'max-turns': { type: 'string' },
      'call-timeout': { type: 'string' },
      'env-timeout': { type: 'string' },
      'shard-size': { type: 'string' },
      'data-dir': { type: 'string' },
      quiet: { type: 'boolean' },
    },
    strict: true,
  });
  const modes = [values.pool !== undefined, values.resume !== undefined, values.cancel !== undefined].filter(Boolean).length;
  if (modes !== 1) throw new UsageError('Give one of --pool QUERY, --resume SWEEP_ID or --cancel SWEEP_ID');
  const output = outputOptions(values.json ? 'json' : (values.format ?? 'table'), values['fail-on'], values.out);
  const num = (v: string | undefined, name: string, lo: number, hi: number, dflt: number) => {
    if (v === undefined) return dflt;
    const n = Number(v);
    if (!Number.isFinite(n) || n < lo || n > hi) throw new UsageError(`--${name} must be a number from ${lo} to ${hi}, got ${v}`);
    return n;
  };
  const target = cliTarget(values.on);
  if (values.on !== undefined && values.pool === undefined) throw new UsageError('--on goes with --pool; a resumed or cancelled sweep keeps the target it was started on');
  // Every option is checked before the data dir is opened: a bad command line changes nothing.
  const checks = values.checks ? values.checks.split(',').map((s) => s.trim()).filter(Boolean) : undefined;
  if (checks) {
    const bad = validateCheckIds(checks);
    if (bad.length) throw new UsageError(`Unknown check id(s): ${bad.join(', ')}`);
  }
  const audit: AuditOptions = {
    // SPADE's budget default (SpadeConfig.max_turns)
    maxTurns: Math.round(num(values['max-turns'], 'max-turns', 1, 10_000, 30)),
    callTimeoutSec: num(values['call-timeout'], 'call-timeout', 0.1, 600, 5),
    ...(checks ? { checks } : {}),
  };
  const python = nodePython(values, values.pool !== undefined);
  const dispatch: DispatchSettings = {
    workers: Math.round(num(values.workers, 'workers', 1, 64, Math.max(1, cpus().length))),
    shardSize: Math.round(num(values['shard-size'], 'shard-size', 1, 100_000, 30)),
    envTimeoutSec: num(values['env-timeout'], 'env-timeout', 1, 3600, 120),
    python,
    ...reachSettings(values),
  };
  const { db, dataDir } = openDataDir(values['data-dir']);
  try {
    let sweep: SweepRow;
    if (values.pool !== undefined) {
      const prepared = preparePoolSweep(db, values.pool, { audit, dispatch, target });
      if (!prepared.sweep.items.length) io.err(`No environment in the library matches "${values.pool}".`);
      if (prepared.resumed) io.err(`Resuming audit sweep ${prepared.sweep.id} (the same pool, checks and target, interrupted earlier).`);
      sweep = prepared.sweep;
    } else {
      const id = (values.resume ?? values.cancel)!;
      const found = getSweep(db, id);
      if (!found || found.kind !== 'audit') throw new UsageError(`No audit sweep ${id} in ${dataDir}${found ? ' (that is a regret sweep: regret --resume/--cancel)' : ''}`);
      sweep = found;
    }
    if (values.cancel !== undefined) {
      // Another live process drives it: marked cancelled here, it would go on there.
      refuseIfOwned(db, sweep.id, 'Audit sweep', 'cancelled');
      const answers = await stopPoolSweep(db, dataDir, sweep);
      if (sweep.state === 'running') setSweepState(db, sweep.id, 'cancelled', answers.join('; ') || null);
      io.out(`Audit sweep ${sweep.id} on ${sweep.target}: cancelled${answers.length ? ` (${answers.join('; ')})` : ''}.\n`);
      return 0;
    }
    const report = await followSweep(io, { kind: 'audit', sweepId: sweep.id, target: sweep.target, unit: 'environments', quiet: values.quiet === true, progress: (p) => progressLine(sweep.target, p) }, (hooks) =>
      drivePoolSweep(db, dataDir, sweep, hooks),
    );
    if (report === null) return 130;
    return writeReport(io, report, output);
  } finally {
    db.close();
  }
}
