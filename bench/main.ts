import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { suites } from './suites';
import type { BenchRow } from './types';
import { rowShown, suitesFor } from './select';
import { errorMessage } from '../core/api';

function met(row: BenchRow): boolean | null {
  if (!row.goal) return null;
  return row.goal.op === '<=' ? row.value <= row.goal.value : row.value >= row.goal.value;
}

function fmt(v: number): string {
  if (Math.abs(v) >= 1000) return v.toFixed(0);
  if (Math.abs(v) >= 10) return v.toFixed(1);
  return v.toFixed(3);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { json: { type: 'string' }, only: { type: 'string', multiple: true } }, strict: true });
  const only = values.only ?? [];
  const chosen = only.length === 0 ? suites : suites.filter((s) => only.some((p) => suitesFor(suites, p).includes(s)));
  const rows: BenchRow[] = [];
  for (const suite of chosen) {
    process.stderr.write(`bench: ${suite.prefix} ...\n`);
    try {
      const got = await suite.run((m) => process.stderr.write(`  ${m}\n`));
      rows.push(...got.filter((r) => rowShown(suite, r.id, only)));
    } catch (e) {
      process.stderr.write(`bench: ${suite.prefix} failed: ${e instanceof Error ? (e.stack ?? e.message) : errorMessage(e)}\n`);
      process.exitCode = 1;
    }
  }
  const idW = Math.max(4, ...rows.map((r) => r.id.length));
  console.log(`${'id'.padEnd(idW)}  ${'value'.padStart(12)}  ${'unit'.padEnd(12)}  ${'goal'.padEnd(12)}  met`);
  for (const r of rows) {
    const m = met(r);
    const goal = r.goal ? `${r.goal.op} ${r.goal.value}` : '';
    console.log(`${r.id.padEnd(idW)}  ${fmt(r.value).padStart(12)}  ${r.unit.padEnd(12)}  ${goal.padEnd(12)}  ${m === null ? '-' : m ? 'yes' : 'NO'}${r.note ? `  (${r.note})` : ''}`);
  }
  if (values.json) {
    const out = rows.map((r) => ({ id: r.id, value: r.value, unit: r.unit, goal: r.goal ? `${r.goal.op} ${r.goal.value}` : null, met: met(r) }));
    writeFileSync(values.json, `${JSON.stringify(out, null, 2)}\n`);
  }
}

void main().then(() => process.exit(process.exitCode ?? 0));

