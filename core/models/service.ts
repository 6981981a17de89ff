/**
 * Model policies as the app offers them: an endpoint (its API key named, held by the session's
 * secret store), runs over environments and seeds through the episodes' regret runner, results
 * with SPADE's arithmetic, per skill and beside the regret a training run recorded.
 */
import { errorMessage } from '../api/errors';
import { invalidInput } from '../errors';
import type { Endpoint, ModelRun, ModelTurn } from '../api/calls/models';
import type { EpisodeService } from '../episodes/service';
import { ChatClient, type EndpointConfig } from './client';
import { modelPlayer, modelTurn } from './agent';
import { tunnelFetch, type Forwarder } from './tunnel';

export interface ModelDeps {
  episodes: EpisodeService;
  secret(name: string): string | undefined;
  /** Skill and recorded regret of a library version, when known. */
  envInfo(hash: string): { skill: string | null; recordedRegret: number | null };
  /** A job's SSH connection, for endpoints reached through it (throws when the job has none). */
  tunnel?(jobId: string): Forwarder;
}

export class ModelService {
  constructor(private readonly d: ModelDeps) {}

  config(e: Endpoint): EndpointConfig {
    let apiKey: string | null = null;
    if (e.apiKeySecret) {
      apiKey = this.d.secret(e.apiKeySecret) ?? null;
      if (apiKey === null) throw invalidInput(`No secret named ${e.apiKeySecret} is held in this session: add it first (it is kept sealed, never written in plain text)`);
    }
    return { baseUrl: e.baseUrl, model: e.model, apiKey, temperature: e.temperature, topP: e.topP, topK: e.topK, maxTokens: e.maxTokens, thinking: e.thinking, turnTimeoutMs: e.turnTimeoutSec * 1000, retries: e.retries, concurrency: e.concurrency, stream: e.stream, via: e.via };
  }

  /** A client for the endpoint: directly, or through the named job's SSH connection. */
  client(cfg: EndpointConfig): ChatClient {
    if (!cfg.via) return new ChatClient(cfg);
    if (!this.d.tunnel) throw invalidInput('Endpoints through a job are not available here');
    return new ChatClient(cfg, { fetch: tunnelFetch(this.d.tunnel(cfg.via.jobId)) });
  }

  async ping(e: Endpoint): Promise<{ ok: boolean; latencyMs: number; text: string; error: string | null }> {
    const client = this.client({ ...this.config(e), maxTokens: 16, retries: 0 });
    const t0 = performance.now();
    try {
      const c = await client.complete([{ role: 'user', content: 'Say OK.' }]);
      return { ok: true, latencyMs: c.latencyMs, text: c.text, error: null };
    } catch (err) {
      return { ok: false, latencyMs: performance.now() - t0, text: '', error: errorMessage(err) };
    }
  }

  /** One model turn in a live episode (opened with episodes.open); the transcript lives in the episode's meta. */
  async turn(id: number, e: Endpoint) {
    const cfg = this.config(e);
    const client = this.client(cfg);
    return this.d.episodes.policyTurn(id, async (session, steps, m) => {
      const agent = (m.meta.agent ?? undefined) as Parameters<typeof modelTurn>[2];
      const r = await modelTurn(session, steps, agent, { client, hintText: m.hintEnabled ? m.hintText : null, budget: m.maxTurns, thinking: cfg.thinking === true });
      return { steps: r.steps, meta: { agent: r.agent, policyKind: 'llm', model: cfg.model, endpoint: cfg.baseUrl, ...(cfg.via ? { via: cfg.via } : {}) }, ended: r.ended };
    });
  }

  async play(input: { hashes: string[]; endpoint: Endpoint; seeds: number; seedStart: number; arms: ('hint' | 'nohint')[]; hintText?: string | undefined; maxTurns?: number | undefined; runtime?: 'pyodide' | 'cpython' | undefined; runId?: string | undefined }): Promise<ModelRun> {
    if (input.hintText !== undefined && input.hashes.length > 1) throw invalidInput('hintText overrides the hint of one environment; a selection plays each with its own');
    const cfg = this.config(input.endpoint);
    const player = modelPlayer(this.client(cfg), {
      thinking: cfg.thinking === true,
      policy: { kind: 'llm', endpoint: cfg.baseUrl, ...(cfg.via ? { via: cfg.via } : {}), model: cfg.model, temperature: cfg.temperature, topP: cfg.topP, topK: cfg.topK, maxTokens: cfg.maxTokens, thinking: cfg.thinking },
      states: input.hashes.length === 1 && input.seeds <= 4,
    });
    const r = await this.d.episodes.regretMany({
      hashes: input.hashes,
      seeds: input.seeds,
      seedStart: input.seedStart,
      arms: input.arms,
      player,
      concurrency: cfg.concurrency,
      maxTurns: input.maxTurns,
      runtime: input.runtime,
      runId: input.runId,
      ...(input.hintText !== undefined ? { hintFor: () => input.hintText! } : {}),
    });
    const envs = r.envs.map((e) => {
      const info = this.d.envInfo(e.hash);
      return { hash: e.hash, name: e.name, skill: info.skill, rHint: e.rHint, rNoHint: e.rNoHint, regret: e.regret, hintFailed: e.hintFailed, recordedRegret: info.recordedRegret, hintReturns: e.withHint.returns, noHintReturns: e.withoutHint.returns };
    });
    const skills = new Map<string, typeof envs>();
    for (const e of envs) {
      const k = e.skill ?? '(none)';
      skills.set(k, [...(skills.get(k) ?? []), e]);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const episodes = r.episodes.map((x) => {
      const meta = this.d.episodes.meta(x.episodeId).meta as { agent?: { turns?: ModelTurn[] } };
      return { episodeId: x.episodeId, hash: x.hash, seed: x.seed, hint: x.hint, return: x.ret, endedBy: x.endedBy, turns: meta.agent?.turns ?? [] };
    });
    return {
      runId: r.runId,
      cancelled: r.cancelled,
      envs,
      episodes,
      bySkill: [...skills].map(([skill, es]) => ({ skill, envs: es.length, meanRegret: mean(es.map((e) => e.regret)), meanRHint: mean(es.map((e) => e.rHint)), meanRNoHint: mean(es.map((e) => e.rNoHint)) })),
    };
  }
}
