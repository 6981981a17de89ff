/**
 * The embedded model behind the same interface as a served one: `localFetch(model)` is a `fetch`
 * that answers POST …/chat/completions the way an OpenAI-compatible server does, from a GGUF model
 * run by node-llama-cpp in a worker thread (core/models/localWorker.ts). ChatClient takes it like
 * the SSH tunnel's fetch, so play, regret runs and design reach a local model through the very
 * code that reaches SGLang or vLLM: "local" is one more endpoint, not a second agent.
 *
 * One worker per model file and settings, started on first use and kept (loading takes a second or
 * two); it holds the process open only while a request is in flight.
 */
import { availableParallelism } from 'node:os';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { errorMessage } from '../api/errorMessage';
import { LOCAL_SAMPLING, resolveLocalModel } from './localModel';
import { DomainError } from '../errors';

export interface LocalEngineOptions {
  modelPath: string;
  /** CPU threads for generation; default the machine's cores (more than that only spins). */
  threads: number;
  /** The most context the model gets (capped by what the model was trained on). */
  contextSize: number;
  batchSize: number;
  /** Use a GPU when node-llama-cpp finds one; off by default so that answers depend on nothing but the CPU build. */
  gpu: boolean;
}

export interface WorkerRequest {
  id: number;
  messages: { role: string; content: string | null }[];
  maxTokens: number;
  temperature: number;
  topP: number;
  topK: number | null;
  seed: number | null;
}

export interface LocalEngineInfo {
  modelPath: string;
  threads: number;
  contextSize: number;
  batchSize: number;
  gpu: string | null;
  build: string;
  chatWrapper: string;
  loadMs: number;
}

export interface LocalCompletion {
  text: string;
  finishReason: 'stop' | 'length';
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  generationMs: number;
}

export type WorkerReply =
  | { type: 'ready'; info: LocalEngineInfo }
  | { type: 'failed'; message: string }
  | ({ type: 'done'; id: number } & LocalCompletion)
  | { type: 'error'; id: number; message: string };

/** The bundled worker: beside this bundle, or the built one when this runs from source (tests). */
export function localWorkerFile(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const f of [join(here, 'model-worker.js'), join(here, '..', 'node', 'model-worker.js'), join(here, '..', '..', 'dist', 'node', 'model-worker.js')]) {
    if (existsSync(f)) return f;
  }
  throw new DomainError('unavailable', 'The local model worker is not built (dist/node/model-worker.js): run npm run build');
}

export function defaultLocalOptions(modelPath: string, env: NodeJS.ProcessEnv = process.env, cores = availableParallelism()): LocalEngineOptions {
  const threads = Number(env.SPADE_LOCAL_THREADS);
  // Never more threads than the machine has cores, whatever was asked: llama.cpp's threads spin
  // waiting for each other, so one thread too many stalls every token (localWorker.ts).
  const most = Math.max(1, cores);
  return {
    modelPath,
    threads: Number.isInteger(threads) && threads > 0 ? Math.min(threads, most) : most,
    contextSize: 4096,
    batchSize: 512,
    gpu: env.SPADE_LOCAL_GPU === '1',
  };
}

export class LocalEngine {
  private static readonly engines = new Map<string, LocalEngine>();

  /** The shared engine for these settings (one worker per model file and settings). */
  static for(opts: LocalEngineOptions): LocalEngine {
    const key = JSON.stringify(opts);
    let e = LocalEngine.engines.get(key);
    if (!e || e.closed) {
      e = new LocalEngine(opts);
      LocalEngine.engines.set(key, e);
    }
    return e;
  }

  /** Ends every engine's worker (app shutdown, tests). */
  static async closeAll(): Promise<void> {
    const all = [...LocalEngine.engines.values()];
    LocalEngine.engines.clear();
    await Promise.all(all.map((e) => e.close()));
  }

  /** Generations asked of every engine in this process now, and the most ever at once (the CLI and tests read it). */
  private static inFlight = 0;
  static peakInFlight = 0;

  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (c: LocalCompletion) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private closed = false;
  private failure: string | null = null;
  readonly ready: Promise<LocalEngineInfo>;

  private constructor(readonly opts: LocalEngineOptions) {
    this.worker = new Worker(localWorkerFile(), { workerData: opts });
    this.worker.unref();
    this.ready = new Promise<LocalEngineInfo>((resolve, reject) => {
      this.worker.on('message', (m: WorkerReply) => {
        if (m.type === 'ready') resolve(m.info);
        else if (m.type === 'failed') {
          this.failure = m.message;
          reject(new DomainError('unavailable', `The local model could not be loaded from ${opts.modelPath}: ${m.message}`));
          this.failAll(this.failure);
        } else {
          const p = this.pending.get(m.id);
          if (!p) return;
          this.pending.delete(m.id);
          if (this.pending.size === 0) this.worker.unref();
          if (m.type === 'done') p.resolve({ text: m.text, finishReason: m.finishReason, usage: m.usage, generationMs: m.generationMs });
          else p.reject(new DomainError('unavailable', m.message));
        }
      });
      const died = (why: string) => {
        this.closed = true;
        this.failure ??= why;
        reject(new DomainError('unavailable', `The local model's worker stopped: ${why}`));
        this.failAll(`the local model's worker stopped: ${why}`);
      };
      this.worker.on('error', (e) => died(e.message));
      this.worker.on('exit', (code) => died(`exit code ${code}`));
    });
    // Nobody may be waiting yet; the rejection is seen by whoever asks for a completion.
    this.ready.catch(() => {});
  }

  private failAll(why: string): void {
    for (const p of this.pending.values()) p.reject(new DomainError('unavailable', why));
    this.pending.clear();
  }

  async complete(req: Omit<WorkerRequest, 'id'>, signal?: AbortSignal): Promise<LocalCompletion> {
    await this.ready;
    if (this.closed || this.failure) throw new DomainError('unavailable', this.failure ?? 'the local model is closed');
    const id = this.nextId++;
    return new Promise<LocalCompletion>((resolve, reject) => {
      const onAbort = () => this.worker.postMessage({ type: 'abort', id });
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = <T>(f: (x: T) => void) => (x: T) => {
        signal?.removeEventListener('abort', onAbort);
        f(x);
      };
      LocalEngine.inFlight++;
      LocalEngine.peakInFlight = Math.max(LocalEngine.peakInFlight, LocalEngine.inFlight);
      const settle = <T>(f: (x: T) => void) =>
        done((x: T) => {
          LocalEngine.inFlight--;
          f(x);
        });
      this.pending.set(id, { resolve: settle(resolve), reject: settle(reject) });
      this.worker.ref();
      this.worker.postMessage({ type: 'complete', req: { ...req, id } });
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.failAll('the local model was closed');
    await this.worker.terminate();
  }
}

function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

/**
 * A fetch that serves chat completions from the embedded model named `model` (a name in the models
 * folder or a .gguf path). Request bodies are the OpenAI ones ChatClient builds; a missing model
 * file is a 404 (not retried), a failed generation a 500, both with the reason.
 */
export function localFetch(model: string, opts: Partial<Omit<LocalEngineOptions, 'modelPath'>> = {}): typeof fetch {
  return (async (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    let modelPath: string;
    try {
      modelPath = resolveLocalModel(model);
    } catch (e) {
      return jsonResponse(404, { error: { message: errorMessage(e) } });
    }
    let body: { messages?: { role: string; content: string | null }[]; max_tokens?: number; temperature?: number; top_p?: number; top_k?: number | null; seed?: number };
    try {
      body = JSON.parse(String(init?.body ?? '{}')) as typeof body;
    } catch {
      return jsonResponse(400, { error: { message: 'the request body is not JSON' } });
    }
    if (!Array.isArray(body.messages) || body.messages.length === 0) return jsonResponse(400, { error: { message: 'messages is required' } });
    const engine = LocalEngine.for({ ...defaultLocalOptions(modelPath), ...opts });
    try {
      await engine.ready;
    } catch (e) {
      // A model that does not load will not load on a retry either.
      return jsonResponse(422, { error: { message: errorMessage(e) } });
    }
    try {
      const c = await engine.complete(
        {
          messages: body.messages,
          // No answer can be longer than the model's context; what is not said is the local default.
          maxTokens: Math.min(body.max_tokens ?? LOCAL_SAMPLING.maxTokens, engine.opts.contextSize),
          temperature: body.temperature ?? 1,
          topP: body.top_p ?? 1,
          topK: body.top_k ?? null,
          seed: body.seed ?? null,
        },
        init?.signal ?? undefined,
      );
      return jsonResponse(200, {
        object: 'chat.completion',
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: c.text }, finish_reason: c.finishReason }],
        usage: c.usage,
      });
    } catch (e) {
      if (init?.signal?.aborted) throw e;
      return jsonResponse(500, { error: { message: errorMessage(e) } });
    }
  }) as typeof fetch;
}
