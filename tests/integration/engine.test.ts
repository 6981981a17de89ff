import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, type EventName } from '../../core/api';
import { launchEngine, startEngine, type Engine, type EngineOptions } from '../../core/host/engineProcess';
import { tempDir } from '../helpers/tmp';

// The engine boundary (core/host/engineProcess.ts) with the engine in its own worker thread, the
// bundled dist/node/engine-worker.js (run `npm run build` first): calls, errors, a cancel, events,
// the hooks the host serves, slow calls logged, and an engine that dies.

const open: { engine: Engine; cleanup(): void }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.engine.close();
    o.cleanup();
  }
});

async function engineOn(opts: Partial<EngineOptions> = {}): Promise<{ engine: Engine; dataDir: string }> {
  const tmp = tempDir('spade-engine-');
  const engine = await startEngine({ dataDir: tmp.dir, shell: 'web', mode: 'worker', ...opts });
  open.push({ engine, cleanup: tmp.cleanup });
  return { engine, dataDir: tmp.dir };
}

/** A host dialog the test answers when it likes: a call that stays open inside the engine. */
function heldPicker(): { pickPaths: () => Promise<string[]>; answer(paths: string[]): void; asked: () => number } {
  let answers: ((p: string[]) => void)[] = [];
  let asked = 0;
  return {
    pickPaths: () => {
      asked++;
      return new Promise((resolve) => answers.push(resolve));
    },
    answer(paths) {
      const a = answers;
      answers = [];
      a.forEach((r) => r(paths));
    },
    asked: () => asked,
  };
}

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error('expected the call to fail');
}

function collect(engine: Engine): { name: EventName; payload: unknown }[] {
  const seen: { name: EventName; payload: unknown }[] = [];
  engine.events.subscribe((name, payload) => seen.push({ name, payload }));
  return seen;
}

describe('the engine in a worker thread', () => {
  it('answers a call from the worker, which owns its own database', async () => {
    const { engine, dataDir } = await engineOn();
    const info = (await engine.call('app.info', {})) as { shell: string; dataDir: string; picker: boolean };
    expect(info).toMatchObject({ shell: 'web', dataDir, picker: false });
    const health = (await engine.call('app.health', {})) as { database: { ok: boolean } };
    expect(health.database.ok).toBe(true);
  });

  it('sends back the contract errors with their codes and details', async () => {
    const { engine } = await engineOn();
    const unknown = await rejection(engine.call('no.such.call', {}));
    expect(unknown.code).toBe('unknown_call');
    const invalid = await rejection(engine.call('memory.search', { limit: 'ten' }));
    expect(invalid.code).toBe('invalid_input');
    expect(invalid.details).toMatchObject({ call: 'memory.search' });
    const missing = await rejection(engine.call('memory.get', { hash: 'f'.repeat(64) }));
    expect(missing.code).toBe('not_found');
    // A value that cannot cross at all is refused on the host's side, with a clear code.
    const unsendable = await rejection(engine.call('app.info', { f: () => 1 }));
    expect(unsendable.code).toBe('invalid_input');
    expect((await engine.call('app.info', {})) as object).toHaveProperty('shell', 'web');
  });

  it('pushes the engine events to the host: an import from the worker reports its progress and the library change', async () => {
    const { engine, dataDir } = await engineOn();
    const seen = collect(engine);
    const src = join(dataDir, 'src');
    mkdirSync(src);
    writeFileSync(join(src, 'counter_env.py'), 'class CounterEnv:\n    def reset(self, seed=None):\n        return "0", {}\n    def step(self, action):\n        return "1", 1.0, True, False, {}\n');
    const { jobId } = (await engine.call('memory.import', { paths: [src] })) as { jobId: string };
    await expect.poll(() => seen.some((e) => e.name === 'memory.importProgress' && (e.payload as { jobId: string; phase: string }).jobId === jobId && (e.payload as { phase: string }).phase === 'done'), { timeout: 60_000 }).toBe(true);
    expect(seen.some((e) => e.name === 'memory.changed')).toBe(true);
    const found = (await engine.call('memory.search', { query: 'CounterEnv' })) as { total: number };
    expect(found.total).toBe(1);
  });

  it('serves the host hooks the engine asks for (a dialog only the window process can open)', async () => {
    const picker = heldPicker();
    const { engine } = await engineOn({ platform: { pickPaths: picker.pickPaths } });
    expect(((await engine.call('app.info', {})) as { picker: boolean }).picker).toBe(true);
    const pending = engine.call('app.pickPaths', { title: 'Pick', folders: true, multiple: false });
    await expect.poll(picker.asked).toBe(1);
    picker.answer(['/chosen']);
    expect(await pending).toEqual({ available: true, paths: ['/chosen'] });
  });

  it('seals job secrets with the host keychain, synchronously from the worker, and opens them again after a restart', async () => {
    let sealed = 0;
    const sealer = {
      encrypt: (plain: string) => {
        sealed++;
        return Buffer.from(`SEALED:${[...plain].reverse().join('')}`);
      },
      decrypt: (b: Buffer) => {
        const t = b.toString();
        if (!t.startsWith('SEALED:')) throw new Error('not ours');
        return [...t.slice(7)].reverse().join('');
      },
    };
    const { engine, dataDir } = await engineOn({ secretSealer: sealer });
    expect(await engine.call('jobs.setSecret', { name: 'API_KEY', value: 's3cret-value' })).toEqual({ names: ['API_KEY'], store: 'keychain' });
    expect(sealed).toBeGreaterThan(0);
    const onDisk = readFileSync(join(dataDir, 'secrets.sealed.json'), 'utf8');
    expect(onDisk).not.toContain('s3cret-value');
    expect(Buffer.from((JSON.parse(onDisk) as Record<string, string>).API_KEY!, 'base64').toString()).toBe('SEALED:eulav-terc3s');
    await engine.kill();
    await expect.poll(() => engine.state(), { timeout: 60_000 }).toBe('running');
    expect(await engine.call('jobs.secrets', {})).toEqual({ names: ['API_KEY'], store: 'keychain' });
  });

  it('answers a cancelled call at once with `cancelled`, and the engine goes on', async () => {
    const picker = heldPicker();
    const { engine } = await engineOn({ platform: { pickPaths: picker.pickPaths } });
    const abort = new AbortController();
    const pending = engine.call('app.pickPaths', { title: 'Pick', folders: false, multiple: false }, abort.signal);
    await expect.poll(picker.asked).toBe(1);
    abort.abort();
    expect((await rejection(pending)).code).toBe('cancelled');
    picker.answer(['/late']); // the engine finishes the call; its reply is dropped, nobody waits on it
    expect((await engine.call('app.info', {})) as object).toHaveProperty('shell', 'web');
    const already = new AbortController();
    already.abort();
    expect((await rejection(engine.call('app.info', {}, already.signal))).code).toBe('cancelled');
  });

  it('logs a call that takes over 100 ms in the engine, with its name and duration', async () => {
    const { engine } = await engineOn({ platform: { pickPaths: () => new Promise((r) => setTimeout(() => r(['/slow']), 250)) } });
    const seen = collect(engine);
    await engine.call('app.info', {});
    await engine.call('app.pickPaths', { title: 'Pick', folders: false, multiple: false });
    const slow = () => seen.filter((e) => e.name === 'log.line').map((e) => e.payload as { level: string; source: string; message: string }).filter((l) => l.message.startsWith('slow call'));
    await expect.poll(() => slow().length).toBeGreaterThan(0);
    expect(slow().map((l) => l.message.replace(/\d+ ms/, 'N ms'))).toContain('slow call app.pickPaths: N ms in the engine');
    const ms = Number(/: (\d+) ms/.exec(slow().find((l) => l.message.includes('app.pickPaths'))!.message)![1]);
    expect(ms).toBeGreaterThanOrEqual(100);
    expect(slow()[0]).toMatchObject({ level: 'warn', source: 'engine' });
  });

  it('fails the calls in flight when the worker dies, says why, and starts the engine again', async () => {
    const picker = heldPicker();
    const { engine } = await engineOn({ platform: { pickPaths: picker.pickPaths } });
    const seen = collect(engine);
    const pending = engine.call('app.pickPaths', { title: 'Pick', folders: false, multiple: false });
    await expect.poll(picker.asked).toBe(1);
    await engine.kill();
    const err = await rejection(pending);
    expect(err.code).toBe('unavailable');
    expect(err.message).toMatch(/The engine stopped .*starting again/);
    expect(seen.some((e) => e.name === 'log.line' && (e.payload as { message: string }).message.startsWith('The engine stopped'))).toBe(true);
    await expect.poll(() => engine.state(), { timeout: 60_000 }).toBe('running');
    expect(engine.restarts).toBe(1);
    expect((await engine.call('app.info', {})) as object).toHaveProperty('shell', 'web');
  });

  it('stays down with a clear error once it has died more often than it may be restarted', async () => {
    const { engine } = await engineOn({ maxRestarts: 0 });
    await engine.kill();
    await expect.poll(() => engine.state()).toBe('down');
    const err = await rejection(engine.call('app.info', {}));
    expect(err.code).toBe('unavailable');
    expect(err.message).toMatch(/was not started again/);
  });

  it('takes calls while the worker is still loading, and answers them once it is up', async () => {
    const tmp = tempDir('spade-engine-early-');
    const engine = launchEngine({ dataDir: tmp.dir, shell: 'web', mode: 'worker' });
    open.push({ engine, cleanup: tmp.cleanup });
    expect(engine.state()).toBe('starting');
    const early = engine.call('app.info', {});
    expect(((await early) as { dataDir: string }).dataDir).toBe(tmp.dir);
    expect(engine.state()).toBe('running');
  });

  it('fails the calls that waited on an engine that could not start, with the reason', async () => {
    const tmp = tempDir('spade-engine-bad-early-');
    try {
      const file = join(tmp.dir, 'not-a-dir');
      writeFileSync(file, 'x');
      const engine = launchEngine({ dataDir: file, shell: 'web', mode: 'worker' });
      const early = rejection(engine.call('app.info', {}));
      await expect(engine.ready).rejects.toThrow(/The engine could not start: /);
      const err = await early;
      expect(err.code).toBe('unavailable');
      expect(err.message).toMatch(/The engine could not start: /);
      expect(engine.state()).toBe('down');
      await engine.close();
    } finally {
      tmp.cleanup();
    }
  });

  it('refuses to start on a data directory it cannot open, with the reason', async () => {
    const tmp = tempDir('spade-engine-bad-');
    try {
      const file = join(tmp.dir, 'not-a-dir');
      writeFileSync(file, 'x');
      await expect(startEngine({ dataDir: file, shell: 'web', mode: 'worker' })).rejects.toThrow(/The engine could not start: /);
    } finally {
      tmp.cleanup();
    }
  });
});

describe('the same boundary on this thread', () => {
  it('answers calls, errors and events through the same messages and exposes the services', async () => {
    const { engine } = await engineOn({ mode: 'thread' });
    const seen = collect(engine);
    expect(((await engine.call('app.info', {})) as { shell: string }).shell).toBe('web');
    expect((await rejection(engine.call('memory.search', { limit: -1 }))).code).toBe('invalid_input');
    engine.services.log('info', 'test', 'hello across');
    await expect.poll(() => seen.some((e) => e.name === 'log.line' && (e.payload as { message: string }).message === 'hello across')).toBe(true);
  });

  it('says where the services are when the engine runs in a worker', async () => {
    const { engine } = await engineOn();
    expect(() => engine.services).toThrow(/worker thread/);
  });
});
