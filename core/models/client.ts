/**
 * A client for any OpenAI-compatible chat-completions server (SGLang and vLLM as SPADE serves its
 * checkpoints, OpenAI, OpenRouter, a local server). JSON or SSE streaming; retries with backoff on
 * 429 and 5xx (honouring Retry-After) and on dropped connections; a per-turn timeout; at most
 * `concurrency` requests in flight.
 */
import type { OpenAiToolCall } from './extract';
import { errorMessage } from '../api/errorMessage'; // not ../api/errors: the CLI's play starts its runtime before zod loads
import { DomainError } from '../errors';
import { directFetch } from './httpFetch';
import { localFetch } from './localEngine';
import { isLocalEndpoint } from './localModel';
import { redact } from '../base/redact';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: OpenAiToolCall[];
  tool_call_id?: string;
}

export interface EndpointConfig {
  /** e.g. http://127.0.0.1:30000/v1 (a trailing /chat/completions is accepted too), or `local`: the embedded GGUF model named by `model`. */
  baseUrl: string;
  model: string;
  apiKey?: string | null;
  temperature: number;
  topP: number;
  /** Sent only when set: OpenAI itself refuses top_k, SGLang and vLLM take it. */
  topK: number | null;
  maxTokens: number;
  /** SPADE's actor thinking mode: sent as chat_template_kwargs.enable_thinking; null sends nothing. */
  thinking: boolean | null;
  turnTimeoutMs: number;
  retries: number;
  concurrency: number;
  stream: boolean;
  /**
   * Reach the server through this job's SSH connection: baseUrl is then the server as the job's
   * SSH host sees it (http://gpu-node-7:30000/v1). The caller gives the client the tunnel's fetch
   * (core/models/tunnel.ts); null or absent: directly.
   */
  via?: { jobId: string } | null;
}

// Kept in core/api so that the forms that offer these settings show the same defaults.
export { SPADE_SAMPLING } from '../api/spadeSampling';

export interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
}

export interface Completion {
  /** The assistant message's content ('' when the server sent none). */
  text: string;
  /** A reasoning parser's separate thinking text, when the server split it off. */
  reasoning: string | null;
  toolCalls: OpenAiToolCall[];
  finishReason: string | null;
  usage: Usage | null;
  latencyMs: number;
  attempts: number;
}

/** The model server's failures, as the contract code a caller can act on (retry, wait, fix the endpoint). */
const modelErrorCode = { http: 'unavailable', timeout: 'timeout', network: 'unavailable', aborted: 'cancelled', protocol: 'unavailable' } as const;

export class ModelError extends DomainError {
  constructor(
    message: string,
    readonly kind: 'http' | 'timeout' | 'network' | 'aborted' | 'protocol',
    readonly status: number | null = null,
  ) {
    super(modelErrorCode[kind], message, status === null ? undefined : { status });
    this.name = 'ModelError';
  }
}

export interface ClientDeps {
  fetch?: typeof fetch;
  /** Each answered completion (the CLI's tokens/s, time per turn and estimate of what is left). */
  onCompletion?: (c: Completion) => void;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Milliseconds of the first backoff; doubled per attempt, capped at 30 s. */
  backoffMs?: number;
}

const defaultSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new ModelError('cancelled', 'aborted'));
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(new ModelError('cancelled', 'aborted'));
    });
  });

/** Retry-After as seconds or an HTTP date, in milliseconds; null when absent or unreadable. */
export function retryAfterMs(v: string | null, now = Date.now()): number | null {
  if (!v) return null;
  const s = Number(v);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const t = Date.parse(v);
  return Number.isFinite(t) ? Math.max(0, t - now) : null;
}

export function chatUrl(baseUrl: string): string {
  const b = baseUrl.replace(/\/+$/, '');
  return b.endsWith('/chat/completions') ? b : `${b}/chat/completions`;
}

/** Counts slots so that at most `n` requests are in flight. */
class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly n: number) {}
  get size(): number {
    return this.n;
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.n) await new Promise<void>((r) => this.waiting.push(r));
    this.active++;
    try {
      return await fn();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

/**
 * Every request to the embedded model in this process goes through this one slot, whatever the
 * clients' concurrency (an episode sweep at 8, a designer and an agent side by side). The model's
 * worker generates one answer at a time with threads on every core; a second generation at once
 * would ask the machine for twice its cores, and llama.cpp's spinning threads then cost two orders
 * of magnitude (issue 46: 69.9 tokens/s with 2 threads on 2 cores, 0.27 with 4). Queued here, not
 * in the worker, a request's turn timer and latency start when its generation does.
 */
const LOCAL_GATE = new Gate(1);

export class ChatClient {
  private readonly gate: Gate;
  private readonly fetch: typeof fetch;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(
    readonly cfg: EndpointConfig,
    private readonly deps: ClientDeps = {},
  ) {
    this.gate = isLocalEndpoint(cfg.baseUrl) ? LOCAL_GATE : new Gate(Math.max(1, cfg.concurrency));
    // "local" is the embedded model: the same requests, answered in this process (core/models/localEngine.ts).
    this.fetch = deps.fetch ?? (isLocalEndpoint(cfg.baseUrl) ? localFetch(cfg.model) : directFetch(this.gate.size));
    this.sleep = deps.sleep ?? defaultSleep;
  }

  /** The request body as sent (also what a transcript records about sampling). */
  body(messages: ChatMessage[], tools?: unknown[], thinking?: boolean | null): Record<string, unknown> {
    // `thinking` given: this request's own (SPADE's 8B recipe thinks on one regret arm only).
    const c = thinking === undefined ? this.cfg : { ...this.cfg, thinking };
    return {
      model: c.model,
      messages,
      temperature: c.temperature,
      top_p: c.topP,
      ...(c.topK !== null ? { top_k: c.topK } : {}),
      max_tokens: c.maxTokens,
      ...(tools && tools.length ? { tools } : {}),
      ...(c.thinking !== null ? { chat_template_kwargs: { enable_thinking: c.thinking } } : {}),
      ...(c.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    };
  }

  complete(messages: ChatMessage[], opts: { tools?: unknown[]; signal?: AbortSignal; thinking?: boolean | null } = {}): Promise<Completion> {
    return this.gate.run(() => this.withRetries(messages, opts));
  }

  private async withRetries(messages: ChatMessage[], opts: { tools?: unknown[]; signal?: AbortSignal; thinking?: boolean | null }): Promise<Completion> {
    const body = JSON.stringify(this.body(messages, opts.tools, opts.thinking));
    const started = performance.now();
    for (let attempt = 1; ; attempt++) {
      try {
        const c = await this.once(body, opts.signal);
        const done = { ...c, latencyMs: performance.now() - started, attempts: attempt };
        this.deps.onCompletion?.(done);
        return done;
      } catch (e) {
        const err = e instanceof ModelError ? e : new ModelError(errorMessage(e), 'network');
        // Some servers repeat the key they refused; what a turn ends with is stored with its
        // episode and shown, so the key never leaves in it.
        if (this.cfg.apiKey) err.message = redact(err.message, [this.cfg.apiKey]);
        const retryable = err.kind === 'network' || (err.kind === 'http' && (err.status === 429 || (err.status ?? 0) >= 500));
        if (!retryable || attempt > this.cfg.retries) throw err;
        const wait = (err as ModelError & { retryAfter?: number | null }).retryAfter ?? Math.min(30_000, (this.deps.backoffMs ?? 500) * 2 ** (attempt - 1));
        await this.sleep(wait, opts.signal);
      }
    }
  }

  private async once(body: string, outer?: AbortSignal): Promise<Omit<Completion, 'latencyMs' | 'attempts'>> {
    if (outer?.aborted) throw new ModelError('cancelled', 'aborted');
    const ac = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ac.abort();
    }, this.cfg.turnTimeoutMs);
    const onAbort = () => ac.abort();
    outer?.addEventListener('abort', onAbort);
    try {
      const res = await this.fetch(chatUrl(this.cfg.baseUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.cfg.apiKey ? { authorization: `Bearer ${this.cfg.apiKey}` } : {}) },
        body,
        signal: ac.signal,
      });
      if (!res.ok) {
        const text = await res.text().catch(() => '');
        const err = httpError(res.status, text) as ModelError & { retryAfter?: number | null };
        err.retryAfter = retryAfterMs(res.headers.get('retry-after'));
        throw err;
      }
      const isSse = (res.headers.get('content-type') ?? '').includes('text/event-stream');
      return isSse ? await readStream(res) : readJson(await res.text());
    } catch (e) {
      if (e instanceof ModelError) throw e;
      if (timedOut) throw new ModelError(`no answer within ${Math.round(this.cfg.turnTimeoutMs / 1000)} s`, 'timeout');
      if (outer?.aborted) throw new ModelError('cancelled', 'aborted');
      const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
      throw new ModelError(`${errorMessage(e)}${cause}`, 'network');
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    }
  }
}

/** A server's refusal (status and body) as the error a turn ends with. */
export function httpError(status: number, text: string): ModelError {
  let msg = text.slice(0, 500);
  try {
    const j = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    msg = (typeof j.error === 'string' ? j.error : j.error?.message) ?? j.message ?? msg;
  } catch {
    // not JSON: keep the text
  }
  return new ModelError(`HTTP ${status}: ${msg}`, 'http', status);
}

interface ChoiceMessage {
  content?: string | null;
  reasoning_content?: string | null;
  tool_calls?: OpenAiToolCall[];
}

/** A JSON chat-completions answer as a completion (protocol errors as ModelError). */
export function readJson(text: string): Omit<Completion, 'latencyMs' | 'attempts'> {
  let j: { choices?: { message?: ChoiceMessage; finish_reason?: string | null }[]; usage?: Usage; error?: unknown };
  try {
    j = JSON.parse(text) as typeof j;
  } catch {
    throw new ModelError(`the server's answer is not JSON: ${text.slice(0, 200)}`, 'protocol');
  }
  const choice = j.choices?.[0];
  if (!choice) throw new ModelError(`the server's answer has no choices${j.error ? `: ${JSON.stringify(j.error).slice(0, 300)}` : ''}`, 'protocol');
  const m = choice.message ?? {};
  return { text: m.content ?? '', reasoning: m.reasoning_content ?? null, toolCalls: m.tool_calls ?? [], finishReason: choice.finish_reason ?? null, usage: j.usage ?? null };
}

/** Reads an SSE chat-completions stream: content, reasoning and tool-call deltas, finish_reason, usage. */
async function readStream(res: Response): Promise<Omit<Completion, 'latencyMs' | 'attempts'>> {
  let text = '';
  let reasoning: string | null = null;
  let finishReason: string | null = null;
  let usage: Usage | null = null;
  let sawDone = false;
  const calls: { id?: string; type?: string; function: { name: unknown; arguments: string } }[] = [];
  const decoder = new TextDecoder();
  let buf = '';
  const handle = (data: string) => {
    if (data === '[DONE]') {
      sawDone = true;
      return;
    }
    let j: { choices?: { delta?: ChoiceMessage & { tool_calls?: (OpenAiToolCall & { index?: number })[] }; finish_reason?: string | null }[]; usage?: Usage; error?: { message?: string } };
    try {
      j = JSON.parse(data) as typeof j;
    } catch {
      throw new ModelError(`unreadable stream event: ${data.slice(0, 200)}`, 'protocol');
    }
    if (j.error) throw new ModelError(`the server reported an error mid-stream: ${j.error.message ?? JSON.stringify(j.error)}`, 'http', 500);
    if (j.usage) usage = j.usage;
    const c = j.choices?.[0];
    if (!c) return;
    const d = c.delta ?? {};
    if (d.content) text += d.content;
    if (d.reasoning_content) reasoning = (reasoning ?? '') + d.reasoning_content;
    for (const t of d.tool_calls ?? []) {
      const i = t.index ?? calls.length;
      const cur = (calls[i] ??= { function: { name: '', arguments: '' } });
      if (t.id) cur.id = t.id;
      if (t.type) cur.type = t.type;
      // A streamed name comes in string pieces; a name that is another JSON value (true, 3) comes whole
      // and is kept as that value, as the unstreamed answer keeps it. null is a delta with no name.
      const piece = t.function?.name;
      if (typeof piece === 'string' && typeof cur.function.name === 'string') cur.function.name += piece;
      else if (piece !== undefined && piece !== null && cur.function.name === '') cur.function.name = piece;
      if (typeof t.function?.arguments === 'string') cur.function.arguments += t.function.arguments;
    }
    if (c.finish_reason) finishReason = c.finish_reason;
  };
  const reader = res.body!.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '');
      buf = buf.slice(nl + 1);
      if (line.startsWith('data:')) handle(line.slice(5).trim());
    }
  }
  if (buf.startsWith('data:')) handle(buf.slice(5).trim());
  // A stream cut before [DONE] and before any finish_reason is a dropped answer, not a short one.
  if (!sawDone && finishReason === null) throw new ModelError('the stream ended before the answer was complete', 'network');
  return { text, reasoning, toolCalls: calls.filter(Boolean), finishReason, usage };
}
