import { describe, expect, it } from 'vitest';
import { parseEvent } from '../../core/api';
import { serverFrameSchema } from '../../core/api/wire';
import { EventBus } from '../../core/server/events';

describe('events are checked like calls', () => {
  it('the engine does not emit a payload outside its schema, and says so', () => {
    const problems: string[] = [];
    const bus = new EventBus((p) => problems.push(p));
    const got: unknown[] = [];
    bus.subscribe((name, payload) => got.push([name, payload]));
    bus.emit('memory.changed', { reason: 'tag', ids: [1, 2] });
    bus.emit('memory.changed', { reason: 7 } as never);
    expect(got).toEqual([['memory.changed', { reason: 'tag', ids: [1, 2] }]]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('memory.changed: reason');
  });

  it('a client drops unknown events and payloads outside the schema', () => {
    expect(parseEvent('memory.changed', { reason: 'x' })).toEqual({ ok: true, payload: { reason: 'x' } });
    expect(parseEvent('memory.changed', { reason: 1 }).ok).toBe(false);
    expect(parseEvent('no.such', {}).ok).toBe(false);
    expect(parseEvent('__proto__', {}).ok).toBe(false);
  });

  it('parses every server frame shape (the discriminated union refused two result shapes)', () => {
    expect(serverFrameSchema.parse({ t: 'result', id: 1, ok: false, error: { code: 'internal', message: 'm' } })).toMatchObject({ ok: false });
    expect(serverFrameSchema.parse({ t: 'result', id: 1, ok: true, value: 3 })).toMatchObject({ ok: true, value: 3 });
    expect(serverFrameSchema.parse({ t: 'event', name: 'x', payload: {} })).toMatchObject({ t: 'event' });
    expect(serverFrameSchema.safeParse({ t: 'result', id: 1, ok: false, error: { code: 'nope', message: 'm' } }).success).toBe(false);
  });
});
