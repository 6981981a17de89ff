import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditPool } from '../../../core/audit/pool';
import { descendants, forkServer, type Proc } from '../../helpers/processes';

// Real CPython fork servers (inside bubblewrap where it runs). The next audit's executor is forked
// while nothing else waits (by the audit zygote, or by the server itself with the zygote off) and
// killed ones are reaped when idle; this test watches the processes from the host.

/** The processes forked by this test's fork server, at any depth (its judges, the zygote, executors and the spare). */
function serverChildren(): Proc[] {
  const all = descendants();
  const server = forkServer(all);
  const byPid = new Map(all.map((p) => [p.pid, p]));
  const under = (p: Proc): boolean => {
    for (let q = byPid.get(p.ppid); q; q = byPid.get(q.ppid)) if (q.pid === server.pid) return true;
    return false;
  };
  return all.filter(under);
}

const settle = (ms = 400) => new Promise((r) => setTimeout(r, ms));
const game = readFileSync(join(__dirname, 'fixtures', 'spade', '00_accepted.py'), 'utf8');

for (const zygote of [true, false]) describe(`the executor made ahead${zygote ? ' (by the audit zygote)' : ' (by the fork server)'}`, () => {
  let pool: AuditPool;
  beforeAll(() => {
    pool = new AuditPool({ workers: 1, envTimeoutSec: 30, ...(zygote ? {} : { auditZygote: false }) });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('serves the next audit, is replaced by a new one, and no killed executor is left unreaped', async () => {
    const first = await pool.audit(game, {});
    expect(first.checks.filter((c) => c.status === 'fail')).toEqual([]);
    await settle();
    const before = serverChildren();
    expect(before.filter((p) => p.state === 'Z')).toEqual([]);

    const second = await pool.audit(`${game}\n_SECOND = 2\n`, {});
    expect(second.checks.filter((c) => c.status === 'fail')).toEqual([]);
    await settle();
    const after = serverChildren();
    const gone = before.filter((p) => !after.some((q) => q.pid === p.pid));
    const born = after.filter((p) => !before.some((q) => q.pid === p.pid));
    // The spare waiting after the first audit ran the second game and was killed with it; a new
    // spare waits now. Judges (and the zygote) live on.
    expect(gone).toHaveLength(1);
    expect(born).toHaveLength(1);
    expect(after.filter((p) => p.state === 'Z')).toEqual([]);

    // Ten more, back to back: killed executors are reaped, never piled up.
    await Promise.all(Array.from({ length: 10 }, (_, i) => pool.audit(`${game}\n_MORE = ${i}\n`, { checks: ['spade.*'] })));
    await settle();
    const later = serverChildren();
    expect(later.filter((p) => p.state === 'Z')).toEqual([]);
    expect(later.length).toBeLessThanOrEqual(after.length + 1);
  });
});
