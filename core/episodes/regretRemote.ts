/**
 * A regret episode played on a cluster (native/dispatch/shard_regret.py) and played back here.
 * The node makes the harness calls a local run would make and sends each request with its reply;
 * this side runs the local player (scriptedPlayer, playPlan, runJobs) against those replies, so
 * the return, endedBy, the failure messages and the recorded episode come from the very code a
 * local run uses. A call the node did not make the way this side asks for it answers as a protocol
 * failure: the episode is recorded as failed with what went another way, never with a number.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Policy } from '../api/calls/episodes';
import type { SweepWork } from '../sweeps/executor';
import { registerSweepKind } from '../sweeps/kinds';
import type { RemoteResult } from '../sweeps/remote';
import type { SweepItem } from '../sweeps/sweepStore';
import { failure, type HarnessReply } from '../runtime/types';
import { ChatClient, httpError, ModelError, readJson, type ChatMessage, type Completion, type EndpointConfig } from '../models/client';
import type { HarnessRequest } from '../runtime/protocol';
import type { JobResult } from './regret';
import { feedFromSource, randomSource, scriptSource, type ActionSource } from './policy';
import type { PlanItem, ToolCallItem } from './rollout';
import type { RuntimePort } from './session';

/**
 * A regret sweep as a kind of sweep (core/sweeps): each item one episode (version, arm, seed), its
 * result the episode's outcome, failing when the episode failed (no return). The design round's
 * plays on a cluster are regret sweeps too (core/design/plays.ts).
 */
export const regretSweeps = registerSweepKind({
  kind: 'regret',
  label: 'regret sweep',
  article: 'a regret',
  failingSql: "json_extract(result, '$.failed') = 1",
});

/** One harness call as the node made it: the request (without its wire fields) and the reply. */
export type RecordedCall = [Record<string, unknown>, HarnessReply];

/** One model request as the node sent it (the body, byte for byte) with the server's final answer. */
export interface RecordedExchange {
  body: string;
  attempts: number;
  latencyMs: number;
  response?: string;
  error?: { kind: 'http' | 'timeout' | 'network'; status: number | null; text: string };
}

/** A regret item's outcome: the node's calls (and model requests) to play back, or an episode this machine played. */
export type RegretOutcome = { kind: 'calls'; calls: RecordedCall[]; model: RecordedExchange[] | null; node: string | null } | { kind: 'played'; result: JobResult };

/** A served model as a sweep plays it: play's options, without the key (only its variable's name). */
export type SweepModel = Omit<EndpointConfig, 'apiKey' | 'via' | 'concurrency' | 'stream'> & { apiKeyEnv?: string | undefined };

/** What the node is told of the run (config.options). */
export interface RegretRemoteOptions {
  policy: Policy;
  budget: number;
  stepTimeoutSec: number;
  /** A served model plays instead of the policy (cognitive games only on a node). */
  model?: SweepModel | undefined;
  /**
   * A served model's episodes keep each step's game state, as the app's play of a few seeds of one
   * game does (a design round's game): the node asks for the state after the reset and with each step.
   */
  states?: boolean | undefined;
}

/**
 * The client a sweep's model episodes use here (the real one locally; its body() for playback).
 * The key is the caller's (the app's secret store), else this process's variable the sweep names.
 */
export function sweepClient(m: SweepModel, concurrency = 4, key?: string | null): ChatClient {
  const apiKey = key !== undefined ? key : m.apiKeyEnv ? (process.env[m.apiKeyEnv] ?? null) : null;
  return new ChatClient({ ...m, apiKey, concurrency, stream: false });
}

/**
 * The model as a played-back episode sees it: each request this workbench's agent makes must be
 * the node's, byte for byte; it then gets the server's answer the node got.
 */
export class PlaybackChatClient {
  private next = 0;

  constructor(
    private readonly client: ChatClient,
    private readonly exchanges: readonly RecordedExchange[],
    /** The variable the node read the key from (none: the sweep names no key), said when the server refused it. */
    private readonly keyEnv?: string | undefined,
  ) {}

  async complete(messages: ChatMessage[], opts: { tools?: unknown[]; signal?: AbortSignal } = {}): Promise<Completion> {
    const body = JSON.stringify(this.client.body(messages, opts.tools));
    const x = this.exchanges[this.next];
    const n = ++this.next;
    if (!x) throw new ModelError(`the episode on the node went another way at model request ${n}: it made none where this workbench makes one`, 'protocol');
    if (x.body !== body) throw new ModelError(`the episode on the node went another way at model request ${n}: it sent ${x.body.length > 300 ? `${x.body.slice(-300)}` : x.body} where this workbench sends ${body.length > 300 ? body.slice(-300) : body}`, 'protocol');
    if (x.error?.kind === 'http' && (x.error.status === 401 || x.error.status === 403)) {
      // Where the key came from is on the node, out of sight here: say where it was looked for.
      const e = httpError(x.error.status, x.error.text);
      e.message += this.keyEnv ? ` (the node sends the key from its own variable ${this.keyEnv}; is it set there?)` : ' (the sweep names no API key)';
      throw e;
    }
    if (x.error) throw x.error.kind === 'http' && x.error.status !== null ? httpError(x.error.status, x.error.text) : new ModelError(x.error.kind === 'timeout' ? `no answer within ${Math.round(this.client.cfg.turnTimeoutMs / 1000)} s` : x.error.text, x.error.kind === 'http' ? 'network' : x.error.kind);
    return { ...readJson(x.response ?? ''), latencyMs: x.latencyMs, attempts: x.attempts };
  }
}

type RemotePlanItem = { kind: 'step'; action: string } | { kind: 'tool'; calls: ToolCallItem[] };

/**
 * A script's or a random policy's items for one episode, for a plain game and for a tool-use game
 * (the node knows which only once the game is loaded); null for solution(), whose actions the node
 * asks of the game. One more item than the budget: the loop ends on the budget, not on the plan.
 */
export function remotePlans(policy: Policy, seed: number, budget: number): { plain: RemotePlanItem[]; tool: RemotePlanItem[] } | null {
  if (policy.kind === 'solution') return null;
  const source = (toolUse: boolean): ActionSource => (policy.kind === 'script' ? scriptSource(policy.actions, policy.extract, toolUse) : randomSource(policy.seed ?? seed, policy.lo, policy.hi));
  const items = (toolUse: boolean): RemotePlanItem[] => {
    const feed = feedFromSource(source(toolUse), toolUse);
    const out: RemotePlanItem[] = [];
    for (let i = 0; i <= budget; i++) {
      const it = feed.next(null) as PlanItem | null;
      if (!it) break;
      if (it.kind === 'step') out.push({ kind: 'step', action: it.action });
      else if (it.kind === 'tool') out.push({ kind: 'tool', calls: it.calls.map((c) => ({ name: c.name, arguments: c.arguments, ...(c.block !== undefined ? { block: c.block } : {}) })) });
    }
    return out;
  };
  return { plain: items(false), tool: items(true) };
}

/** A regret sweep's work on a cluster: shard_regret.py plays, this side plays the calls back. */
export function regretWork(options: RegretRemoteOptions): SweepWork<RegretOutcome> {
  return {
    kind: regretSweeps.kind,
    runner: 'shard_regret',
    options,
    remoteItem: (it: SweepItem, source: string) => ({
      key: it.key,
      source,
      // null: the node resets with no seed, as SPADE resets its unhinted plays (orchestrator.py:335).
      seed: it.seed === null ? null : (it.seed ?? 0),
      hintText: it.arm === 'hint' ? it.hint : null,
      plans: options.model ? null : remotePlans(options.policy, it.seed ?? it.slot ?? 0, options.budget),
    }),
    fromRemote: (r: RemoteResult) => (Array.isArray(r.calls) ? { kind: 'calls', calls: r.calls as RecordedCall[], model: Array.isArray(r.model) ? (r.model as RecordedExchange[]) : null, node: r.node ?? null } : null),
  };
}

const WIRE = new Set(['id', 'session', 'timeoutSec']);

function bare(req: unknown): Record<string, unknown> {
  const o = JSON.parse(JSON.stringify(req)) as Record<string, unknown>;
  for (const k of WIRE) delete o[k];
  return o;
}

function brief(req: Record<string, unknown>): string {
  const s = JSON.stringify(req);
  return s.length > 200 ? `${s.slice(0, 200)}...` : s;
}

/**
 * The runtime a played-back episode sees: it opens with the node's load reply and answers each
 * call with the node's reply to the same call. Past the node's last call the session is gone, as
 * it is locally after the session's process died.
 */
export class PlaybackRuntime implements RuntimePort {
  private next = 0;

  constructor(private readonly calls: readonly RecordedCall[]) {}

  /** Each open takes the node's next load (a second one where SPADE loads an unhinted game again). */
  async open(): ReturnType<RuntimePort['open']> {
    const at = this.calls[this.next];
    if (this.next > 0 && at?.[0].cmd !== 'load') {
      const message = `the episode on the node went another way at call ${this.next}: it made ${at ? brief(bare(at[0])) : 'no call'} where this workbench loads the game again`;
      return { ok: false, runtime: 'cpython', error: { kind: 'protocol', type: 'protocol', message } };
    }
    this.next++;
    const reply = at?.[1] ?? failure('crashed', 'the node sent no load reply');
    if (!reply.ok) return { ok: false, runtime: 'cpython', error: reply.error };
    return { ok: true, sessionId: `playback-${this.next}`, runtime: 'cpython', load: reply.result as { className: string; maxTurns: number | null; toolUse: boolean; hasSolution: boolean; mayHaveTools?: boolean } };
  }

  async call(_sessionId: string, req: HarnessRequest): Promise<HarnessReply> {
    const at = this.calls[this.next];
    if (!at) return failure('unknown_session', 'this session is gone (closed, or its Python process ended)');
    const asked = bare(req);
    if (!isDeepStrictEqual(asked, bare(at[0]))) {
      return failure('protocol', `the episode on the node went another way at call ${this.next}: it made ${brief(bare(at[0]))} where this workbench makes ${brief(asked)}`);
    }
    this.next++;
    return at[1];
  }

  async close(): Promise<void> {}
}
