import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, calls, errorMessage } from '../../core/api';
import { DomainError, isUnreachable } from '../../core/errors';
import { createDispatcher } from '../../core/server/dispatcher';
import { createHandlers } from '../../core/handlers';
import { EnvLoadError } from '../../core/episodes/session';
import { Services } from '../../core/services/services';
import { validateExternalUrl } from '../../core/handlers/app';
import { tempDir } from '../helpers/tmp';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function setup() {
  const tmp = tempDir();
  const services = new Services({ dataDir: tmp.dir, shell: 'in-process' });
  cleanups.push(async () => {
    await services.close();
    tmp.cleanup();
  });
  return { services, dispatch: createDispatcher(createHandlers(services)) };
}

async function errorOf(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected an ApiError');
}

describe('dispatcher', () => {
  it('rejects unknown calls and prototype names with a typed error', async () => {
    const { dispatch } = setup();
    expect((await errorOf(dispatch('no.such', {}, { transport: 'in-process' }))).code).toBe('unknown_call');
    expect((await errorOf(dispatch('__proto__', {}, { transport: 'in-process' }))).code).toBe('unknown_call');
    expect((await errorOf(dispatch('toString', {}, { transport: 'in-process' }))).code).toBe('unknown_call');
  });

  it('validates input with the schema and names the offending field', async () => {
    const { dispatch } = setup();
    const err = await errorOf(dispatch('settings.update', { stepTimeoutSec: -3 }, { transport: 'in-process' }));
    expect(err.code).toBe('invalid_input');
    expect((err.details as { issues: { path: string }[] }).issues[0]!.path).toBe('stepTimeoutSec');
    const extra = await errorOf(dispatch('app.info', { sneaky: true }, { transport: 'in-process' }));
    expect(extra.code).toBe('invalid_input');
  });

  // Issue 31: what a person reads is a sentence naming the field in words, never zod's own text.
  it('says what is wrong with an input in a sentence, on every rule a form can break', async () => {
    const { dispatch } = setup();
    const said = async (name: string, input: unknown) => (await errorOf(dispatch(name, input, { transport: 'in-process' }))).message;
    expect(await said('memory.search', { query: 'x'.repeat(501) })).toBe('Search is limited to 500 characters.');
    expect(await said('settings.update', { stepTimeoutSec: -3 })).toBe('The step time limit (seconds) must be at least 1.');
    expect(await said('settings.update', { maxTurns: 2.5 })).toBe('The turn limit must be a whole number.');
    expect(await said('memory.export', { selection: { seeds: true }, format: 'spade' })).toBe('The export folder is required.');
    expect(await said('memory.export', { selection: { seeds: true }, format: 'zip', outDir: '/tmp/x' })).toBe('The format must be one of "spade", "jsonl".');
    expect(await said('memory.import', { paths: [] })).toBe('Each path: give at least one.');
    expect(await said('app.info', { sneaky: true })).toBe('Unknown field: sneaky.');
    expect(await said('runtime.open', { source: 'x', versionHash: 'a'.repeat(64) })).toBe('Give exactly one of a source or a stored version.');
    for (const [name, input] of [
      ['memory.search', { query: 'x'.repeat(501) }],
      ['settings.update', { theme: 'purple' }],
      ['memory.import', { paths: ['a'], followLinks: 'yes' }],
      ['memory.import', {}],
      ['jobs.setSecret', { name: '1bad', value: 'v' }],
    ] as const) {
      const m = await said(name, input);
      // No zod wording ("Too big: expected string to have <=500 characters", "Invalid input: expected ...").
      expect(m, name).not.toMatch(/expected|Too (big|small)|Invalid (input|option)|<=|>=/);
      expect(m, name).toMatch(/^[A-Z].*[.)]$/);
    }
  });

  // zod's reportInput put every parse on a slower path (load.ws_cpu_us_per_call rose ~10%,
  // bench/notes/bench-issue35.md); it is needed only to word a refused input, so only that pays for it.
  it('parses an accepted input once and plainly, and a refused one again to say what is missing', async () => {
    const { dispatch } = setup();
    const search = vi.spyOn(calls['memory.search'].input, 'safeParse');
    const exporting = vi.spyOn(calls['memory.export'].input, 'safeParse');
    cleanups.push(() => {
      search.mockRestore();
      exporting.mockRestore();
    });
    await dispatch('memory.search', { query: 'grid' }, { transport: 'in-process' });
    expect(search.mock.calls.map((c) => c[1])).toEqual([undefined]);
    const missing = await errorOf(dispatch('memory.export', { selection: { seeds: true }, format: 'spade' }, { transport: 'in-process' }));
    expect(missing.message).toBe('The export folder is required.');
    expect(exporting.mock.calls.map((c) => c[1])).toEqual([undefined, { reportInput: true }]);
  });

  it('persists settings in SQLite across a restart', async () => {
    const tmp = tempDir();
    const a = new Services({ dataDir: tmp.dir, shell: 'in-process' });
    await createDispatcher(createHandlers(a))('settings.update', { theme: 'dark', maxTurns: 30 }, { transport: 'in-process' });
    await a.close();
    const b = new Services({ dataDir: tmp.dir, shell: 'in-process' });
    const s = (await createDispatcher(createHandlers(b))('settings.get', {}, { transport: 'in-process' })) as { theme: string; maxTurns: number };
    expect(s.theme).toBe('dark');
    expect(s.maxTurns).toBe(30);
    await b.close();
    tmp.cleanup();
  });

  it('turns a handler crash into an internal error instead of crashing the host', async () => {
    const { services } = setup();
    const handlers = createHandlers(services);
    const broken = { ...handlers, 'app.info': () => { throw new Error('boom'); } } as typeof handlers;
    const err = await errorOf(createDispatcher(broken)('app.info', {}, { transport: 'in-process' }));
    expect(err.code).toBe('internal');
    expect(err.message).toContain('boom');
  });

  it('refuses a handler result outside the output schema', async () => {
    const { services } = setup();
    const handlers = createHandlers(services);
    const wrong = { ...handlers, 'settings.get': () => ({ theme: 'purple' }) } as unknown as typeof handlers;
    const err = await errorOf(createDispatcher(wrong)('settings.get', {}, { transport: 'in-process' }));
    expect(err.code).toBe('internal');
  });

  it('only lets plain web links out', () => {
    expect(validateExternalUrl('https://arxiv.org/abs/2608.19197').hostname).toBe('arxiv.org');
    for (const bad of ['file:///etc/passwd', 'javascript:alert(1)', 'spade://x', 'https://user:pw@example.com/', 'not a url']) {
      expect(() => validateExternalUrl(bad)).toThrow(DomainError);
    }
  });

  it('maps a domain error to its own code once, details included', async () => {
    const { services } = setup();
    const handlers = createHandlers(services);
    const logged: string[] = [];
    const conflicted = { ...handlers, 'app.info': () => { throw new DomainError('conflict', 'already there', { envId: 7 }); } } as typeof handlers;
    const err = await errorOf(createDispatcher(conflicted, (m) => logged.push(m))('app.info', {}, { transport: 'in-process' }));
    expect(err.toJSON()).toEqual({ code: 'conflict', message: 'already there', details: { envId: 7 } });
    expect(logged).toEqual([]); // a domain error is an answer, not a bug
  });

  it("sends an episode's load failure as the same invalid_input with the harness error in details", async () => {
    const { services } = setup();
    const handlers = createHandlers(services);
    const harness = { kind: 'load_error' as const, type: 'SyntaxError', message: 'bad', line: 2 };
    const failing = { ...handlers, 'app.info': () => { throw new EnvLoadError('The environment did not load: bad', harness); } } as typeof handlers;
    const err = await errorOf(createDispatcher(failing)('app.info', {}, { transport: 'in-process' }));
    expect(err.toJSON()).toEqual({ code: 'invalid_input', message: 'The environment did not load: bad', details: { harness } });
  });

  it('logs an unexpected error with its stack and shows it as internal', async () => {
    const { services } = setup();
    const handlers = createHandlers(services);
    const logged: string[] = [];
    const broken = { ...handlers, 'app.info': () => { throw new TypeError('cannot read x of undefined'); } } as typeof handlers;
    const err = await errorOf(createDispatcher(broken, (m) => logged.push(m))('app.info', {}, { transport: 'in-process' }));
    expect(err.code).toBe('internal');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('TypeError: cannot read x of undefined');
    expect(logged[0]).toMatch(/\n\s+at /); // the stack, not just the message
  });

  it('shows a bug inside the job manager as internal, not as the user\'s invalid input', async () => {
    const { services } = setup();
    const logged: string[] = [];
    const dispatch = createDispatcher(createHandlers(services), (m) => logged.push(m));
    expect((await errorOf(dispatch('jobs.get', { id: 'no-such-job' }, { transport: 'in-process' }))).code).toBe('not_found');
    services.jobs.manager.get = () => {
      throw new TypeError('spec is undefined');
    };
    const err = await errorOf(dispatch('jobs.get', { id: 'any' }, { transport: 'in-process' }));
    expect(err.code).toBe('internal');
    expect(logged.join('\n')).toContain('TypeError: spec is undefined');
  });

  it('keeps job launch mistakes as invalid_input without reading their wording', async () => {
    const { services } = setup();
    const dispatch = createDispatcher(createHandlers(services), () => {});
    const err = await errorOf(dispatch('jobs.submit', { name: 'x', backend: 'local', recipe: 'no-such-recipe' }, { transport: 'in-process' }));
    expect(err.code).toBe('invalid_input');
    expect(err.message).toContain('no-such-recipe');
  });

  it('recognises an unreachable host by its error code, not its message', () => {
    expect(isUnreachable(Object.assign(new Error('whatever words'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isUnreachable(new TypeError('fetch failed', { cause: Object.assign(new Error('x'), { code: 'ENOTFOUND' }) }))).toBe(true);
    expect(isUnreachable(Object.assign(new Error('x'), { level: 'client-timeout' }))).toBe(true);
    expect(isUnreachable(new Error('connect ECONNREFUSED 127.0.0.1:22'))).toBe(false);
  });

  it('has one way to say what an unknown thrown value was', () => {
    expect(errorMessage(new Error('boom'))).toBe('boom');
    expect(errorMessage('plain')).toBe('plain');
    expect(errorMessage({ code: 1 })).toBe('{"code":1}');
    expect(errorMessage(undefined)).toBe('undefined');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(errorMessage(cyclic)).toBe('[object Object]');
  });
});
