import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import type { Command } from '../command';
import { runtimeArg, UsageError } from '../command';
import { commandInfo } from '../catalog';
import { openDataDir } from '../../memory/cliDb';
import { collectSources } from '../../audit/sources';
import { auditToReport, type RunItem } from '../../audit/runner';
import { outputOptions, writeReport } from './auditOutput';
import { headHashes, saveAudit, targetsFor } from '../../audit/auditStore';
import { validateCheckIds, type AuditOptions } from '../../audit/types';
import { appVersion } from '../../base/appInfo';
import { isPoolAudit, runPoolAudit } from './auditPool';

export const auditCommand: Command = {
  ...commandInfo('audit'),
  async run(argv, io) {
    if (isPoolAudit(argv)) return runPoolAudit(argv, io);
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        all: { type: 'boolean' },
        checks: { type: 'string' },
        format: { type: 'string' },
        out: { type: 'string' },
        'fail-on': { type: 'string' },
        workers: { type: 'string' },
        'max-turns': { type: 'string' },
        'call-timeout': { type: 'string' },
        'data-dir': { type: 'string' },
        runtime: { type: 'string' },
      },
      strict: true,
    });
    const runtime = runtimeArg(values.runtime, 'cpython', true);
    const output = outputOptions(values.format ?? 'table', values['fail-on'], values.out);
    if (!values.all && positionals.length !== 1) throw new UsageError('Give one PATH (a file or a folder of .py files) or --all');
    if (values.all && positionals.length) throw new UsageError('Give either PATH or --all, not both');
    const checks = values.checks ? values.checks.split(',').map((s) => s.trim()).filter(Boolean) : undefined;
    if (checks) {
      const bad = validateCheckIds(checks);
      if (bad.length) throw new UsageError(`Unknown check id(s): ${bad.join(', ')}`);
    }
    const int = (v: string | undefined, name: string, lo: number, hi: number, dflt: number) => {
      if (v === undefined) return dflt;
      const n = Number(v);
      if (!Number.isFinite(n) || n < lo || n > hi) throw new UsageError(`--${name} must be a number from ${lo} to ${hi}, got ${v}`);
      return n;
    };
    const workers = Math.round(int(values.workers, 'workers', 1, 64, Math.max(1, cpus().length)));
    const options: AuditOptions = {
      // SPADE's budget default (SpadeConfig.max_turns)
      maxTurns: Math.round(int(values['max-turns'], 'max-turns', 1, 10_000, 30)),
      callTimeoutSec: int(values['call-timeout'], 'call-timeout', 0.1, 600, 5),
      ...(checks ? { checks } : {}),
    };

    let items: RunItem[];
    let store: ((r: Awaited<ReturnType<typeof auditToReport>>) => void) | undefined;
    let close = () => {};
    if (values.all) {
      const { db } = openDataDir(values['data-dir']);
      close = () => db.close();
      const targets = targetsFor(db, headHashes(db));
      items = targets.map((t) => ({ file: `memory:${t.envId}`, sha256: t.hash, name: t.name, source: t.source, hint: t.hint }));
      // A partial run (some checks only) would overwrite a full result with less; only full runs are kept.
      if (!checks) store = (r) => r.environments.forEach((e) => saveAudit(db, e.sha256, { className: e.name, toolUse: e.checks.some((c) => c.id.startsWith('tool.')), checks: e.checks, elapsedMs: 0 }, { options: { ...options, runtime }, toolVersion: appVersion() }));
    } else {
      items = collectSources(positionals[0]!).map((s) => ({ file: s.file, sha256: s.sha256, name: s.stem, source: s.source, hint: s.hint }));
    }
    try {
      if (!items.length) io.err('No environments found.');
      const report = await auditToReport(items, options, workers, undefined, runtime);
      store?.(report);
      return writeReport(io, report, output);
    } finally {
      close();
    }
  },
};
