import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { main } from '../../../core/cli/main';
import { startApp } from '../../../core/host/startApp';
import { ingest } from '../../../core/memory/repository';
import { sha256 } from '../../../core/memory/parse';
import { AuditPool } from '../../../core/audit/pool';
import { PyodideAuditRunner } from '../../../core/audit/pyodideRunner';
import type { CheckResult, EnvAudit } from '../../../core/audit/types';
import { PyodidePool } from '../../../core/runtime/pyodidePool';
import { probePython } from '../../../core/runtime/native';
import { probeOsSandbox } from '../../../core/runtime/osSandbox';
import { tempDir } from '../../helpers/tmp';
import { ensureChildBuilt } from '../runtime/helpers';

/**
 * Audit self-forging (issue 12): a broken game that patches the audit's own code (the checks'
 * `Audit.put`, SPADE's return-shape rules, the harness reached through a base class's globals)
 * must get exactly the failing checks of the same game without the forgery, plus the `sandbox`
 * check for reaching at the workbench's modules. The checks run in another interpreter than the
 * game (native/audit_checks.py), so there is nothing in the game's reach to patch.
 */
const sandboxed = probeOsSandbox().available && !!probePython();

// Fails reset-leak (class-level list), crash-on-action (an empty answer raises) and solution
// (solution() answers one too high); SPADE's own checks pass.
const BROKEN = String.raw`import random
class BrokenEnv:
    history = []
    def __init__(self):
        self.max_turns = 6
    def reset(self, seed=None):
        random.seed(seed)
        self.t = 0
        self.secret = random.randint(1, 9)
        BrokenEnv.history.append(seed)
        return "Guess a digit as \\boxed{d}", {}
    def step(self, action):
        self.t += 1
        if "{}" in action:
            raise ValueError("no answer")
        won = action.strip() == "\\boxed{%d}" % self.secret
        return ("right" if won else "wrong"), (1.0 if won else 0.0), won, self.t >= self.max_turns, {}
    def solution(self):
        return self.secret + 1
`;

const FORGERY = String.raw`def _forge():
    import sys
    def passed(self, cid, status, message, **ev):
        self.results[cid] = {"id": cid, "status": "pass", "message": "forged", "evidence": {}}
    # The judge's and the harness's modules, by every name they have had (issue 35 split them).
    for name in ("audit_checks", "harness", "audit_exec", "judge_context", "judge_play", "harness_loader", "harness_episode", "exec_ahead", "host_session"):
        m = sys.modules.get(name)
        if m is None:
            try:
                m = __import__(name)
            except BaseException:
                m = None
        if m is None:
            continue
        if hasattr(m, "Audit"):
            m.Audit.put = passed
        for fn in ("step_problem", "reset_problem"):
            if hasattr(m, fn):
                setattr(m, fn, lambda r: None)
    try:
        g = ToolUseBaseEnv.reset.__globals__
        g["step_problem"] = g["reset_problem"] = lambda r: None
        g["error_info"] = lambda e, *a, **k: {"kind": "env_error", "type": "Nothing", "message": ""}
    except BaseException:
        pass
try:
    _forge()
except BaseException:
    pass
`;
const FORGED = `${FORGERY}\n${BROKEN}`;

const statuses = (a: { checks: readonly Pick<CheckResult, 'id' | 'status'>[] }, skip: string[] = ['sandbox', 'timing']): Record<string, string> =>
  Object.fromEntries(a.checks.filter((c) => !skip.includes(c.id)).map((c) => [c.id, c.status]));
const failing = (a: { checks: readonly Pick<CheckResult, 'id' | 'status'>[] }): string[] => a.checks.filter((c) => c.status === 'fail').map((c) => c.id).sort();

function expectSameVerdict(clean: EnvAudit | { checks: CheckResult[] }, forged: EnvAudit | { checks: CheckResult[] }): void {
  expect(failing(clean)).toEqual(expect.arrayContaining(['crash-on-action', 'reset-leak', 'solution']));
  expect(failing(clean), JSON.stringify(clean.checks.find((c) => c.id === 'sandbox'))).not.toContain('sandbox');
  // Every check says what it says of the honest game; the forgery adds only the sandbox failure.
  expect(statuses(forged)).toEqual(statuses(clean));
  expect(failing(forged)).toEqual([...failing(clean), 'sandbox'].sort());
  expect(JSON.stringify(forged.checks)).not.toContain('forged');
  const attempts = JSON.stringify(forged.checks.find((c) => c.id === 'sandbox')?.evidence ?? {});
  expect(attempts).toMatch(/audit_checks|harness|audit_exec|judge_|exec_|host_/);
}

describe.runIf(sandboxed)('a game that forges its audit', () => {
  test('native CPython (bubblewrap): the judge is another process', async () => {
    const pool = new AuditPool({ workers: 2, envTimeoutSec: 60 });
    try {
      const [clean, forged] = await Promise.all([pool.audit(BROKEN, {}), pool.audit(FORGED, {})]);
      expectSameVerdict(clean, forged);
    } finally {
      await pool.close();
    }
  });

  test('native CPython: one judge serves audit after audit, and no game reaches it', async () => {
    // A game that lists every descriptor it holds (through reset's error, which the audit shows).
    const LISTS_FDS = String.raw`import os, stat
class FdEnv:
    def reset(self, seed=None):
        held = []
        for fd in range(3, 1024):
            try:
                held.append((fd, stat.S_IFMT(os.fstat(fd).st_mode)))
            except OSError:
                pass
        raise ValueError("descriptors %r" % (held,))
    def step(self, action):
        return "o", 0.0, True, False, {}
`;
    // Writes a judge's control words and a forged verdict into every descriptor it holds.
    const WRITES_FDS = String.raw`import os
for _fd in range(3, 1024):
    for _line in (b"D\n", b"F\n", b'{"id": 1, "ok": true, "result": {"className": "X", "toolUse": false, "checks": []}}\n'):
        try:
            os.write(_fd, _line)
        except BaseException:
            pass
${BROKEN}`;
    const pool = new AuditPool({ workers: 1, envTimeoutSec: 60 });
    try {
      const first = await pool.audit(BROKEN, {});
      await pool.audit(FORGED, {});
      await pool.audit(WRITES_FDS, {});
      const fds = await pool.audit(LISTS_FDS, { checks: ['spade.*'] });
      // The game's process holds its own channel to the judge and nothing else: no server pipe,
      // no judge's control socket, no other session's socket.
      const reset = fds.checks.find((c) => c.id === 'spade.reset');
      expect(reset?.status).toBe('fail');
      expect(JSON.stringify(reset)).toMatch(/descriptors \[\(\d+, 49152\)\]/);
      // After a forger and a writer on the same judge, the honest game's audit is the first one's.
      const again = await pool.audit(BROKEN, {});
      expect(statuses(again)).toEqual(statuses(first));
      const messages = (a: EnvAudit): string[] => a.checks.filter((c) => c.id !== 'timing').map((c) => c.message);
      expect(messages(again)).toEqual(messages(first));
    } finally {
      await pool.close();
    }
  });

  test('Pyodide: the judge is another interpreter', async () => {
    ensureChildBuilt();
    const sandbox = new PyodidePool({ size: 1 });
    try {
      const runner = new PyodideAuditRunner(() => sandbox, 120_000);
      const clean = await runner.audit(BROKEN, {});
      const forged = await runner.audit(FORGED, {});
      expectSameVerdict(clean, forged);
      // and the worker that audited the forger gives the honest game the same audit again
      expect(statuses(await runner.audit(BROKEN, {}))).toEqual(statuses(clean));
    } finally {
      await sandbox.shutdown();
    }
  });

  const tmp = tempDir();
  afterAll(() => tmp.cleanup());

  test('through the CLI, in both runtimes', async () => {
    const dir = join(tmp.dir, 'pool');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'a_clean.py'), BROKEN);
    writeFileSync(join(dir, 'b_forged.py'), FORGED);
    for (const runtime of ['cpython', 'pyodide']) {
      let out = '';
      const code = await main(['audit', dir, '--format', 'json', '--runtime', runtime], { out: (t) => void (out += t), err: () => {} });
      expect(code, out).toBe(0); // no --fail-on: the report is the answer
      const envs = (JSON.parse(out) as { environments: { file: string; checks: CheckResult[] }[] }).environments;
      const clean = envs.find((e) => e.file.endsWith('a_clean.py'))!;
      const forged = envs.find((e) => e.file.endsWith('b_forged.py'))!;
      expectSameVerdict(clean, forged);
    }
  });

  test('through the web API (audit.run, as the app calls it)', async () => {
    ensureChildBuilt();
    const data = tempDir();
    const app = await startApp({ dataDir: data.dir, port: 0, engine: 'thread' });
    try {
      const hashes = [BROKEN, FORGED].map((source, i) => {
        ingest(app.services.db, { source, path: `/x/${i}.py`, fileStem: `g${i}` });
        return sha256(source);
      });
      const run = async (hash: string): Promise<{ checks: CheckResult[] }> => {
        const res = await fetch(`http://127.0.0.1:${app.host.port}/api/call/audit.run`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ hash }) });
        const body = (await res.json()) as { value?: { checks: CheckResult[] }; error?: unknown };
        expect(body.value, JSON.stringify(body.error)).toBeDefined();
        return body.value!;
      };
      const clean = await run(hashes[0]!);
      const forged = await run(hashes[1]!);
      expectSameVerdict(clean, forged);
    } finally {
      await app.close();
      data.cleanup();
    }
  });
});
