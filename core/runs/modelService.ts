/**
 * Model policies as the app offers them: an endpoint (its API key named, held by the session's
 * secret store), runs over environments and seeds through the episodes' regret runner, results
 * with SPADE's arithmetic, per skill and beside the regret a training run recorded.
 */
import { errorMessage } from '../api/errors';
import type { RuntimeKind } from '../api/schemas';
import { invalidInput } from '../errors';
import { endpointSchema, type Endpoint, type ModelRun, type ModelTurn } from '../api/calls/models';
import type { RunService } from './service';
import type { EpisodeService } from '../episodes/service';
import { ChatClient, type EndpointConfig } from '../models/client';
import { modelPlayer, modelTurn } from '../episodes/agent';
import { tunnelFetch, type Forwarder } from '../models/tunnel';
import { spadeGamePath, spadeOptions, type RegretEstimator, type SpadeEstimatorOptions } from '../episodes/estimator';

export interface ModelDeps {
  episodes: EpisodeService;
  secret(name: string): string | undefined;
  /** Skill and the regret and win rate a training run recorded (imported) for a library version, when known. */
  envInfo(hash: string): { skill: string | null; recordedRegret: number | null; recordedWinRate: number | null };
  /** Every model run is a record (core/runs). */
  runs: RunService;
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
  async turn(id: number, e: Endpoint, requestId?: string) {
    const cfg = this.config(e);
    const client = this.client(cfg);
    return this.d.episodes.policyTurn(id, async (session, steps, m, signal) => {
      const agent = (m.meta.agent ?? undefined) as Parameters<typeof modelTurn>[2];
      const r = await modelTurn(session, steps, agent, { client, hintText: m.hintEnabled ? m.hintText : null, budget: m.maxTurns, thinking: cfg.thinking === true, ...(signal ? { signal } : {}) });
      return { steps: r.steps, meta: { agent: r.agent, policyKind: 'llm', model: cfg.model, endpoint: cfg.baseUrl, ...(cfg.via ? { via: cfg.via } : {}) }, ended: r.ended };
    }, requestId);
  }

  async play(input: {
    hashes: string[];
    endpoint: Endpoint;
    seeds: number;
    seedStart: number;
    arms: ('hint' | 'nohint')[];
    hintText?: string | undefined;
    maxTurns?: number | undefined;
    runtime?: RuntimeKind | undefined;
    runId?: string | undefined;
    selection?: string | undefined;
    estimator?: RegretEstimator | undefined;
    spade?: Partial<SpadeEstimatorOptions> | undefined;
    /** Ends the run as Cancel does (a job's Stop, `train`'s evaluation): no new episode starts, model turns in flight are aborted. */
    signal?: AbortSignal | undefined;
  }): Promise<ModelRun> {
    if (input.hintText !== undefined && input.hashes.length > 1) throw invalidInput('hintText overrides the hint of one environment; a selection plays each with its own');
    const cfg = this.config(input.endpoint);
    // Unknown versions are refused before a run record exists for them.
    for (const h of input.hashes) this.d.episodes.ctx.env(h);
    const policy = { kind: 'llm', endpoint: cfg.baseUrl, ...(cfg.via ? { via: cfg.via } : {}), model: cfg.model, temperature: cfg.temperature, topP: cfg.topP, topK: cfg.topK, maxTokens: cfg.maxTokens, thinking: cfg.thinking };
    const estimator: RegretEstimator = input.estimator ?? 'spade';
    const spade = estimator === 'spade' ? spadeOptions(input.spade) : null;
    const player = modelPlayer(this.client(cfg), { thinking: cfg.thinking === true, ...(spade?.thinking ? { thinkingByArm: spade.thinking } : {}), policy, states: input.hashes.length === 1 && (spade ? spade.hintPlays + spade.noHintPlays <= 32 : input.seeds <= 4) });
    const runId = input.runId ?? `run-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    const budget = input.maxTurns ?? this.d.episodes.ctx.d.defaults().maxTurns;
    const recorded = this.d.runs.begin({
      id: runId,
      model: cfg.model,
      endpoint: cfg.baseUrl,
      // The endpoint as given (a key only by its secret's name), so a resume plays with the same settings.
      config: {
        endpoint: { ...input.endpoint },
        sampling: { temperature: cfg.temperature, topP: cfg.topP, topK: cfg.topK, maxTokens: cfg.maxTokens, thinking: cfg.thinking },
        hintText: input.hintText ?? null,
        ...(spade ? { spade: { ...spade, gamePaths: Object.fromEntries(input.hashes.map((h) => [h, spadeGamePath(this.d.episodes.ctx.env(h), h)])) } } : {}),
      },
      hintSource: input.hintText !== undefined ? 'given' : 'library',
      seeds: input.seeds,
      seedStart: input.seedStart,
      arms: input.arms,
      maxTurns: budget,
      runtime: input.runtime ?? 'auto',
      selection: input.selection ?? null,
      hashes: input.hashes,
      estimator,
    });
    let status: 'done' | 'cancelled' | 'failed' = 'failed';
    let error: string | null = null;
    let cancelled = false;
    const stop = () => void this.d.episodes.regretCancel(runId);
    try {
      const playing = this.d.episodes.regretMany({
        hashes: input.hashes,
        estimator,
        ...(spade ? { spade } : {}),
        seeds: input.seeds,
        seedStart: input.seedStart,
        arms: input.arms,
        player,
        concurrency: cfg.concurrency,
        maxTurns: budget,
        runtime: input.runtime,
        runId,
        recorded,
        ...(input.hintText !== undefined ? { hintFor: () => input.hintText! } : {}),
      });
      // regretMany registers the run before its first await, so the cancel finds it.
      input.signal?.addEventListener('abort', stop, { once: true });
      if (input.signal?.aborted) stop();
      const r = await playing;
      cancelled = r.cancelled;
      status = r.cancelled ? 'cancelled' : 'done';
    } catch (e) {
      error = errorMessage(e);
      throw e;
    } finally {
      input.signal?.removeEventListener('abort', stop);
      this.d.runs.end(runId, status, error);
    }
    return this.result(runId, cancelled);
  }

  /** Plays what a run has not yet played (cancelled, interrupted, or its failed episodes), with its own settings. */
  async resume(runId: string): Promise<ModelRun> {
    const run = this.d.runs.store.get(runId);
    if (!run) throw invalidInput(`No run ${runId}`);
    if (this.d.runs.isLive(runId)) throw invalidInput(`Run ${runId} is running`);
    // The endpoint as the run kept it, its sampling applied; keys this schema does not know (a CLI
    // run's --api-key-env) are left out: a key comes from this session's secrets or none.
    const known = Object.keys(endpointSchema.shape);
    const kept = Object.fromEntries(Object.entries({ ...run.config.endpoint, ...run.config.sampling }).filter(([k, v]) => known.includes(k) && v !== undefined));
    const parsed = endpointSchema.safeParse(kept);
    if (!parsed.success) throw invalidInput(`Run ${runId} cannot be resumed: its endpoint settings no longer parse (${parsed.error.issues[0]?.message ?? 'invalid'})`);
    const endpoint = parsed.data;
    return this.play({
      hashes: run.hashes,
      endpoint,
      seeds: run.seeds,
      seedStart: run.seedStart,
      arms: run.arms,
      ...(run.config.hintText !== null && run.config.hintText !== undefined ? { hintText: run.config.hintText } : {}),
      maxTurns: run.maxTurns,
      runtime: run.runtime === 'pyodide' || run.runtime === 'cpython' ? run.runtime : undefined,
      runId,
      ...(run.selection !== null ? { selection: run.selection } : {}),
      // A resume measures as the run began: its estimator and SPADE's settings as kept.
      estimator: run.estimator,
      ...(run.config.spade ? { spade: { hintPlays: run.config.spade.hintPlays, noHintPlays: run.config.spade.noHintPlays, hashSeed: run.config.spade.hashSeed, thinking: run.config.spade.thinking } } : {}),
    });
  }

  /** A run as the models.play answer: per environment what was measured, failures apart, never as returns. */
  result(runId: string, cancelled: boolean): ModelRun {
    const v = this.d.runs.get(runId);
    const envs = v.envs.map((e) => {
      const info = this.d.envInfo(e.envHash);
      const ok = e.episodes.filter((x) => x.status === 'ok');
      return {
        hash: e.envHash,
        name: e.envName,
        skill: info.skill,
        rHint: e.rHint,
        rNoHint: e.rNoHint,
        regret: e.regret,
        winRate: e.winRate,
        difficulty: e.difficulty,
        hintFailed: e.hintFailed,
        recordedRegret: info.recordedRegret,
        recordedWinRate: info.recordedWinRate,
        failed: e.failed,
        notMeasured: e.notMeasured,
        seeds: e.seeds,
        // SPADE's estimator counts a failed hinted play as 0.0; paired seeds leave it out.
        hintReturns: v.run.estimator === 'spade' ? e.episodes.filter((x) => x.hint).map((x) => (x.status === 'ok' ? x.ret! : 0)) : ok.filter((x) => x.hint).map((x) => x.ret!),
        noHintReturns: ok.filter((x) => !x.hint).map((x) => x.ret!),
      };
    });
    const skills = new Map<string, typeof envs>();
    for (const e of envs) {
      const k = e.skill ?? '(none)';
      skills.set(k, [...(skills.get(k) ?? []), e]);
    }
    const mean = (xs: (number | null)[]) => {
      const ys = xs.filter((x): x is number => x !== null);
      return ys.length ? ys.reduce((a, b) => a + b, 0) / ys.length : null;
    };
    const episodes = v.envs.flatMap((e) =>
      e.episodes.map((x) => {
        const meta = x.episodeId !== null ? ((this.d.episodes.ctx.d.store.meta(x.episodeId)?.meta ?? {}) as { agent?: { turns?: ModelTurn[] } }) : {};
        return { episodeId: x.episodeId ?? 0, hash: x.envHash, seed: x.seed, hint: x.hint, return: x.status === 'ok' ? x.ret : null, failed: x.status === 'failed', error: x.error, endedBy: x.endedBy as ModelRun['episodes'][number]['endedBy'], turns: meta.agent?.turns ?? [] };
      }),
    );
    return {
      runId,
      model: v.run.model,
      estimator: v.run.estimator,
      status: v.run.status,
      cancelled,
      failedText: v.failedText,
      envs,
      episodes,
      bySkill: [...skills].map(([skill, es]) => ({ skill, envs: es.length, meanRegret: mean(es.map((e) => e.regret)), meanRHint: mean(es.map((e) => e.rHint)), meanRNoHint: mean(es.map((e) => e.rNoHint)) })),
    };
  }
}
