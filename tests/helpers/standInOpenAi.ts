/**
 * STAND-IN, not a model: a small OpenAI-compatible chat-completions server for tests (no model can
 * run on these machines). It speaks the real wire format: JSON answers and SSE streaming
 * (`data: {chunk}` lines, `data: [DONE]`), `tool_calls` (streamed as indexed deltas),
 * `finish_reason`, `usage`, error bodies, 429 with Retry-After, slow answers and dropped
 * connections. Each request body is kept so tests can assert the exact messages sent. Given a key,
 * it answers 401 as hosted servers do to a request without `Authorization: Bearer <key>`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInAnswer {
  content?: string;
  reasoning?: string;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  finish_reason?: string;
  delayMs?: number;
  /** Answered only once this settles (a test that lets answers through when it chooses). */
  after?: Promise<unknown>;
  /** Streaming only: a pause after each content chunk (a slow model, or time to cut a stream midway). */
  chunkDelayMs?: number;
}
export type StandInReply =
  | StandInAnswer
  | { status: number; error: string; retryAfter?: string; delayMs?: number }
  /** Close the connection without an answer (after headers and part of a stream when streaming). */
  | { drop: true; delayMs?: number };

/** `conn.remotePort`: the client's end of the request's connection (tests that check who connected). */
export type Responder = (body: Record<string, unknown>, n: number, conn: { remotePort: number }) => StandInReply;

export interface StandIn {
  url: string;
  requests: Record<string, unknown>[];
  /** Each request body as it came, byte for byte (tests that compare two clients' requests). */
  rawRequests: string[];
  /** Time each request arrived (ms, performance.now()). */
  arrivals: number[];
  /** The Authorization header of each request (null when absent). */
  auth: (string | null)[];
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function usage(body: Record<string, unknown>, content: string) {
  const prompt = JSON.stringify(body.messages ?? []).length >> 2;
  const completion = Math.max(1, content.length >> 2);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startStandIn(respond: Responder, opts: { apiKey?: string } = {}): Promise<StandIn> {
  const requests: Record<string, unknown>[] = [];
  const rawRequests: string[] = [];
  const arrivals: number[] = [];
  const auth: (string | null)[] = [];
  let n = 0;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      arrivals.push(performance.now());
      const text = await readBody(req);
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}`, type: 'not_found' } }));
        return;
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'body is not JSON', type: 'invalid_request_error' } }));
        return;
      }
      requests.push(body);
      rawRequests.push(text);
      auth.push(req.headers.authorization ?? null);
      if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
        // Echoing the key it was given, as some servers do: what shows the refusal must not repeat it.
        const given = req.headers.authorization?.replace(/^Bearer /, '');
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `Incorrect API key provided${given ? `: ${given}` : ''}`, type: 'invalid_request_error', code: 'invalid_api_key' } }));
        return;
      }
      const reply = respond(body, n++, { remotePort: req.socket.remotePort ?? 0 });
      if (reply.delayMs) await sleep(reply.delayMs);
      if ('after' in reply && reply.after) await reply.after;
      if ('drop' in reply) {
        if (body.stream) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: 'partial' }, finish_reason: null }] })}\n\n`);
        }
        req.socket.destroy();
        return;
      }
      if ('status' in reply) {
        res.writeHead(reply.status, { 'content-type': 'application/json', ...(reply.retryAfter !== undefined ? { 'retry-after': reply.retryAfter } : {}) });
        res.end(JSON.stringify({ error: { message: reply.error, type: 'server_error', code: reply.status } }));
        return;
      }
      const content = reply.content ?? '';
      const finish = reply.finish_reason ?? (reply.tool_calls?.length ? 'tool_calls' : 'stop');
      const u = usage(body, content);
      const id = `chatcmpl-standin-${n}`;
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id,
            object: 'chat.completion',
            created: 0,
            model: body.model,
            choices: [{ index: 0, message: { role: 'assistant', content: reply.tool_calls && !content ? null : content, ...(reply.reasoning ? { reasoning_content: reply.reasoning } : {}), ...(reply.tool_calls ? { tool_calls: reply.tool_calls } : {}) }, finish_reason: finish }],
            usage: u,
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) => `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason }] })}\n\n`;
      res.write(chunk({ role: 'assistant', content: '' }));
      if (reply.reasoning) res.write(chunk({ reasoning_content: reply.reasoning }));
      for (let i = 0; i < content.length; i += 7) {
        res.write(chunk({ content: content.slice(i, i + 7) }));
        if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
      }
      (reply.tool_calls ?? []).forEach((c, index) => {
        res.write(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] }));
        const a = c.function.arguments;
        for (let i = 0; i < a.length; i += 5) res.write(chunk({ tool_calls: [{ index, function: { arguments: a.slice(i, i + 5) } }] }));
      });
      res.write(chunk({}, finish));
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model: body.model, choices: [], usage: u })}\n\n`);
      res.end('data: [DONE]\n\n');
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    rawRequests,
    arrivals,
    auth,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
