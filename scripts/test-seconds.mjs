#!/usr/bin/env node
// Refreshes tests/fileSeconds.json (the order vitest.config.ts starts test files in, longest first)
// from vitest JSON reports of full runs on the 2-core machine:
//   SPADE_TEST_REPORTS=/tmp/reports npm test     (test-parallel keeps unit.json and e2e.json there)
//   node scripts/test-seconds.mjs /tmp/reports/unit.json /tmp/reports/e2e.json
// Files in a report replace their entries; files under 2 s are dropped; other entries are kept.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(import.meta.url), '..', '..');
const tablePath = join(root, 'tests', 'fileSeconds.json');
const reports = process.argv.slice(2);
if (!reports.length) {
  console.error('usage: node scripts/test-seconds.mjs VITEST_JSON_REPORT...');
  process.exit(2);
}
const { _: note, ...table } = JSON.parse(readFileSync(tablePath, 'utf8'));
for (const report of reports) {
  const { testResults } = JSON.parse(readFileSync(report, 'utf8'));
  for (const r of testResults) {
    // By its path under tests/, so a report of a run in another clone (a fresh one, as CI's) counts too.
    const path = r.name.split('\\').join('/');
    const file = /(?:^|\/)(tests\/(?:unit|integration|e2e)\/.*)$/.exec(path)?.[1] ?? relative(root, r.name).split('\\').join('/');
    const seconds = Math.round((r.endTime - r.startTime) / 1000);
    if (seconds >= 2) table[file] = seconds;
    else delete table[file];
  }
}
const sorted = Object.entries(table).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
writeFileSync(tablePath, `${JSON.stringify({ _: note, ...Object.fromEntries(sorted) }, null, 2)}\n`);
console.log(`${tablePath}: ${sorted.length} files`);
