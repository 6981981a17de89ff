/**
 * The embedded model's worker thread: node-llama-cpp with one GGUF model, answering chat requests
 * one at a time (a 135M model on two cores gains nothing from interleaving them; queued requests
 * wait in order). Started by core/models/localEngine.ts; speaks only through its parent port.
 *
 * Threads: llama.cpp's threads wait for each other at every layer by spinning, so more threads
 * than free cores does not just fail to help, it stalls every token (node-llama-cpp's default is
 * max(cores, 4)). The thread count is the caller's, default the machine's cores, capped at them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { errorMessage } from '../api/errors';
import type { WorkerRequest, WorkerReply, LocalEngineOptions } from './localEngine';

// not-user-facing: a guard against loading this file outside a worker, which only a programming mistake does.
if (!parentPort) throw new Error('localWorker runs only as a worker thread');
const port = parentPort;
const opts = workerData as LocalEngineOptions;

type Llama = import('node-llama-cpp').Llama;
type LlamaChat = import('node-llama-cpp').LlamaChat;
type ChatHistoryItem = import('node-llama-cpp').ChatHistoryItem;

let chat: LlamaChat | null = null;
let tokenize: ((text: string) => number) | null = null;
const aborts = new Map<number, AbortController>();
let queue: Promise<void> = Promise.resolve();

function send(m: WorkerReply): void {
  port.postMessage(m);
}

async function load(): Promise<void> {
  const t0 = performance.now();
  const nlc = await import('node-llama-cpp');
  const llama: Llama = await nlc.getLlama({ gpu: opts.gpu ? 'auto' : false, build: 'never', maxThreads: opts.threads, logLevel: nlc.LlamaLogLevel.error, progressLogs: false });
  const model = await llama.loadModel({ modelPath: opts.modelPath });
  const context = await model.createContext({ contextSize: { max: opts.contextSize }, threads: { ideal: opts.threads, min: opts.threads }, batchSize: opts.batchSize });
  chat = new nlc.LlamaChat({ contextSequence: context.getSequence() });
  const c = chat;
  tokenize = (text) => model.tokenize(text, false).length;
  send({
    type: 'ready',
    info: {
      modelPath: opts.modelPath,
      threads: context.currentThreads,
      contextSize: context.contextSize,
      batchSize: context.batchSize,
      gpu: llama.gpu === false ? null : String(llama.gpu),
      build: llama.buildType,
      chatWrapper: c.chatWrapper.wrapperName,
      loadMs: performance.now() - t0,
    },
  });
}

function history(messages: WorkerRequest['messages']): ChatHistoryItem[] {
  const out: ChatHistoryItem[] = [];
  for (const m of messages) {
    const text = m.content ?? '';
    if (m.role === 'system') out.push({ type: 'system', text });
    else if (m.role === 'assistant') out.push({ type: 'model', response: [text] });
    // A tool's answer reaches a plain chat model as the next user turn, with its label.
    else if (m.role === 'tool') out.push({ type: 'user', text: `Tool result:\n${text}` });
    else out.push({ type: 'user', text });
  }
  // generateResponse continues the last model item: an empty one asks for a new answer.
  out.push({ type: 'model', response: [] });
  return out;
}

async function complete(req: WorkerRequest, ac: AbortController): Promise<void> {
  try {
    // not-user-facing: caught below and posted as an error message, which the engine answers as HTTP 500 and the client turns into a ModelError.
    if (!chat || !tokenize) throw new Error('the local model is not loaded');
    if (ac.signal.aborted) throw new Error('cancelled'); // not-user-facing: as above
    const h = history(req.messages);
    const promptText = chat.chatWrapper.generateContextState({ chatHistory: h }).contextText.toString();
    let completionTokens = 0;
    const t0 = performance.now();
    const r = await chat.generateResponse(h, {
      maxTokens: req.maxTokens,
      temperature: req.temperature,
      topP: req.topP,
      ...(req.topK !== null && req.topK > 0 ? { topK: req.topK } : {}),
      ...(req.seed !== null ? { seed: req.seed } : {}),
      signal: ac.signal,
      stopOnAbortSignal: false,
      onToken: (tokens) => {
        completionTokens += tokens.length;
      },
    });
    const stop = r.metadata.stopReason;
    const promptTokens = tokenize(promptText);
    send({
      type: 'done',
      id: req.id,
      text: r.response,
      finishReason: stop === 'maxTokens' ? 'length' : 'stop',
      usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
      generationMs: performance.now() - t0,
    });
  } catch (e) {
    send({ type: 'error', id: req.id, message: ac.signal.aborted ? 'cancelled' : errorMessage(e) });
  } finally {
    aborts.delete(req.id);
  }
}

port.on('message', (m: { type: 'complete'; req: WorkerRequest } | { type: 'abort'; id: number }) => {
  if (m.type === 'abort') {
    aborts.get(m.id)?.abort();
    return;
  }
  // Registered now, so that an abort that arrives while the request waits in the queue is kept.
  const ac = new AbortController();
  aborts.set(m.req.id, ac);
  queue = queue.then(() => complete(m.req, ac));
});

load().catch((e: unknown) => send({ type: 'failed', message: errorMessage(e) }));
