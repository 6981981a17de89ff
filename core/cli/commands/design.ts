import { TARGET_OPTIONS, cliTarget, nodePython, reachSettings } from './targetOptions';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { CliIO, Command } from '../command';
import { UsageError } from '../command';
import { commandInfo } from '../catalog';
import { openDataDir } from '../../memory/cliDb';
import { envIdOfHash, getVersion, matchingIds } from '../../memory/repository';
import { memoryCatalog } from '../../episodes/catalog';
import { EpisodeService } from '../../episodes/service';
import { EpisodeStore } from '../../episodes/episodeStore';
import { RuntimeService } from '../../runtime/service';
import { AuditPool } from '../../audit/pool';
import { ChatClient, type EndpointConfig } from '../../models/client';
import { modelPlayer } from '../../episodes/agent';
import { DEFAULT_LOCAL_MODEL, isLocalEndpoint } from '../../models/localModel';
import { LocalEngine } from '../../models/localEngine';
import { ALL_SKILLS } from '../../api/skills';
import { DIFFICULTIES, type Difficulty } from '../../design/prompt';
import { CORPUS_SEED, corpusMaxWords, spadeSource, workbenchSource, type PromptSource } from '../../design/promptSource';
import { newRoundId, runRound, writeSpadeLayout } from '../../design/round';
import { designBlend } from '../../design/blend';
import { parentsByHash, roundSeq } from '../../design/designStore';
import type { PlayOutcome } from '../../design/attempt';
import { auditOn } from '../../audit/auditOn';
import { errorMessage } from '../../api/errorMessage';
import type { AuditOptions, EnvAudit } from '../../audit/types';
import type { SweepExecutor } from '../../sweeps/executor';
import { makeExecutor } from '../../audit/sweepKind';
import { targetLabel, type DispatchSettings } from '../../sweeps/targets';
import { RunService } from '../../runs/service';
import { SettingsStore } from '../../memory/settingsStore';
import type { SweepModel } from '../../episodes/regretRemote';
import { cliEstimator, ESTIMATOR_OPTIONS } from './estimatorOptions';
import { clusterAgentProblem, gameRunId, localGameRun, outcomeOfResults, playGameOn } from '../../design/plays';
import { DEFAULT_PRESET, DESIGN_PRESETS, presetById } from '../../api/designPresets';
import type { AcceptancePolicy } from '../../design/acceptance';
import { envValidatorStep, VALIDATOR_SAMPLING } from '../../design/envValidator';

/** The workbench's own designer template, beside the bundle (dist/node) or the source (core/cli/commands). */
function defaultTemplate(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const p of [join(here, '..', '..', 'resources', 'design', 'designer.txt'), join(here, '..', '..', '..', 'resources', 'design', 'designer.txt')]) {
    if (existsSync(p)) return readFileSync(p, 'utf8');
  }
  throw new UsageError('The designer template resources/design/designer.txt is missing (give --template FILE)');
}

/** A served endpoint's key comes from the environment (a job's secret variable), never from argv, which `ps` shows. */
function endpoint(url: string, model: string | undefined, maxTokens: number, temperature: number, timeoutSec: number, keyVar: string): EndpointConfig {
  const local = isLocalEndpoint(url);
  if (!local && !/^https?:\/\//.test(url)) throw new UsageError(`An endpoint is an http(s) URL or local, got ${url}`);
  if (!local && !model) throw new UsageError(`Name the model served at ${url} (--designer-model / --agent-model)`);
  return { baseUrl: url, model: model ?? DEFAULT_LOCAL_MODEL.name, apiKey: local ? null : process.env[keyVar] || null, temperature, topP: 0.95, topK: 20, maxTokens, thinking: null, turnTimeoutMs: timeoutSec * 1000, retries: 2, concurrency: 1, stream: false };
}

const int = (v: string | undefined, name: string, dflt: number, min: number, max: number): number => {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${name} must be a whole number from ${min} to ${max}, got ${v}`);
  return n;
};

export const designCommand: Command = {
  ...commandInfo('design'),
  async run(argv, io: CliIO) {
    const { values, positionals } = parseArgs({
      args: argv,
      // `--skills "A" "B"`: the words after --skills that are not options are more skills.
      allowPositionals: true,
      options: {
        skills: { type: 'string', multiple: true },
        count: { type: 'string' },
        difficulty: { type: 'string' },
        designer: { type: 'string' },
        'designer-model': { type: 'string' },
        agent: { type: 'string' },
        'agent-model': { type: 'string' },
        attempts: { type: 'string' },
        'seeds-from': { type: 'string' },
        pin: { type: 'string', multiple: true },
        ban: { type: 'string', multiple: true },
        template: { type: 'string' },
        'spade-src': { type: 'string' },
        corpus: { type: 'string' },
        'corpus-max-words': { type: 'string' },
        'tool-use-prompt': { type: 'string' },
        feedback: { type: 'string' },
        preset: { type: 'string' },
        gate: { type: 'string' },
        'play-seeds': { type: 'string' },
        'max-turns': { type: 'string' },
        'max-tokens': { type: 'string' },
        'agent-max-tokens': { type: 'string' },
        seed: { type: 'string' },
        out: { type: 'string' },
        'data-dir': { type: 'string' },
        json: { type: 'boolean' },
        ...TARGET_OPTIONS,
        ...ESTIMATOR_OPTIONS,
      },
      strict: true,
    });
    if (positionals.length && !values.skills) throw new UsageError(`Unexpected argument ${positionals[0]}: skills follow --skills`);
    const skills = [...(values.skills ?? []), ...positionals].flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
    if (!skills.length) throw new UsageError('--skills "A" ["B" ...] is required');
    for (const s of skills) if (!ALL_SKILLS.includes(s)) throw new UsageError(`Unknown skill ${s}; SPADE's skills are: ${ALL_SKILLS.join(', ')}`);
    const difficulty = (values.difficulty ?? 'medium') as Difficulty;
    if (!DIFFICULTIES.includes(difficulty)) throw new UsageError(`--difficulty is one of ${DIFFICULTIES.join(', ')}`);
    // The preset gives every default (core/design/presets.ts, each value from the recipe it names);
    // a flag given overrides its value.
    const preset = presetById(values.preset ?? DEFAULT_PRESET);
    if (!preset) throw new UsageError(`--preset is one of ${DESIGN_PRESETS.map((p) => p.id).join(', ')}`);
    const gate = values.gate ?? preset.gate;
    if (gate !== 'spade' && gate !== 'workbench') throw new UsageError("--gate is spade (SPADE's trainer acceptance; the random-guess test and the workbench's checks are advice) or workbench (reject on those too)");
    const feedback = values.feedback ?? preset.feedback;
    if (feedback !== 'repair' && feedback !== 'spade') throw new UsageError('--feedback is repair (the reason goes back to the designer) or spade (a fresh prompt, as SPADE re-samples)');
    const count = int(values.count, '--count', 2, 1, 1000);
    const attempts = int(values.attempts, '--attempts', preset.attempts, 1, 50);
    const maxTurns = int(values['max-turns'], '--max-turns', preset.maxTurns, 1, 1000);
    const playSeeds = int(values['play-seeds'], '--play-seeds', 2, 0, 1000);
    // Which regret play measures: SPADE's estimator unless --estimator paired (then --play-seeds per arm).
    // The preset names its estimator (SPADE's for the paper presets, with their per-arm thinking; paired for quick).
    const { estimator, spade } = cliEstimator({ ...values, estimator: values.estimator ?? preset.estimator, ...((values.estimator ?? preset.estimator) === 'spade' && preset.armThinking && values['arm-thinking'] === undefined ? { 'arm-thinking': 'spade-8b' } : {}) });
    const designerCfg = endpoint(values.designer ?? 'local', values['designer-model'], int(values['max-tokens'], '--max-tokens', preset.designerMaxTokens, 16, 1_000_000), preset.designerTemperature, 600, 'SPADE_DESIGNER_API_KEY');
    const agentCfg = endpoint(values.agent ?? 'local', values['agent-model'], int(values['agent-max-tokens'], '--agent-max-tokens', preset.agentMaxTokens, 8, 1_000_000), preset.agentTemperature, 600, 'SPADE_AGENT_API_KEY');
    const acceptance: AcceptancePolicy = { gate, resetGate: preset.resetGate, envValidator: preset.envValidator, maxTurns };
    const target = cliTarget(values.on);
    // The plays go where the checks go; a node reaches the agent by itself, so it must be a server it can reach.
    const agentProblem = target.kind !== 'local' && playSeeds > 0 ? clusterAgentProblem(agentCfg) : null;
    if (agentProblem) throw new UsageError(`--on ${values.on}: the accepted games are played there, but ${agentProblem} (--agent URL --agent-model NAME, or --play-seeds 0)`);
    // Where each attempt's checks run: this machine's pool, or a Ray head / Slurm host as a pool audit does.
    const dispatch: DispatchSettings = { workers: 1, shardSize: 1, envTimeoutSec: 120, python: nodePython(values, target.kind !== 'local'), ...reachSettings(values) };
    const ids = (xs: string[] | undefined, name: string) => (xs ?? []).map((x) => int(x, name, 0, 1, 2 ** 31));
    const toolUsePrompt = values['tool-use-prompt'] ?? 'multiturn';
    if (toolUsePrompt !== 'multiturn' && toolUsePrompt !== 'single') throw new UsageError('--tool-use-prompt is multiturn (SPADE_MULTITURN_ENV_GEN=1, as the tool-use recipes set it) or single');
    if (values.template !== undefined && values['spade-src'] !== undefined) throw new UsageError('--template and --spade-src both name the prompt: give one');
    const corpusMaxWordsGiven = values['corpus-max-words'] !== undefined ? int(values['corpus-max-words'], '--corpus-max-words', 0, 1, 1_000_000) : null;

    if (values['data-dir'] !== undefined) mkdirSync(values['data-dir'], { recursive: true });
    const { db, dataDir } = openDataDir(values['data-dir']);
    // SPADE's texts from a checkout read now (--spade-src, else the Settings field), or the workbench's own template.
    const spadeSrc = values.template !== undefined ? null : (values['spade-src'] ?? new SettingsStore(db).get().spadeSrc);
    let prompts: PromptSource;
    try {
      if (values.corpus !== undefined && !spadeSrc) throw new UsageError("--corpus FILE is sampled by SPADE's CorpusLoader: give --spade-src DIR (a SPADE checkout) too");
      prompts = spadeSrc
        ? await spadeSource(spadeSrc, { corpus: values.corpus !== undefined ? { path: values.corpus, maxWords: corpusMaxWordsGiven ?? corpusMaxWords(skills), seed: CORPUS_SEED } : null, draws: count * attempts, toolUseVariant: toolUsePrompt })
        : workbenchSource(values.template !== undefined ? readFileSync(values.template, 'utf8') : defaultTemplate(), values.template !== undefined);
    } catch (e) {
      db.close();
      throw e instanceof UsageError ? e : new UsageError(errorMessage(e));
    }
    const template = prompts.kind === 'workbench' && values.template !== undefined ? readFileSync(values.template, 'utf8') : prompts.kind === 'workbench' ? defaultTemplate() : '';
    const pool = new AuditPool({ workers: 1, envTimeoutSec: 120 });
    const rt = new RuntimeService({ settings: () => ({ stepTimeoutSec: 30, maxTurns, defaultRuntime: 'pyodide' }), poolSize: 1 });
    const store = new EpisodeStore(db);
    const episodes = new EpisodeService({ store, catalog: memoryCatalog(db), runtime: rt, defaults: () => ({ maxTurns }) });
    const ac = new AbortController();
    const executor: SweepExecutor<EnvAudit> | null = target.kind === 'local' ? null : makeExecutor(target, dispatch, db, dataDir);
    let checked = 0;
    const check = (code: string, options: AuditOptions) =>
      executor ? auditOn(executor, code, options, { name: `design attempt ${++checked}`, signal: ac.signal }) : pool.audit(code, options);
    // Ctrl-C here, or scancel / a job's stop when the round runs as a job: the round ends cancelled,
    // keeping every attempt so far, and the layout is still written.
    const onSigint = () => ac.abort();
    process.once('SIGINT', onSigint);
    process.once('SIGTERM', onSigint);
    try {
      const memoryIds = values['seeds-from'] !== undefined ? matchingIds(db, { query: values['seeds-from'] }).ids : null;
      const agent = new ChatClient(agentCfg);
      // Each played game is a run record (Runs page), here or on the cluster; only its `on` differs.
      const runs = new RunService({ db, catalog: memoryCatalog(db), minShare: () => new SettingsStore(db).get().runMinSuccess });
      const sweepModel: SweepModel = {
        baseUrl: agentCfg.baseUrl,
        model: agentCfg.model,
        ...(process.env.SPADE_AGENT_API_KEY ? { apiKeyEnv: 'SPADE_AGENT_API_KEY' } : {}),
        temperature: agentCfg.temperature,
        topP: agentCfg.topP,
        topK: agentCfg.topK,
        maxTokens: agentCfg.maxTokens,
        thinking: agentCfg.thinking,
        turnTimeoutMs: agentCfg.turnTimeoutMs,
        retries: agentCfg.retries,
      };
      const roundId = newRoundId();
      const play = async (hash: string, hint: string | null, idx: number): Promise<PlayOutcome> => {
        const seq = roundSeq(db, roundId);
        if (target.kind !== 'local') {
          const env = memoryCatalog(db).byHash(hash);
          const r = await playGameOn(
            { db, dataDir, store, runs, runtime: rt },
            { target, dispatch, roundId, seq, idx, hash, name: env?.name ?? hash.slice(0, 12), fileStem: env?.fileStem ?? null, envId: envIdOfHash(db, hash), hint, seeds: playSeeds, budget: maxTurns, stepTimeoutSec: 30, model: sweepModel, estimator, spade },
            ac.signal,
          );
          return outcomeOfResults(r.results, hash, hint === null, targetLabel(target), estimator);
        }
        const runId = gameRunId(roundId, idx);
        const recorded = runs.begin(localGameRun({ runId, seq, hash, name: memoryCatalog(db).byHash(hash)?.name ?? null, fileStem: memoryCatalog(db).byHash(hash)?.fileStem ?? null, seeds: playSeeds, budget: maxTurns, model: sweepModel, estimator, spade }));
        let status: 'done' | 'cancelled' | 'failed' = 'failed';
        let error: string | null = null;
        try {
          const r = await episodes.regretMany({
            hashes: [hash],
            estimator,
            spade,
            seeds: playSeeds,
            seedStart: 0,
            hintFor: () => hint,
            maxTurns,
            concurrency: 1,
            runId,
            recorded,
            arms: hint === null ? ['nohint'] : ['hint', 'nohint'],
            player: modelPlayer(agent, { thinking: false, ...(spade.thinking ? { thinkingByArm: spade.thinking } : {}), policy: { kind: 'llm', endpoint: agentCfg.baseUrl, model: agentCfg.model, temperature: agentCfg.temperature, topP: agentCfg.topP, topK: agentCfg.topK, maxTokens: agentCfg.maxTokens, thinking: null } }),
          });
          status = r.cancelled ? 'cancelled' : 'done';
          return outcomeOfResults(r.episodes, hash, hint === null, 'local', estimator);
        } catch (e) {
          error = errorMessage(e);
          throw e;
        } finally {
          runs.end(runId, status, error);
        }
      };
      // SPADE's LLM validator ('self': the training model, here the designer) where the preset's recipe
      // turns it on; its prompts come from the checkout (env_validator.py), so without one it is not run.
      const validator = preset.envValidator && prompts.kind === 'spade' && prompts.texts ? envValidatorStep(new ChatClient({ ...designerCfg, ...VALIDATOR_SAMPLING, retries: 0 }), prompts.texts) : null;
      const round = await runRound(
        {
          id: roundId,
          skills,
          count,
          difficulty,
          maxTurns,
          template,
          prompts,
          attempts,
          feedback,
          acceptance,
          seed: int(values.seed, '--seed', Date.now() % 100_000, 0, 2 ** 31),
          pins: ids(values.pin, '--pin'),
          bans: ids(values.ban, '--ban'),
          memoryIds,
          designerModel: designerCfg.model,
          extra: { checksOn: targetLabel(target), playsOn: playSeeds > 0 ? targetLabel(target) : null, corpus: values.corpus ?? null, preset: preset.id, estimator },
        },
        {
          db,
          designer: new ChatClient(designerCfg),
          // SPADE's 'self' hints: the designer model at temperature 0.3 and 2048 tokens (spade/core/types.py:154-155).
          ...(prompts.kind === 'spade' ? { hinter: new ChatClient({ ...designerCfg, temperature: 0.3, maxTokens: 2048, retries: 0 }) } : {}),
          check: (code, extra) => check(code, { maxTurns, ...extra }),
          checkHint: async (code, hint) => (await check(code, { maxTurns, hint, checks: ['hint-leak'] })).checks.find((c) => c.id === 'hint-leak') ?? null,
          ...(playSeeds > 0 ? { play } : {}),
          ...(validator ? { validator } : {}),
        },
        (p) => {
          if (!values.json) io.err(`game ${p.game}/${p.games} (${p.skill}): attempt ${p.attempt} of ${p.of}, ${p.stage}${p.tokensPerSec ? `, ${p.tokensPerSec.toFixed(1)} tokens/s` : ''}`);
        },
        ac.signal,
      );
      const written = values.out !== undefined ? writeSpadeLayout(values.out, round, (h) => getVersion(db, h)?.source ?? null, (ids) => parentsByHash(db, ids)) : [];
      if (values.json) {
        io.out(
          JSON.stringify(
            {
              round: round.id,
              seq: round.seq,
              status: round.status,
              error: round.error,
              data_dir: dataDir,
              checks_on: executor?.label ?? 'local',
              plays_on: playSeeds > 0 ? targetLabel(target) : null,
              designer: { endpoint: designerCfg.baseUrl, model: designerCfg.model },
              agent: { endpoint: agentCfg.baseUrl, model: agentCfg.model },
              out: values.out ?? null,
              prompts: prompts.kind === 'spade' ? { from: 'spade', src: prompts.src, files: prompts.texts?.files ?? [] } : { from: 'workbench', src: null, note: "the workbench's own template, not SPADE's" },
              corpus: values.corpus ?? null,
              mode: gate === 'spade' ? 'spade' : 'workbench-gate',
              acceptance: {
                gate,
                preset: preset.id,
                preset_label: preset.label,
                recipe: preset.recipe,
                reset_gate: preset.resetGate,
                env_validator: preset.envValidator,
                // Without a SPADE checkout there are no validator prompts: each verdict then says "LLM validator not run".
                env_validator_available: validator !== null,
              },
              games: round.games.map((g) => ({
                skill: g.skill,
                accepted: g.accepted,
                env_id: g.env_id,
                parents: g.parents,
                hint: g.hint,
                hint_leak: g.hint_leak,
                regret: g.regret,
                regret_estimator: g.regret_estimator,
                win_rate: g.win_rate,
                spade_blend: designBlend(g),
                class: g.class,
                difficulty_score: g.difficulty_score,
                play_error: g.play_error,
                plays_on: g.plays_on,
                run_id: runs.store.get(gameRunId(round.id, g.idx)) ? gameRunId(round.id, g.idx) : null,
                grounding: g.accepted ? (g.attempts.at(-1)?.document ?? null) : null,
                attempts: g.attempts.map((a) => ({ system: a.system, prompt: a.prompt, builder: a.builder, document: a.document, answer: a.answer, verdicts: a.verdicts, acceptance: a.acceptance, rejected_because: a.rejected_because, tokens: a.tokens, ms: Math.round(a.ms), error: a.error })),
              })),
            },
            null,
            2,
          ),
        );
      } else {
        for (const g of round.games) {
          const last = g.attempts.at(-1);
          io.out(
            `game ${g.idx + 1} ${g.skill}: ${g.accepted ? `accepted (environment ${g.env_id}, parents ${g.parents.join(', ') || 'none'})` : `rejected after ${g.attempts.length} attempts: ${last?.rejected_because ?? 'no attempt'}`}${g.regret !== null ? `, regret ${g.regret.toFixed(3)}, win rate ${g.win_rate!.toFixed(2)}, ${g.class}` : ''}`,
          );
        }
        const where = target.kind === 'local' ? '' : `; ${playSeeds > 0 ? 'checks and plays' : 'checks'} on ${targetLabel(target)}`;
        io.out(`round ${round.id} ${round.status}${round.error ? `: ${round.error}` : ''}${where}${written.length ? `; ${written.length} games written under ${values.out}` : ''}`);
      }
      return round.status === 'failed' ? 1 : 0;
    } finally {
      process.off('SIGINT', onSigint);
      process.off('SIGTERM', onSigint);
      await pool.close();
      await executor?.close();
      await rt.shutdown();
      await LocalEngine.closeAll();
      db.close();
    }
  },
};
