/**
 * What `audit PATH|--all` and `audit --pool` share: the output options (--format, --fail-on, --out)
 * checked the same way, and the report written the same way, so the two agree byte for byte.
 */
import { writeFileSync } from 'node:fs';
import { failOnMet, toMarkdown, toTable, type AuditReport } from '../../audit/report';
import type { CliIO } from '../command';
import { UsageError } from '../command';

export type ReportFormat = 'json' | 'md' | 'table';

export interface OutputOptions {
  format: ReportFormat;
  failOn: 'fail' | 'warn' | undefined;
  out: string | undefined;
}

export function outputOptions(format: string, failOn: string | undefined, out: string | undefined): OutputOptions {
  if (format !== 'json' && format !== 'md' && format !== 'table') throw new UsageError(`--format must be json, md or table, got ${format}`);
  if (failOn !== undefined && failOn !== 'fail' && failOn !== 'warn') throw new UsageError(`--fail-on must be fail or warn, got ${failOn}`);
  return { format, failOn, out };
}

/** Prints (or writes to --out) the report; the exit status is 1 when --fail-on is met. */
export function writeReport(io: CliIO, report: AuditReport, o: OutputOptions): number {
  const text = o.format === 'json' ? JSON.stringify(report, null, 2) + '\n' : o.format === 'md' ? toMarkdown(report) : toTable(report);
  if (o.out) {
    writeFileSync(o.out, text);
    io.err(`Wrote ${o.out}`);
  } else io.out(text);
  return failOnMet(report, o.failOn) ? 1 : 0;
}
