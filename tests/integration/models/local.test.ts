// The embedded model, for real: SmolLM2-135M-Instruct (the GGUF `npm run models` puts in the models
// folder) run by node-llama-cpp's prebuilt CPU binary in the built worker (dist/node/model-worker.js).
// What the model writes is not asserted, only that the real path ran: tokens came back, were counted,
// and an episode was played and recorded through the same client that talks to served models.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../../core/cli/main';
import type { CliIO } from '../../../core/cli/command';
import { ChatClient, ModelError, type EndpointConfig } from '../../../core/models/client';
import { LocalEngine } from '../../../core/models/localEngine';
import { DEFAULT_LOCAL_MODEL, modelsDir, resolveLocalModel, zipEntry } from '../../../core/models/localModel';
import { endpointSchema } from '../../../core/api/calls/models';
import { tempDir } from '../../helpers/tmp';

const tmp = tempDir('spade-local-model-');
afterAll(async () => {
  await LocalEngine.closeAll();
  tmp.cleanup();
});

const cfg = (over: Partial<EndpointConfig> = {}): EndpointConfig => ({
  baseUrl: 'local',
  model: DEFAULT_LOCAL_MODEL.name,
  apiKey: null,
  temperature: 0,
  topP: 1,
  topK: null,
  maxTokens: 24,
  thinking: null,
  turnTimeoutMs: 300_000,
  retries: 0,
  concurrency: 1,
  stream: false,
  ...over,
});

describe('the local model file', () => {
  it('is in the models folder, found by its name, and a missing or non-GGUF model says what to do', () => {
    expect(resolveLocalModel(DEFAULT_LOCAL_MODEL.name)).toBe(join(modelsDir(), DEFAULT_LOCAL_MODEL.file));
    expect(() => resolveLocalModel('no-such-model', tmp.dir)).toThrow(/No local model no-such-model in .*put the \.gguf file there/);
    expect(() => resolveLocalModel(DEFAULT_LOCAL_MODEL.name, tmp.dir)).toThrow(/npm run models/);
    const txt = join(tmp.dir, 'notes.txt');
    writeFileSync(txt, 'x');
    expect(() => resolveLocalModel(txt)).toThrow(/is not one/);
  });

  it('reads a stored and a deflated entry of a zip through its central directory', async () => {
    const { execFileSync } = await import('node:child_process');
    const zip = join(tmp.dir, 'w.zip');
    execFileSync('python3', ['-c', `import zipfile
z = zipfile.ZipFile(${JSON.stringify(zip)}, 'w')
z.writestr(zipfile.ZipInfo('a/stored.txt'), 'plain ' * 10)
z.writestr('a/deflated.txt', 'packed ' * 1000, compress_type=zipfile.ZIP_DEFLATED)
z.close()`]);
    const buf = (await import('node:fs')).readFileSync(zip);
    expect(zipEntry(buf, 'a/stored.txt').toString()).toBe('plain '.repeat(10));
    expect(zipEntry(buf, 'a/deflated.txt').toString()).toBe('packed '.repeat(1000));
    expect(() => zipEntry(buf, 'a/missing.txt')).toThrow(/not in the zip/);
  });

  it('is an endpoint like any other: `local` passes the endpoint schema, other words do not', () => {
    expect(endpointSchema.parse({ baseUrl: 'local', model: DEFAULT_LOCAL_MODEL.name }).baseUrl).toBe('local');
    expect(endpointSchema.safeParse({ baseUrl: 'locale', model: 'x' }).success).toBe(false);
  });
});

describe('the local endpoint', () => {
  it('answers a chat request through ChatClient with tokens counted, as a served model would', async () => {
    const c = await new ChatClient(cfg()).complete([
      { role: 'system', content: 'You answer briefly.' },
      { role: 'user', content: 'Name a colour.' },
    ]);
    expect(c.text.length).toBeGreaterThan(0);
    expect(c.usage?.completion_tokens).toBeGreaterThan(0);
    expect(c.usage?.completion_tokens).toBeLessThanOrEqual(24);
    expect(c.usage?.prompt_tokens).toBeGreaterThan(5);
    expect(['stop', 'length']).toContain(c.finishReason);
    expect(c.attempts).toBe(1);
  });

  it('fails a missing model at once, with the reason, and retries nothing', async () => {
    const client = new ChatClient(cfg({ model: 'no-such-model', retries: 3 }));
    const err = await client.complete([{ role: 'user', content: 'hi' }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as ModelError).status).toBe(404);
    expect((err as ModelError).message).toMatch(/No local model no-such-model/);
  });

  it('stops a generation when its request is cancelled', async () => {
    const ac = new AbortController();
    const p = new ChatClient(cfg({ maxTokens: 4000, temperature: 1 })).complete([{ role: 'user', content: 'Write a very long story.' }], { signal: ac.signal });
    setTimeout(() => ac.abort(), 300);
    await expect(p).rejects.toMatchObject({ kind: 'aborted' });
    // The worker is free again: the next request is answered.
    const next = await new ChatClient(cfg({ maxTokens: 4 })).complete([{ role: 'user', content: 'Say OK.' }]);
    expect(next.usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('plays an episode through the CLI (`play --endpoint local`) and records its turns', async () => {
    const env = join(tmp.dir, 'guess.py');
    writeFileSync(
      env,
      `class GuessEnv:
    def __init__(self, max_turns=2):
        self.max_turns = max_turns

    def reset(self, seed=None):
        self.turn = 0
        return "Guess my number between 1 and 10.", {}

    def step(self, action):
        self.turn += 1
        if action == "\\\\boxed{7}":
            return "Correct!", 1.0, True, False, {}
        return "No.", 0.0, False, self.turn >= self.max_turns, {}

    def solution(self):
        return "7"
`,
    );
    let out = '';
    let err = '';
    const io: CliIO = { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`) };
    const code = await main(['play', env, '--endpoint', 'local', '--seeds', '1', '--max-tokens', '24', '--max-turns', '2', '--runtime', 'pyodide', '--data-dir', join(tmp.dir, 'data'), '--json'], io);
    expect(err).toBe('');
    expect(code).toBe(0);
    const j = JSON.parse(out) as { endpoint: string; model: string; episodes: { turns: { raw: string; usage: { completion_tokens?: number } | null }[]; endedBy: string }[] };
    expect(j.endpoint).toBe('local');
    expect(j.model).toBe(DEFAULT_LOCAL_MODEL.name);
    expect(j.episodes.length).toBeGreaterThan(0);
    const turns = j.episodes.flatMap((e) => e.turns);
    expect(turns.length).toBeGreaterThan(0);
    expect(turns.every((t) => (t.usage?.completion_tokens ?? 0) > 0)).toBe(true);
  }, 600_000);
});
