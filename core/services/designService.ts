/**
 * Design rounds as the app runs them: in the background, one AbortController each, progress and
 * changes as events, every round read back from SQLite (so a restarted workbench lists and reopens
 * what it did, and says which round it was running when it stopped). The round itself is
 * core/design/round.ts, the same code the CLI runs; what differs is only the wiring: the designer
 * is the models' client, the check is the app's audit, and an accepted game is played through
 * ModelService.play, so its regret is a run record (Runs page) like any model run.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from '../memory/db';
import type { EventBus } from '../server/events';
import type { ModelService } from '../runs/modelService';
import type { EpisodeService } from '../episodes/service';
import type { AuditService } from '../audit/service';
import type { RunService } from '../runs/service';
import type { Endpoint } from '../api/calls/models';
import type { DesignProgress, DesignRound, DesignRoundRow } from '../api/calls/design';
import type { designPreviewInput, designStartInput } from '../api/calls/design';
import type { z } from 'zod';
import { DomainError, invalidInput } from '../errors';
import { errorMessage } from '../api/errors';
import { matchingIds } from '../memory/repository';
import { drawSeeds, type MemoryRecord } from '../design/seeds';
import { withAppendix, type Difficulty } from '../design/prompt';
import { corpusMaxWords, CORPUS_SEED, spadeSource, workbenchSource, type PromptSource } from '../design/promptSource';
import { ChatClient } from '../models/client';
import { newRoundId, runRound } from '../design/round';
import { listRounds, markInterrupted, memoryRecords, roundSeq, roundView } from '../design/designStore';
import type { PlayOutcome } from '../design/attempt';
import { clusterAgentProblem, gameRunId, outcomeOfRun, playGameOn, roundSelection } from '../design/plays';
import { packageRoot } from '../base/appInfo';
import { resolveTarget, targetLabel, type DispatchSettings, type SweepTarget } from '../sweeps/targets';
import { SweepCancelled } from '../sweeps/sweep';
import { makeExecutor } from '../audit/sweepKind';
import { envIdOfHash } from '../memory/repository';
import { auditOn } from '../audit/auditOn';
import type { SweepExecutor } from '../sweeps/executor';
import type { AuditOptions, EnvAudit } from '../audit/types';
import { presetById, type AcceptanceGate } from '../api/designPresets';
import type { EnvValidatorStep } from '../design/acceptance';
import { envValidatorStep, VALIDATOR_SAMPLING } from '../design/envValidator';

type PreviewInput = z.output<typeof designPreviewInput>;
type StartRequest = z.output<typeof designStartInput>;
/** A start request with the preset's values where the request gave none. */
type StartInput = Omit<StartRequest, 'maxTurns' | 'attempts' | 'feedback' | 'gate' | 'estimator'> & { maxTurns: number; attempts: number; feedback: 'repair' | 'spade'; gate: AcceptanceGate; estimator: 'spade' | 'paired' };

export interface DesignServiceDeps {
  db: Db;
  /** The data folder (a Slurm target's known-hosts file lives there). */
  dataDir: string;
  events: EventBus;
  models: () => ModelService;
  episodes: () => EpisodeService;
  audit: () => AuditService;
  runs: () => RunService;
  writesPaused: () => boolean;
  /** The SPADE checkout in Settings: its prompts are read at run time; null gives the workbench's own template. */
  spadeSrc?: () => string | null;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  /**
   * SPADE's LLM environment validator (core/design/acceptance.ts EnvValidatorStep) for a round whose
   * preset asks for it, or null when none is available: each verdict then says "LLM validator not run".
   */
  envValidator?: (designer: Endpoint) => EnvValidatorStep | null;
}

interface LiveRound {
  ac: AbortController;
  progress: DesignProgress | null;
  /** The run record playing a game now, so a cancel stops its episodes too. */
  playing: string | null;
  done: Promise<unknown>;
}

export { gameRunId };

/** A cluster a round's checks and plays run on. */
type Cluster = { target: Exclude<SweepTarget, { kind: 'local' }>; dispatch: DispatchSettings };

export class DesignService {
  private readonly live = new Map<string, LiveRound>();
  private closed = false;

  constructor(private readonly d: DesignServiceDeps) {
    // A round left 'running' by a workbench that stopped is not running: say so, once, at start.
    if (!d.writesPaused()) {
      const n = markInterrupted(d.db);
      if (n) d.log('warn', `${n} design round${n > 1 ? 's were' : ' was'} running when the workbench stopped; marked failed`);
    }
  }

  private template(given: string | undefined): string {
    if (given !== undefined) return given;
    const p = join(packageRoot(), 'resources', 'design', 'designer.txt');
    if (!existsSync(p)) throw new DomainError('unavailable', `The designer template ${p} is missing; give a template`);
    return readFileSync(p, 'utf8');
  }

  /** What the designer may be shown: all of memory, a search's environments, or (variants) only the parent. */
  private memory(i: PreviewInput): MemoryRecord[] {
    if (i.parentEnvId !== undefined) {
      const m = memoryRecords(this.d.db, [i.parentEnvId], i.seedsModel);
      if (!m.length) throw new DomainError('not_found', `No environment ${i.parentEnvId} in the library`);
      return m;
    }
    const ids = i.seedsQuery?.trim() ? matchingIds(this.d.db, { query: i.seedsQuery.trim() }).ids : null;
    return memoryRecords(this.d.db, ids, i.seedsModel);
  }

  private pins(i: PreviewInput): number[] {
    return i.parentEnvId !== undefined ? [i.parentEnvId] : i.pins;
  }

  /** The first attempt's prompt exactly as runRound will build it (same seed, same draw, the first corpus document). */
  async preview(i: PreviewInput) {
    const memory = this.memory(i);
    const skill = i.skills[0]!;
    const draw = drawSeeds(memory, { skill, pins: this.pins(i), bans: i.bans, seed: i.seed });
    const first = await this.fill(await this.prompts(i, 1), i, skill, draw);
    const seed = (r: MemoryRecord) => ({ envId: r.envId, name: r.name, skill: r.skill, winRate: r.winRate, regret: r.regret });
    return { ...first, skill, seed: i.seed, positives: draw.positives.map(seed), negatives: draw.negatives.map(seed), memory: memory.length };
  }

  /**
   * Where the round's prompts come from: SPADE's checkout in Settings (unless the user gave a
   * template of their own), with the corpus drawn `draws` times; else the workbench's template.
   */
  private async prompts(i: PreviewInput, draws: number): Promise<PromptSource> {
    const src = this.d.spadeSrc?.() ?? null;
    if (i.corpus && !src) throw invalidInput("A corpus is sampled by SPADE's CorpusLoader: set the SPADE checkout in Settings first");
    if (i.template !== undefined || !src) return workbenchSource(this.template(i.template), i.template !== undefined);
    const corpus = i.corpus ? { path: i.corpus, maxWords: i.corpusMaxWords ?? corpusMaxWords(i.skills), seed: CORPUS_SEED } : null;
    return spadeSource(src, { corpus, draws });
  }

  private async fill(source: PromptSource, i: PreviewInput, skill: string, draw: ReturnType<typeof drawSeeds>) {
    try {
      const a = await source.next({ skill, difficulty: i.difficulty as Difficulty, maxTurns: i.maxTurns, seed: i.seed, seeds: draw });
      return { prompt: withAppendix(a.body, a.withSeeds ? { positives: [], negatives: [] } : draw, i.instruction), system: a.system, builder: a.builder, document: a.document };
    } catch (e) {
      if (e instanceof DomainError) throw e;
      throw invalidInput(errorMessage(e));
    }
  }

  async start(req: StartRequest): Promise<{ roundId: string; seq: number }> {
    const preset = presetById(req.preset)!;
    const estimator = req.estimator ?? preset.estimator;
    // SPADE's per-arm thinking comes with the preset's estimator, as its recipe sets it, unless the request says otherwise.
    const spadeEstimator = estimator === 'spade' && preset.armThinking && req.spadeEstimator?.thinking === undefined ? { ...req.spadeEstimator, thinking: { ...preset.armThinking } } : req.spadeEstimator;
    const i: StartInput = { ...req, maxTurns: req.maxTurns ?? preset.maxTurns, attempts: req.attempts ?? preset.attempts, feedback: req.feedback ?? preset.feedback, gate: req.gate ?? preset.gate, estimator, ...(spadeEstimator ? { spadeEstimator } : {}) };
    if (this.closed) throw new DomainError('unavailable', 'The workbench is shutting down');
    if (this.d.writesPaused()) throw new DomainError('unavailable', 'Changes to the library are paused; a round cannot store its games');
    // Refuse what would fail later before anything is stored: the template or checkout, the corpus, the endpoints' keys.
    await this.fill(await this.prompts(i, 1), i, i.skills[0]!, { positives: [], negatives: [] });
    const prompts = await this.prompts(i, i.count * i.attempts);
    const models = this.d.models();
    const designerCfg = models.config(i.designer);
    const designer = models.client(designerCfg);
    // SPADE's hints: the designer model ('self' hints) at temperature 0.3 and 2048 tokens (spade/core/types.py:154-155).
    const hinter = prompts.kind === 'spade' ? new ChatClient({ ...designerCfg, temperature: 0.3, maxTokens: 2048, retries: 0 }) : undefined;
    if (i.agent) models.config(i.agent);
    // A cluster target is checked before anything is stored; its executor lives as long as the round.
    const resolved = i.checksOn && i.checksOn.kind !== 'local' ? resolveTarget(this.d.db, i.checksOn) : null;
    const on: Cluster | null = resolved && resolved.target.kind !== 'local' ? { target: resolved.target, dispatch: resolved.dispatch } : null;
    // The accepted games are played there too: the nodes call the agent themselves.
    const agentProblem = on && i.agent ? clusterAgentProblem(i.agent) : null;
    if (agentProblem) throw invalidInput(`The round runs on ${targetLabel(on!.target)}, where its games are played too, but ${agentProblem}`);
    const id = newRoundId();
    const ac = new AbortController();
    const entry: LiveRound = { ac, progress: null, playing: null, done: Promise.resolve() };
    this.live.set(id, entry);
    const scoped = i.parentEnvId !== undefined || !!i.seedsQuery?.trim();
    const memoryIds = scoped ? this.memory(i).map((m) => m.envId).filter((x): x is number => x !== null) : null;
    const changed = (status: DesignRound['status']) => this.d.events.emit('design.changed', { roundId: id, status });
    const executor: SweepExecutor<EnvAudit> | null = on ? makeExecutor(on.target, on.dispatch, this.d.db, this.d.dataDir) : null;
    let checked = 0;
    const check = async (code: string, checks: string[], hint: string | null = null, extra: Pick<AuditOptions, 'admissionAlways' | 'guessLoad' | 'resetGate'> = {}): Promise<EnvAudit> =>
      executor
        ? auditOn(executor, code, { maxTurns: i.maxTurns, callTimeoutSec: 5, ...(checks.length ? { checks } : {}), hint, ...extra }, { name: `design attempt ${++checked}`, signal: ac.signal })
        : (await this.d.audit().checkSource(code, checks, checks.length ? ac.signal : undefined, hint, { maxTurns: i.maxTurns, ...extra })).audit;
    // SPADE's LLM validator judges with the training model ('self', env_validator.py), here the
    // designer, at SPADE's validator sampling; its prompts come from the checkout, so a round on the
    // workbench's own template has none and each verdict says "LLM validator not run".
    const validator = preset.envValidator
      ? (this.d.envValidator?.(i.designer) ?? (prompts.kind === 'spade' && prompts.texts ? envValidatorStep(new ChatClient({ ...designerCfg, ...VALIDATOR_SAMPLING, retries: 0 }), prompts.texts) : null))
      : null;
    const agent = i.agent;
    const play = agent ? (hash: string, hint: string | null, idx: number) => (on ? this.playOn(id, entry, on, agent, hash, hint, idx, i) : this.play(id, entry, agent, hash, idx, i)) : undefined;
    entry.done = runRound(
      {
        id,
        skills: i.skills,
        count: i.count,
        difficulty: i.difficulty as Difficulty,
        maxTurns: i.maxTurns,
        template: prompts.kind === 'workbench' ? this.template(i.template) : '',
        prompts,
        attempts: i.attempts,
        feedback: i.feedback,
        acceptance: { gate: i.gate, resetGate: preset.resetGate, envValidator: preset.envValidator, maxTurns: i.maxTurns },
        seed: i.seed,
        pins: this.pins(i),
        bans: i.bans,
        memoryIds,
        seedsModel: i.seedsModel ?? null,
        designerModel: i.designer.model,
        ...(i.instruction ? { instruction: i.instruction } : {}),
        extra: {
          designer: { baseUrl: i.designer.baseUrl, model: i.designer.model },
          agent: agent ? { baseUrl: agent.baseUrl, model: agent.model } : null,
          playSeeds: i.playSeeds,
          estimator: i.estimator,
          seedsQuery: i.seedsQuery ?? null,
          parentEnvId: i.parentEnvId ?? null,
          instruction: i.instruction ?? null,
          corpus: i.corpus ?? null,
          checksOn: on ? targetLabel(on.target) : 'local',
          preset: preset.id,
          playsOn: agent ? (on ? targetLabel(on.target) : 'local') : null,
        },
      },
      {
        db: this.d.db,
        designer,
        ...(hinter ? { hinter } : {}),
        check: (code, extra) => check(code, [], null, extra),
        checkHint: async (code, hint) => (await check(code, ['hint-leak'], hint)).checks.find((c) => c.id === 'hint-leak') ?? null,
        ...(play ? { play } : {}),
        ...(validator ? { validator } : {}),
      },
      (p) => {
        entry.progress = { roundId: id, game: p.game, games: p.games, skill: p.skill, stage: p.stage, attempt: p.attempt, of: p.of, tokensPerSec: p.tokensPerSec ?? null };
        this.d.events.emit('design.progress', entry.progress);
        changed('running');
      },
      ac.signal,
    )
      .then((r) => {
        this.d.log('info', `design round ${r.seq} ${r.status}: ${r.games.filter((g) => g.accepted).length} of ${r.games.length} games accepted`);
        return r.status;
      })
      .catch((e: unknown) => {
        this.d.log('error', `design round ${id} stopped: ${errorMessage(e)}`);
        return 'failed' as const;
      })
      .then(async (status) => {
        await executor?.close().catch(() => undefined);
        this.live.delete(id);
        changed(status);
      });
    changed('running');
    return { roundId: id, seq: roundSeq(this.d.db, id) ?? 0 };
  }

  /** An accepted game played by the agent as a run record of its own (regret per environment and model is stored). */
  private async play(roundId: string, entry: LiveRound, agent: Endpoint, hash: string, idx: number, i: StartInput): Promise<PlayOutcome> {
    const runId = gameRunId(roundId, idx);
    entry.playing = runId;
    try {
      const r = await this.d.models().play({ hashes: [hash], endpoint: agent, seeds: i.playSeeds, seedStart: 0, arms: ['hint', 'nohint'], maxTurns: i.maxTurns, runId, selection: roundSelection(roundSeq(this.d.db, roundId)), estimator: i.estimator, ...(i.spadeEstimator ? { spade: i.spadeEstimator } : {}) });
      return outcomeOfRun(r, 'local');
    } finally {
      entry.playing = null;
    }
  }

  /**
   * An accepted game played on the round's cluster (core/design/plays.ts): the same run record,
   * episodes and numbers as play() here, the record saying where it ran. The round's cancel stops
   * the sweep's tasks on the engine through the round's signal.
   */
  private async playOn(roundId: string, entry: LiveRound, on: Cluster, agent: Endpoint, hash: string, hint: string | null, idx: number, i: StartInput): Promise<PlayOutcome> {
    const models = this.d.models();
    const cfg = models.config(agent);
    const ctx = this.d.episodes().ctx;
    const env = ctx.env(hash);
    let cancelled = false;
    try {
      await playGameOn(
        { db: this.d.db, dataDir: this.d.dataDir, store: ctx.d.store, runs: this.d.runs(), runtime: ctx.d.runtime },
        {
          ...on,
          roundId,
          seq: roundSeq(this.d.db, roundId),
          idx,
          hash,
          name: env.name ?? hash.slice(0, 12),
          fileStem: env.fileStem ?? null,
          envId: envIdOfHash(this.d.db, hash),
          hint,
          seeds: i.playSeeds,
          budget: i.maxTurns,
          stepTimeoutSec: 30,
          // The key stays here: a node reads it from its own variable named as the secret is.
          model: { baseUrl: cfg.baseUrl, model: cfg.model, ...(agent.apiKeySecret ? { apiKeyEnv: agent.apiKeySecret } : {}), temperature: cfg.temperature, topP: cfg.topP, topK: cfg.topK, maxTokens: cfg.maxTokens, thinking: cfg.thinking, turnTimeoutMs: cfg.turnTimeoutMs, retries: cfg.retries },
          // ModelService.play keeps the states of a play of one game and a few seeds; so do the nodes.
          // SPADE's estimator: one game's 24 episodes, kept whole as well.
          states: i.estimator === 'spade' ? true : i.playSeeds <= 4,
          recordEndpoint: { ...agent },
          estimator: i.estimator,
          ...(i.spadeEstimator ? { spade: i.spadeEstimator } : {}),
        },
        entry.ac.signal,
      );
    } catch (e) {
      if (!(e instanceof SweepCancelled)) throw e;
      cancelled = true;
    }
    return outcomeOfRun(models.result(gameRunId(roundId, idx), cancelled), targetLabel(on.target));
  }

  cancel(id: string): { cancelled: boolean } {
    const entry = this.live.get(id);
    if (!entry) return { cancelled: false };
    entry.ac.abort();
    if (entry.playing) this.d.episodes().regretCancel(entry.playing);
    return { cancelled: true };
  }

  list(limit: number): DesignRoundRow[] {
    return listRounds(this.d.db, limit).map((r) => ({ ...r, live: this.live.has(r.id) }));
  }

  get(id: string): DesignRound {
    const r = roundView(this.d.db, id);
    if (!r) throw new DomainError('not_found', `No design round ${id}`);
    const entry = this.live.get(id);
    const runs = this.d.runs();
    return {
      ...r,
      live: !!entry,
      progress: entry?.progress ?? null,
      games: r.games.map((g) => ({ ...g, run_id: runs.store.get(gameRunId(id, g.idx)) ? gameRunId(id, g.idx) : null })),
    };
  }

  /** Resolves when the round is no longer running here (tests, shutdown). */
  async settle(id: string): Promise<void> {
    await this.live.get(id)?.done;
  }

  busy(): number {
    return this.live.size;
  }

  /** Stops every round and waits for each to store how it ended. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.live.keys()];
    for (const id of all) this.cancel(id);
    await Promise.all(all.map((id) => this.settle(id)));
  }
}
