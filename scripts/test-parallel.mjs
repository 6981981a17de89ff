#!/usr/bin/env node
// Runs the unit+integration projects and the e2e project at the same time, each line prefixed with
// its side, and fails when either fails. The e2e project runs one file at a time (a browser and an
// app each), so beside it the other projects still use the machine's other core. On 2 cores, side by
// side, both finished 2,021 s after they started (unit+integration 1,868 s, e2e 1,412 s), where CI ran
// them one after the other.
// Arguments after the script go to both vitest runs (e.g. a file filter and --passWithNoTests).
//
// The two sides' lines interleave, and CI keeps only the tail of a long log: a failure printed by the
// side that finished first was lost under the other's lines (CI's run of 939429b said only "e2e FAILED").
// So each side also writes vitest's JSON report, and the last lines printed here name every failed test
// with the start of its error.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { failuresOf } from './vitest-failures.mjs';

const extra = process.argv.slice(2);
const vitest = process.platform === 'win32' ? 'npx.cmd' : 'npx';
// SPADE_TEST_REPORTS=DIR keeps the two reports there (scripts/test-seconds.mjs refreshes the start
// order, tests/fileSeconds.json, from them); otherwise they go to a temporary folder removed at the end.
const kept = process.env.SPADE_TEST_REPORTS;
if (kept) mkdirSync(kept, { recursive: true });
const reports = kept ?? mkdtempSync(join(tmpdir(), 'spade-test-parallel-'));
const sides = [
  { name: 'unit', args: ['vitest', 'run', '--project', 'unit', '--project', 'integration'] },
  { name: 'e2e', args: ['vitest', 'run', '--project', 'e2e'] },
].map((s) => {
  const report = join(reports, `${s.name}.json`);
  return { ...s, report, args: [...s.args, '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...extra] };
});
const started = Date.now();

// One compute thread for torch (the GRPO trainer, its checkpoint server) and for the embedded model's
// llama.cpp. Both sides keep the 2 cores busy, and a library that starts a thread per core then spins
// waiting for a core another process holds. Measured with two busy loops beside it on the 2 cores:
// TRL's first rollout of the CI settings took 82 s with OMP_NUM_THREADS=1 against 319 s with torch's
// default, and `play --endpoint local` of 2 episodes 10.7-12.8 s with SPADE_LOCAL_THREADS=1 against
// 25.6-32.0 s with 2. In CI the GRPO integration file took 877 s, a third of the unit side. A value
// already set is kept; the app itself keeps the libraries' defaults (npm run bench measures those).
const env = { ...process.env, OMP_NUM_THREADS: process.env.OMP_NUM_THREADS ?? '1', SPADE_LOCAL_THREADS: process.env.SPADE_LOCAL_THREADS ?? '1' };

function run(side) {
  return new Promise((resolve) => {
    const child = spawn(vitest, side.args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => process.stdout.write(`[${side.name}] ${line}\n`));
    }
    child.on('error', (e) => resolve({ side: side.name, code: 1, why: e.message }));
    child.on('close', (code, signal) => resolve({ side: side.name, code: code ?? 1, why: signal ? `killed by ${signal}` : null }));
  });
}

// Strips colour codes so the summary reads the same in a file as in a terminal.
const plain = (s) => s.replace(/\u001b\[[0-9;]*m/g, '');

function summarise(side) {
  let failures;
  try {
    failures = failuresOf(readFileSync(side.report, 'utf8'));
  } catch (e) {
    return [`test-parallel: ${side.name}: no JSON report to summarise (${e.code ?? e.message}); its failures are in the lines above`];
  }
  return failures.map((f) => {
    const file = f.file.startsWith(process.cwd()) ? f.file.slice(process.cwd().length + 1) : f.file;
    const message = plain(f.message).split('\n').filter((l) => l.trim() !== '' && !/^\s*at .*(node_modules|node:internal|<anonymous>)/.test(l)).slice(0, 12).join('\n      ');
    return `test-parallel: ${side.name} FAILED ${file} > ${f.test}\n      ${message.slice(0, 2000)}`;
  });
}

// Ctrl-C reaches both children through the process group; nothing to forward.
const results = await Promise.all(sides.map(run));
const secs = Math.round((Date.now() - started) / 1000);
for (const [i, r] of results.entries()) if (r.code !== 0) for (const line of summarise(sides[i])) console.log(line);
if (!kept) rmSync(reports, { recursive: true, force: true });
for (const r of results) console.log(`test-parallel: ${r.side} ${r.code === 0 ? 'passed' : `FAILED (exit ${r.code}${r.why ? `, ${r.why}` : ''})`}`);
console.log(`test-parallel: ${secs} s in all`);
process.exit(results.every((r) => r.code === 0) ? 0 : 1);
