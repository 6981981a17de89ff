import { describe, expect, it } from 'vitest';
import { CallSupervisor, TICK_MS, type Call } from '../../core/runtime/supervisor';
import type { HarnessReply } from '../../core/runtime/types';

/** The supervisor's own logic, with a transport that records what it would write (no process). */
function harness(opts: { ready?: boolean; graceMs?: number } = {}) {
  const sent: Call[] = [];
  const events: string[] = [];
  const sup = new CallSupervisor(
    {
      send: (c) => sent.push(c),
      kill: () => events.push('kill'),
      onDeath: (reason) => events.push(`death:${reason}`),
      onTick: () => events.push('tick'),
    },
    { graceMs: opts.graceMs ?? 0, ...(opts.ready === false ? { ready: false } : {}), texts: { failure: 'Test failure', aftermath: 'replaced', gone: 'gone', closed: 'closed' } },
  );
  const answer = (result: unknown, id?: number): void => sup.settle({ id: id ?? null, ok: true, result }, id);
  const cmdOf = (c: Call): string => (JSON.parse(c.line) as { cmd: string; action?: string }).action ?? (JSON.parse(c.line) as { cmd: string }).cmd;
  return { sup, sent, events, answer, cmdOf };
}

describe('the interpreter supervisor', () => {
  it('sends one call at a time, in order, with its id and limit on the wire', async () => {
    const { sup, sent, answer } = harness();
    const a = sup.request({ cmd: 'step', action: 'a', session: 's' }, 1000);
    const b = sup.request({ cmd: 'step', action: 'b', session: 's' }, 2000);
    expect(sent).toHaveLength(1);
    expect(JSON.parse(sent[0]!.line)).toEqual({ cmd: 'step', action: 'a', session: 's', id: 1, timeoutSec: 1 });
    answer('A', 1);
    expect(sent).toHaveLength(2);
    expect(sent[1]!.timeoutMs).toBe(2000);
    answer('B', 2);
    expect(((await a) as { result: unknown }).result).toBe('A');
    expect(((await b) as { result: unknown }).result).toBe('B');
    expect(sup.busy).toBe(false);
  });

  it('ignores a reply whose id is not the call in flight', async () => {
    const { sup, answer } = harness();
    const a = sup.request({ cmd: 'ping' }, 1000);
    answer('stale', 7);
    expect(sup.busy).toBe(true);
    answer('pong', 1);
    expect(((await a) as { result: unknown }).result).toBe('pong');
  });

  it('holds calls until the process is ready', () => {
    const { sup, sent } = harness({ ready: false });
    void sup.request({ cmd: 'ping' }, 1000);
    expect(sent).toHaveLength(0);
    expect(sup.state).toBe('starting');
    sup.ready();
    expect(sent).toHaveLength(1);
  });

  it('puts background work behind the foreground, keeps a session in order behind its own, and promotes it', () => {
    const { sup, sent, answer, cmdOf } = harness();
    void sup.request({ cmd: 'ping' }, 1000); // in flight
    void sup.request({ cmd: 'load', source: 'x', session: 'later' }, 1000, { priority: 'background' });
    void sup.request({ cmd: 'step', action: 'later-step', session: 'later' }, 1000);
    void sup.request({ cmd: 'step', action: 'now', session: 'now' }, 1000);
    answer(null, 1);
    expect(cmdOf(sent[1]!)).toBe('now');
    sup.promote('later');
    answer(null, sent[1]!.id);
    expect(cmdOf(sent[2]!)).toBe('load');
    answer(null, sent[2]!.id);
    expect(cmdOf(sent[3]!)).toBe('later-step');
  });

  it('never lets a request that restores the pristine interpreter wait behind background work', () => {
    const { sup, sent, answer, cmdOf } = harness();
    void sup.request({ cmd: 'ping' }, 1000);
    void sup.request({ cmd: 'load', source: 'x', session: 'bg' }, 1000, { priority: 'background' });
    void sup.request({ cmd: 'load', source: 'y', session: 'bg' }, 1000, { fresh: 'math' });
    answer(null, 1);
    expect(cmdOf(sent[1]!)).toBe('load');
    expect(sent[1]!.fresh).toBe('math');
  });

  it('kills a call that runs past its limit and says which check it was in; what was queued never ran', async () => {
    const { sup, events } = harness();
    const hung = sup.request({ cmd: 'audit', source: 'x', options: {} }, 20);
    const queued = sup.request({ cmd: 'ping' }, 20);
    sup.notePhase('determinism');
    const r = (await hung) as Extract<HarnessReply, { ok: false }>;
    expect(r.ok).toBe(false);
    expect(r.error.kind).toBe('timeout');
    expect(r.error.phase).toBe('determinism');
    expect(r.error.message).toMatch(/^Time limit: the call ran past 20 ms.*; replaced$/);
    const q = (await queued) as Extract<HarnessReply, { ok: false }>;
    expect(q.error.notStarted).toBe(true);
    expect(events).toContain('kill');
    expect(events.some((e) => e.startsWith('death:'))).toBe(true);
    expect(sup.state).toBe('dead');
    const after = (await sup.request({ cmd: 'ping' }, 20)) as Extract<HarnessReply, { ok: false }>;
    expect(after.error.message).toBe('gone');
  });

  it('gives a call its grace before killing, and checks the process while it runs', async () => {
    const { sup, events, answer } = harness({ graceMs: 10 * TICK_MS });
    const slow = sup.request({ cmd: 'ping' }, 1);
    await new Promise((r) => setTimeout(r, 2 * TICK_MS + 50));
    expect(sup.state).toBe('ready');
    expect(events.filter((e) => e === 'tick').length).toBeGreaterThan(0);
    answer('late but in grace', 1);
    expect(((await slow) as { ok: boolean }).ok).toBe(true);
  });

  it('hands back what the sandbox refused during a call, and only that call', async () => {
    const { sup, answer } = harness();
    const a = sup.request({ cmd: 'step', action: 'x', session: 's' }, 1000);
    const b = sup.request({ cmd: 'step', action: 'y', session: 's' }, 1000);
    sup.noteViolation({ event: 'open', detail: '/etc/passwd' });
    answer(null, 1);
    answer(null, 2);
    expect((await a) as unknown).toMatchObject({ violations: [{ event: 'open', detail: '/etc/passwd' }] });
    expect('violations' in ((await b) as object)).toBe(false);
  });

  it('answers everything as closed when closed, once, and kills the process', async () => {
    const { sup, events } = harness();
    const a = sup.request({ cmd: 'ping' }, 1000);
    const b = sup.request({ cmd: 'ping' }, 1000, { priority: 'background' });
    sup.close();
    sup.close();
    for (const r of [await a, await b]) expect(r).toMatchObject({ ok: false, error: { kind: 'closed', message: 'closed' } });
    expect(events).toEqual(['kill']);
  });
});
