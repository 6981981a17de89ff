import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { AuditPool } from '../../../core/audit/pool';
import type { CheckResult, EnvAudit } from '../../../core/audit/types';
import { probePython } from '../../../core/runtime/native';
import { probeOsSandbox } from '../../../core/runtime/osSandbox';
import { poolFiles } from '../dispatch/pool';
import { descendants, forkServer, type Proc } from '../../helpers/processes';

/**
 * Real CPython fork servers inside bubblewrap. An audit's executor comes from the audit zygote
 * (native/host_zygote.py), a process beside the server that, unlike every session's process, may
 * fork and make socket pairs. An executor it forks must hold every wall one forked by the server
 * holds, reach nothing of the zygote's, and give the same verdicts.
 */
const sandboxed = probeOsSandbox().available && !!probePython();

// What an executor tries with the in-process guard off, so that only the OS walls answer. Each
// outcome is "refused" (EPERM/EACCES), "done" (the wall is missing) or an error's name; the game
// reports them through the one channel an audit has for game text: reset()'s exception message.
const PROBE = `import json, os, socket

def attempt(f):
    try:
        f()
        return "done"
    except PermissionError:
        return "refused"
    except Exception as e:
        return type(e).__name__

def fork():
    if os.fork() == 0:
        os._exit(0)

class ProbeEnv:
    def reset(self, seed=None):
        zygote = os.getppid()
        r = {
            "fork": attempt(fork),
            "signal the zygote": attempt(lambda: os.kill(zygote, 0)),
            "socketpair": attempt(socket.socketpair),
            "read the zygote's memory": attempt(lambda: open("/proc/%d/mem" % zygote, "rb").close()),
            "open descriptors": len(os.listdir("/proc/self/fd")),
        }
        raise RuntimeError("probe " + json.dumps(r, sort_keys=True))

    def step(self, action):
        return "o", 0.0, True, False, {}
`;

// A game every check passes (the audit fixtures' SPADE-accepted one).
const CLEAN = readFileSync(join(__dirname, '..', 'audit', 'fixtures', 'spade', '00_accepted.py'), 'utf8');

const check = (a: EnvAudit, id: string): CheckResult => {
  const c = a.checks.find((x) => x.id === id);
  if (!c) throw new Error(`no ${id} in ${a.checks.map((x) => x.id).join(', ')}`);
  return c;
};

function probed(a: EnvAudit): Record<string, unknown> {
  const m = /probe (\{.*\})/.exec(check(a, 'spade.reset').message);
  if (!m) throw new Error(`no probe report in ${JSON.stringify(check(a, 'spade.reset'))}`);
  return JSON.parse(m[1]!) as Record<string, unknown>;
}

/** This process's fork server's children that have children of their own: its audit zygotes. */
function zygotes(): Proc[] {
  const all = descendants();
  const server = forkServer(all);
  return all.filter((p) => p.ppid === server.pid && all.some((c) => c.ppid === p.pid));
}

describe.runIf(sandboxed)('executors forked by the audit zygote', () => {
  for (const hook of [false, true]) {
    test(`hold the walls of a session's process${hook ? '' : ', with the in-process guard off'}, and reach nothing of the zygote's`, async () => {
      const pool = new AuditPool({ workers: 1, envTimeoutSec: 30, ...(hook ? {} : { auditHook: false }) });
      try {
        const fresh = await pool.audit(CLEAN, {});
        expect(fresh.checks.filter((c) => c.status === 'fail')).toEqual([]);
        const a = await pool.audit(PROBE, { checks: ['spade.*', 'sandbox'] });
        if (hook) {
          // The guard refuses first (importing socket, reported); the OS walls are behind it.
          expect(check(a, 'sandbox').status).toBe('fail');
          expect(check(a, 'spade.exec').status).toBe('fail');
        } else {
          expect(probed(a)).toEqual({
            fork: 'refused',
            'signal the zygote': 'refused',
            socketpair: 'refused',
            "read the zygote's memory": 'refused',
            // stdin, stdout, its stderr pipe, its socket to the judge, and the listing's own
            'open descriptors': 5,
          });
        }
        // The zygote forked on: the next audit is the first one's twin.
        const again = await pool.audit(CLEAN, {});
        expect(again.checks).toEqual(fresh.checks.map((c) => (c.id === 'timing' ? again.checks.find((x) => x.id === 'timing') : c)));
      } finally {
        await pool.close();
      }
    });
  }

  test('the same verdicts and evidence as executors forked by the server, over the pool of the dispatch tests', async () => {
    const items = poolFiles().map((f) => ({ source: readFileSync(f, 'utf8'), hint: existsSync(f.replace(/\.py$/, '_hint.txt')) ? readFileSync(f.replace(/\.py$/, '_hint.txt'), 'utf8') : null }));
    // 62 files: the 60 environments of the dispatch tests and two SPADE loads nothing from.
    expect(items).toHaveLength(62);
    const run = async (auditZygote: boolean) => {
      const pool = new AuditPool({ workers: 2, envTimeoutSec: 60, ...(auditZygote ? {} : { auditZygote: false }) });
      try {
        const all = await Promise.all(items.map((it) => pool.audit(it.source, { hint: it.hint })));
        // `timing` measures wall time, which moves with the machine's load; all else must agree.
        return all.map((a) => ({ className: a.className, toolUse: a.toolUse, checks: a.checks.filter((c) => c.id !== 'timing') }));
      } finally {
        await pool.close();
      }
    };
    const byZygote = await run(true);
    const byServer = await run(false);
    expect(byZygote).toEqual(byServer);
    expect(byZygote.filter((a) => a.checks.every((c) => c.status !== 'fail')).length).toBeGreaterThan(20);
  }, 120_000);

  test('a zygote killed from outside is replaced; audits go on and nothing is left unreaped', async () => {
    const pool = new AuditPool({ workers: 1, envTimeoutSec: 30 });
    try {
      const first = await pool.audit(CLEAN, {});
      const [z] = zygotes();
      expect(z).toBeDefined();
      process.kill(z!.pid, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 200));
      for (let i = 0; i < 3; i++) {
        // The same source each time: a module global more is one more attribute compared.
        const a = await pool.audit(CLEAN, {});
        expect(a.checks.filter((c) => c.id !== 'timing')).toEqual(first.checks.filter((c) => c.id !== 'timing'));
      }
      await new Promise((r) => setTimeout(r, 400));
      const now = zygotes();
      expect(now).toHaveLength(1);
      expect(now[0]!.pid).not.toBe(z!.pid);
      expect(descendants().filter((p) => p.state === 'Z')).toEqual([]);
    } finally {
      await pool.close();
    }
  });
});
