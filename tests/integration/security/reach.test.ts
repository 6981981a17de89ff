import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { AuditPool } from '../../../core/audit/pool';
import type { AuditReport } from '../../../core/audit/report';
import type { CheckResult, EnvAudit } from '../../../core/audit/types';
import { NativeRuntime, probePython } from '../../../core/runtime/native';
import { probeOsSandbox } from '../../../core/runtime/osSandbox';
import { tempDir } from '../../helpers/tmp';
import { startApp } from '../../../core/host/startApp';
import { sha256 } from '../../../core/memory/parse';
import { ingest } from '../../../core/memory/repository';
import { ensureChildBuilt } from '../runtime/helpers';
import { cli, importPool, slurmArgs } from '../dispatch/pool';
import { ciRay, ciServices } from '../jobs/helpers';
import { reachOf, spyGame, VICTIM, type Reach } from './reach.fixtures';

/**
 * Issue 46: a game ran as the same uid, in the same namespaces, as the fork server (bubblewrap's
 * pid 2, dumpable, no seccomp filter) and bubblewrap's own pid 1, and read another environment's
 * audit request from the server's heap and its reports from the server's pipes. Every process in
 * the sandbox that is not the game must be out of its reach: memory, descriptors, signals, ptrace,
 * limits, scheduling. A spy game (reach.fixtures.ts) tries each, on every path that runs games.
 */
const sandboxed = probeOsSandbox().available && !!probePython();

const check = (a: EnvAudit, id: string): CheckResult => {
  const c = a.checks.find((x) => x.id === id);
  if (!c) throw new Error(`no ${id} in ${a.checks.map((x) => x.id).join(', ')}`);
  return c;
};

/** Nothing reached, no byte taken, and the spy did see other processes (the walls were tried). */
function outOfReach(r: Reach, atLeast: number): void {
  expect(r.reached).toEqual({});
  expect(r.stolen).toBe(0);
  // pid 1 is the fork server itself now (bubblewrap --as-pid-1): nothing of bubblewrap's is inside.
  expect(r.seen).toContain(1);
  expect(r.seen.length, JSON.stringify(r.seen)).toBeGreaterThanOrEqual(atLeast);
}

describe.runIf(sandboxed)('a game reaches no other process in its sandbox', () => {
  for (const hook of [false, true]) {
    const guard = hook ? '' : ', with the in-process guard off';
    test(`sessions (episodes): the fork server and another environment's open session${guard}`, async () => {
      const rt = new NativeRuntime({ timeoutMs: () => 5_000, ...(hook ? {} : { auditHook: false }) });
      try {
        const v = await rt.open('victim', { cmd: 'load', source: VICTIM });
        expect(v.ok, JSON.stringify(v)).toBe(true);
        const ping = await rt.call('victim', { cmd: 'ping' });
        const victimPid = ping.ok ? (ping.result as { pid: number }).pid : -1;
        const s = await rt.open('spy', { cmd: 'load', source: spyGame() });
        expect(s.ok, JSON.stringify(s)).toBe(true);
        const r = reachOf(JSON.stringify(await rt.call('spy', { cmd: 'reset', seed: 1 })));
        outOfReach(r, 2);
        expect(r.seen).toContain(victimPid);
        // The victim's session plays on, its process untouched.
        await rt.call('victim', { cmd: 'reset', seed: 1 });
        const step = await rt.call('victim', { cmd: 'step', action: '\\boxed{yes}' });
        expect(step.ok && (step.result as { reward: number }).reward, JSON.stringify(step)).toBe(1);
        if (hook) expect(rt.violations('victim').length).toBeGreaterThan(0);
        // The host still ends a session's process at its deadline (its walls did not get in the way).
        const slow = await rt.open('slow', { cmd: 'load', source: 'class SlowEnv:\n    def reset(self, seed=None):\n        while True:\n            pass\n    def step(self, a):\n        return "o", 0.0, True, False, {}\n' });
        expect(slow.ok).toBe(false);
      } finally {
        await rt.shutdown();
      }
    }, 120_000);
  }

  test('a pool audit with three workers: spies beside victims, with the guard off; the victims keep every report', async () => {
    const alone = new AuditPool({ workers: 1, envTimeoutSec: 60, auditHook: false });
    let expected: CheckResult;
    try {
      expected = check(await alone.audit(VICTIM, {}), 'sandbox');
    } finally {
      await alone.close();
    }
    expect(expected.status).toBe('pass'); // the guard is off: nothing is reported, nothing refused by it
    const pool = new AuditPool({ workers: 3, envTimeoutSec: 60, auditHook: false });
    try {
      const spy = spyGame({ waitSec: 0.2, drain: true });
      const runs = await Promise.all([VICTIM, spy, VICTIM, spy, VICTIM].map((src) => pool.audit(src, {})));
      for (const a of runs.filter((_, i) => i % 2 === 1)) outOfReach(reachOf(check(a, 'spade.reset').message), 3);
      for (const a of runs.filter((_, i) => i % 2 === 0)) expect(check(a, 'spade.reset').status, JSON.stringify(a.checks)).toBe('pass');
    } finally {
      await pool.close();
    }
    // With the guard on, the victims' attempts are their evidence: every one arrives.
    const guarded = new AuditPool({ workers: 3, envTimeoutSec: 60 });
    try {
      const first = check(await guarded.audit(VICTIM, {}), 'sandbox');
      expect(first.status).toBe('fail');
      const spy = spyGame({ waitSec: 0.2, drain: true });
      const runs = await Promise.all([VICTIM, spy, VICTIM, spy, VICTIM].map((src) => guarded.audit(src, {})));
      for (const a of runs.filter((_, i) => i % 2 === 1)) outOfReach(reachOf(check(a, 'spade.reset').message), 3);
      for (const a of runs.filter((_, i) => i % 2 === 0)) expect(check(a, 'sandbox')).toEqual(first);
    } finally {
      await guarded.close();
    }
  }, 240_000);

  test('through the CLI: a spy audited beside other games, two workers', async () => {
    const { main } = await import('../../../core/cli/main');
    const tmp = tempDir('spade-reach-cli-');
    try {
      writeFileSync(join(tmp.dir, 'a_victim.py'), VICTIM);
      writeFileSync(join(tmp.dir, 'b_spy.py'), spyGame({ waitSec: 0.1 }));
      writeFileSync(join(tmp.dir, 'c_victim.py'), VICTIM.replace('victim-source-marker', 'second-victim'));
      let out = '';
      const code = await main(['audit', tmp.dir, '--format', 'json', '--workers', '2'], { out: (t) => void (out += t), err: () => {} });
      expect([0, 1]).toContain(code);
      const envs = (JSON.parse(out) as { environments: { file: string; checks: CheckResult[] }[] }).environments;
      const spy = envs.find((e) => e.file.endsWith('b_spy.py'))!;
      outOfReach(reachOf(spy.checks.find((c) => c.id === 'spade.reset')!.message), 3);
      for (const e of envs.filter((x) => x.file.includes('victim'))) expect(e.checks.find((c) => c.id === 'sandbox')?.status, e.file).toBe('fail');
    } finally {
      tmp.cleanup();
    }
  }, 120_000);
});

describe.runIf(sandboxed)('through the web API (audit.run, as the app calls it)', () => {
  test('a numpy spy, audited natively beside a victim, reaches nothing', async () => {
    ensureChildBuilt();
    const data = tempDir('spade-reach-app-');
    const app = await startApp({ dataDir: data.dir, port: 0, engine: 'thread' });
    try {
      const spy = spyGame({ numpy: true, waitSec: 0.1 });
      const victim = `import numpy\n${VICTIM}`;
      [spy, victim].forEach((source, i) => ingest(app.services.db, { source, path: `/x/${i}.py`, fileStem: `g${i}` }));
      const run = async (source: string): Promise<{ checks: CheckResult[]; runtime?: string }> => {
        const res = await fetch(`http://127.0.0.1:${app.host.port}/api/call/audit.run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ hash: sha256(source) }) });
        const body = (await res.json()) as { value?: { checks: CheckResult[]; runtime?: string }; error?: unknown };
        expect(body.value, JSON.stringify(body.error)).toBeDefined();
        return body.value!;
      };
      const [s, v] = await Promise.all([run(spy), run(victim)]);
      outOfReach(reachOf(s.checks.find((c) => c.id === 'spade.reset')!.message), 3);
      expect(v.checks.find((c) => c.id === 'sandbox')?.status).toBe('fail');
    } finally {
      await app.close();
      data.cleanup();
    }
  }, 120_000);
});

// The same spy on the cluster paths: shard_audit.py starts the fork server on a Ray worker or a
// Slurm node the way osSandbox.ts does here, and must give it the same walls.
const ray = ciRay();
const ci = ciServices();
if (sandboxed && (!ray || !ci?.slurm)) console.warn('[reach: Ray or Slurm part skipped] no Ray head or Slurm: `.ci/services.sh start` (CI does)');
describe.runIf(sandboxed && (!!ray || !!ci?.slurm))('on the Ray head and through Slurm (.ci/services.sh)', () => {
  async function onCluster(args: string[]): Promise<void> {
    const tmp = tempDir('spade-reach-cluster-');
    try {
      const dir = join(tmp.dir, 'games');
      mkdirSync(dir);
      const spy = join(dir, 'spy_game.py');
      const victim = join(dir, 'victim_game.py');
      writeFileSync(spy, spyGame());
      writeFileSync(victim, VICTIM);
      await importPool(tmp.dir, [spy, victim]);
      const r = await cli(['audit', '--pool', '', ...args, '--shard-size', '2', '--data-dir', tmp.dir, '--json']);
      expect(r.code, r.err).toBe(0);
      const envs = (JSON.parse(r.out) as AuditReport).environments;
      const s = envs.find((e) => e.name === 'SpyEnv');
      expect(s, JSON.stringify(envs.map((e) => e.name))).toBeDefined();
      outOfReach(reachOf(s!.checks.find((c) => c.id === 'spade.reset')!.message), 2);
      expect(envs.find((e) => e.name === 'VictimEnv')?.checks.find((c) => c.id === 'sandbox')?.status).toBe('fail');
    } finally {
      tmp.cleanup();
    }
  }

  test.runIf(!!ray)('Ray: a shard as a Ray task', async () => {
    await onCluster(['--on', `ray://${new URL(ray!.address).host}`, '--ray-python', join(ray!.bin, 'python')]);
  }, 180_000);

  test.runIf(!!ci?.slurm)('Slurm: a shard as an array task', async () => {
    await onCluster(slurmArgs(ci!));
  }, 180_000);
});
