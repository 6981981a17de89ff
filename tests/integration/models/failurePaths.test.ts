import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatClient, type EndpointConfig } from '../../../core/models/client';
import { toApiError } from '../../../core/server/dispatcher';
import { startStandIn, type StandIn } from '../../helpers/standInOpenAi';

/**
 * The model client's failure paths, against real HTTP servers (the stand-in OpenAI server and a
 * raw one that answers what no real server should), through the dispatcher's own mapping: each
 * reaches the person with a contract code they can act on, never `internal` ("a bug"), and nothing
 * is logged as an unexpected error.
 */
let standIn: StandIn | null = null;
let raw: Server | null = null;
afterEach(async () => {
  await standIn?.close();
  standIn = null;
  if (raw) await new Promise<void>((r) => raw!.close(() => r()));
  raw = null;
});

function cfg(url: string, over: Partial<EndpointConfig> = {}): EndpointConfig {
  return { baseUrl: url, model: 'stand-in', apiKey: null, temperature: 1, topP: 0.95, topK: 20, maxTokens: 64, thinking: null, turnTimeoutMs: 5000, retries: 0, concurrency: 1, stream: false, ...over };
}

/** What the person sees for a failed completion: the dispatcher's mapping of the thrown value. */
async function seen(client: ChatClient, signal?: AbortSignal): Promise<{ code: string; message: string; logged: string[] }> {
  const logged: string[] = [];
  try {
    await client.complete([{ role: 'user', content: 'x' }], signal ? { signal } : {});
  } catch (e) {
    const api = toApiError(e, 'models.test', (m) => logged.push(m));
    return { code: api.code, message: api.message, logged };
  }
  throw new Error('expected a failure');
}

/** A server that answers every request with `body` as status 200 JSON. */
async function rawServer(body: string): Promise<string> {
  raw = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
  });
  await new Promise<void>((r) => raw!.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(raw.address() as AddressInfo).port}/v1`;
}

describe('model client failures reach the person with a contract code, never internal', () => {
  it('a refused key that the server repeats is not repeated in the error a turn ends with', async () => {
    standIn = await startStandIn(() => ({ content: 'x' }), { apiKey: 'sk-the-right-one' });
    const refused = await seen(new ChatClient(cfg(standIn.url, { apiKey: 'sk-wrong-key-1234' })));
    expect(standIn.auth).toEqual(['Bearer sk-wrong-key-1234']);
    expect(refused.message).toBe('HTTP 401: Incorrect API key provided: [redacted]');
    expect(refused.logged).toEqual([]);
  });

  it('an HTTP error, a dropped connection (plain and mid-stream), a slow answer, a closed port, a cancel', async () => {
    standIn = await startStandIn(() => ({ status: 502, error: 'bad gateway' }));
    const http = await seen(new ChatClient(cfg(standIn.url)));
    expect(http).toEqual({ code: 'unavailable', message: 'HTTP 502: bad gateway', logged: [] });
    await standIn.close();

    standIn = await startStandIn(() => ({ drop: true }));
    for (const stream of [false, true]) {
      const dropped = await seen(new ChatClient(cfg(standIn.url, { stream })));
      expect(dropped.code).toBe('unavailable');
      expect(dropped.logged).toEqual([]);
    }
    await standIn.close();

    standIn = await startStandIn(() => ({ content: 'late', delayMs: 1500 }));
    const slow = await seen(new ChatClient(cfg(standIn.url, { turnTimeoutMs: 200 })));
    expect(slow.code).toBe('timeout');
    expect(slow.logged).toEqual([]);

    const ac = new AbortController();
    const cancelled = seen(new ChatClient(cfg(standIn.url)), ac.signal);
    ac.abort();
    expect((await cancelled).code).toBe('cancelled');

    const url = standIn.url;
    await standIn.close();
    standIn = null;
    const refused = await seen(new ChatClient(cfg(url)));
    expect(refused.code).toBe('unavailable');
    expect(refused.message).toMatch(/ECONNREFUSED/);
  });

  it('an answer that is not JSON, or has no choices', async () => {
    const notJson = await seen(new ChatClient(cfg(await rawServer('<html>proxy error</html>'))));
    expect(notJson.code).toBe('unavailable');
    expect(notJson.message).toContain('not JSON');
    expect(notJson.logged).toEqual([]);
    await new Promise<void>((r) => raw!.close(() => r()));
    const noChoices = await seen(new ChatClient(cfg(await rawServer(JSON.stringify({ error: { message: 'model overloaded' } })))));
    expect(noChoices.code).toBe('unavailable');
    expect(noChoices.message).toContain('model overloaded');
  });

  it('the embedded model: a name no model file has', async () => {
    const unknown = await seen(new ChatClient(cfg('local', { model: 'no-such-model-file' })));
    expect(unknown.code).toBe('unavailable');
    expect(unknown.logged).toEqual([]);
  });
});
