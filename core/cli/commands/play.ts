import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { CliIO, Command } from '../command';
import { runtimeArg, UsageError } from '../command';
import { commandInfo } from '../catalog';
import { RuntimeService } from '../../runtime/service';
import type { SshConnection } from '../../jobs/ssh/connection';
import type { Db } from '../../memory/db';
import type { EpisodeService } from '../../episodes/service';
import { ChatClient, SPADE_SAMPLING, type EndpointConfig } from '../../models/client';
import type { Transcript } from '../../episodes/agent';
import { SPADE_DEFAULT_BUDGET } from '../../episodes/spade';
import { DEFAULT_LOCAL_MODEL, isLocalEndpoint, LOCAL_SAMPLING } from '../../models/localModel';
import { Throughput } from '../../models/throughput';
import { errorMessage } from '../../api/errorMessage';
import { LocalEngine } from '../../models/localEngine';
import { defaultDataDir } from '../../base/dataDir';

function num(v: string | undefined, name: string, dflt: number, check: (n: number) => boolean): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || !check(n)) throw new UsageError(`${name} has an invalid value: ${v}`);
  return n;
}

const int = (n: number) => Number.isInteger(n);

export const playCommand: Command = {
  ...commandInfo('play'),
  async run(argv, io: CliIO) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        selection: { type: 'string' },
        endpoint: { type: 'string' },
        model: { type: 'string' },
        'api-key-env': { type: 'string' },
        seeds: { type: 'string' },
        'seed-start': { type: 'string' },
        hint: { type: 'string' },
        'hint-file': { type: 'string' },
        'compare-hint': { type: 'boolean' },
        concurrency: { type: 'string' },
        temperature: { type: 'string' },
        'top-p': { type: 'string' },
        'top-k': { type: 'string' },
        'max-tokens': { type: 'string' },
        thinking: { type: 'boolean' },
        stream: { type: 'boolean' },
        'max-turns': { type: 'string' },
        timeout: { type: 'string' },
        retries: { type: 'string' },
        runtime: { type: 'string' },
        'data-dir': { type: 'string' },
        'via-job': { type: 'string' },
        json: { type: 'boolean' },
      },
      strict: true,
    });
    if (!values.endpoint) throw new UsageError('--endpoint URL is required (an OpenAI-compatible server, e.g. http://127.0.0.1:30000/v1, or local for the embedded model)');
    const local = isLocalEndpoint(values.endpoint);
    if (!values.model && !local) throw new UsageError('--model NAME is required');
    if (!local && !/^https?:\/\//.test(values.endpoint)) throw new UsageError(`--endpoint must be an http(s) URL or local, got ${values.endpoint}`);
    if (local && values['via-job'] !== undefined) throw new UsageError('--via-job reaches a server through a job; the local model runs here');
    if ((positionals.length === 1) === (values.selection !== undefined)) throw new UsageError('Give one ENV.py, or --selection QUERY');
    if (values.hint !== undefined && values['hint-file'] !== undefined) throw new UsageError('Give --hint or --hint-file, not both');
    if (values.selection !== undefined && (values.hint !== undefined || values['hint-file'] !== undefined)) throw new UsageError('--hint and --hint-file are for one ENV.py; a selection plays each environment with its own hint');
    const seeds = num(values.seeds, '--seeds', NaN, (n) => int(n) && n >= 1 && n <= 100_000);
    if (Number.isNaN(seeds)) throw new UsageError('--seeds N is required');
    const seedStart = num(values['seed-start'], '--seed-start', 0, (n) => int(n) && n >= 0 && n < 2 ** 31);
    const budget = num(values['max-turns'], '--max-turns', SPADE_DEFAULT_BUDGET, (n) => int(n) && n >= 1 && n <= 10_000);
    // The embedded model's defaults fit a CPU model on this machine (LOCAL_SAMPLING); a server's are SPADE's.
    const concurrency = num(values.concurrency, '--concurrency', local ? LOCAL_SAMPLING.concurrency : 4, (n) => int(n) && n >= 1 && n <= 1024);
    const runtime = runtimeArg(values.runtime, 'auto');
    let apiKey: string | null = null;
    if (values['api-key-env']) {
      apiKey = process.env[values['api-key-env']] ?? null;
      if (!apiKey) throw new UsageError(`The environment variable ${values['api-key-env']} (--api-key-env) is not set`);
    }
    const cfg: EndpointConfig = {
      baseUrl: values.endpoint,
      model: values.model ?? DEFAULT_LOCAL_MODEL.name,
      apiKey,
      temperature: num(values.temperature, '--temperature', SPADE_SAMPLING.temperature, (n) => n >= 0 && n <= 5),
      topP: num(values['top-p'], '--top-p', SPADE_SAMPLING.topP, (n) => n > 0 && n <= 1),
      topK: values['top-k'] === 'none' ? null : num(values['top-k'], '--top-k', SPADE_SAMPLING.topK, (n) => int(n) && n >= -1),
      maxTokens: num(values['max-tokens'], '--max-tokens', local ? LOCAL_SAMPLING.maxTokens : SPADE_SAMPLING.maxTokens, (n) => int(n) && n >= 1),
      thinking: values.thinking ? true : null,
      turnTimeoutMs: num(values.timeout, '--timeout', SPADE_SAMPLING.turnTimeoutMs / 1000, (n) => n > 0) * 1000,
      retries: num(values.retries, '--retries', 4, (n) => int(n) && n >= 0 && n <= 20),
      concurrency,
      stream: values.stream === true,
      via: values['via-job'] !== undefined ? { jobId: values['via-job'] } : null,
    };

    // A CLI process starts cold, where the app's pool is already warm: every Pyodide interpreter
    // costs seconds of CPU to start, and four started at once on a two-core machine took 20 s before
    // the first episode could run. So `auto` plays in native CPython (forked in its bubblewrap
    // sandbox, ready in a fraction of a second) wherever that sandbox is there, as the audit CLI
    // does; elsewhere Pyodide, with no more interpreters than cores (sessions share one meanwhile).
    // Its fork server starts while the rest (SQLite, the library, the episode machinery) loads.
    const rt = new RuntimeService({
      settings: () => ({ stepTimeoutSec: 30, maxTurns: budget, defaultRuntime: runtime === 'pyodide' ? 'pyodide' : 'cpython' }),
      poolSize: Math.max(1, Math.min(4, concurrency, availableParallelism())),
      // Probing the interpreter (a Python start and a numpy import) cost every play a quarter of a
      // second before its fork server could start; its answer is kept while the interpreter and its
      // packages stay as they were.
      pythonProbeCache: join(resolve(values['data-dir'] ?? defaultDataDir()), 'cache', 'python-probe.json'),
    });
    if (runtime !== 'pyodide') rt.native.prestart(positionals.length === 1 && existsSync(positionals[0]!) ? readFileSync(positionals[0]!, 'utf8') : undefined);
    let ssh: SshConnection | null = null;
    let db: Db | undefined;
    let service: EpisodeService | undefined;
    try {
      const [{ openDatabase }, { openDataDir, fmtNum }, { getEnvironmentByHash, search }, { memoryCatalog }, { EpisodeService }, { EpisodeStore }, { modelPlayer }, { RunService }, { SettingsStore }] = await Promise.all([
        import('../../memory/db'),
        import('../../memory/cliDb'),
        import('../../memory/repository'),
        import('../../episodes/catalog'),
        import('../../episodes/service'),
        import('../../episodes/episodeStore'),
        import('../../episodes/agent'),
        import('../../runs/service'),
        import('../../memory/settingsStore'),
      ]);

      // --via-job: the endpoint is the server as that job's SSH host sees it; every request goes
      // through a forwarded channel of one SSH connection (the job's login, the workbench's known_hosts).
      let viaFetch: typeof fetch | undefined;
      if (cfg.via) {
        const [{ JobStore }, { SshConnection }, { tunnelFetch }] = await Promise.all([import('../../jobs/jobStore'), import('../../jobs/ssh/connection'), import('../../models/tunnel')]);
        const jobs = openDataDir(values['data-dir']);
        try {
          const job = new JobStore(jobs.db).get(cfg.via.jobId);
          if (!job) throw new UsageError(`No job ${cfg.via.jobId} in ${jobs.dataDir} (--via-job takes a job id from the Jobs panel; --data-dir names another library)`);
          if (!job.spec.ssh) throw new UsageError(`Job ${job.name} (${job.id}) has no SSH host: --via-job needs a job run over SSH or Slurm`);
          ssh = new SshConnection(job.spec.ssh, { appKnownHosts: join(jobs.dataDir, 'ssh', 'known_hosts') });
          viaFetch = tunnelFetch(ssh.forwarder(`job ${job.name}`));
        } finally {
          jobs.db.close();
        }
      }

      // One ENV.py plays in a private in-memory library unless --data-dir names one; a selection
      // reads (and records into) the library at --data-dir (or the default one).
      const useLibrary = values.selection !== undefined || values['data-dir'] !== undefined;
      if (values['data-dir'] !== undefined) mkdirSync(values['data-dir'], { recursive: true });
      db = useLibrary ? openDataDir(values['data-dir']).db : openDatabase(':memory:');
      const catalog = memoryCatalog(db);
      const svc = new EpisodeService({ store: new EpisodeStore(db), catalog, runtime: rt, defaults: () => ({ maxTurns: budget }) });
      service = svc;
      const runDb = db;
      const runs = new RunService({ db: runDb, catalog, minShare: () => new SettingsStore(runDb).get().runMinSuccess });
      let hashes: string[];
      let hintFor: (h: string) => string | null | undefined = () => undefined;
      const names = new Map<string, string>();
      const recorded = new Map<string, { regret: number | null; skill: string | null; winRate: number | null }>();
      let arms: ('hint' | 'nohint')[];
      if (positionals.length === 1) {
        const file = positionals[0]!;
        if (!existsSync(file)) throw new UsageError(`No such file: ${file}`);
        const hash = catalog.add(readFileSync(file, 'utf8'), null, file);
        // The hint verbatim (SPADE injects it with its whitespace): no trimming.
        let hint = values.hint ?? (values['hint-file'] !== undefined ? readFileSync(values['hint-file'], 'utf8') : null);
        const sibling = join(dirname(file), `${basename(file, '.py')}_hint.txt`);
        if (hint === null && values['compare-hint'] && existsSync(sibling)) hint = readFileSync(sibling, 'utf8');
        if (values['compare-hint'] && hint === null) throw new UsageError(`--compare-hint needs a hint: --hint, --hint-file, or ${sibling}`);
        hashes = [hash];
        names.set(hash, basename(file));
        hintFor = () => hint;
        arms = values['compare-hint'] ? ['hint', 'nohint'] : hint !== null ? ['hint'] : ['nohint'];
      } else {
        const r = search(db, { query: values.selection!, limit: 1000, filters: {} });
        if (r.rows.length === 0) throw new UsageError(`No environment in the library matches "${values.selection}"`);
        hashes = r.rows.map((e) => e.hash);
        for (const e of r.rows) {
          names.set(e.hash, e.name);
          recorded.set(e.hash, { regret: e.regret, skill: e.skill ?? null, winRate: e.winRate });
        }
        arms = ['hint', 'nohint'];
      }
      const total = hashes.length * seeds * arms.length;
      for (const h of hashes) {
        const e = getEnvironmentByHash(runDb, h);
        if (e && !recorded.has(h)) recorded.set(h, { regret: e.regret, skill: e.skill ?? null, winRate: e.winRate });
      }
      const runId = `run-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
      const hintOverride = positionals.length === 1 ? hintFor(hashes[0]!) ?? null : null;
      const record = runs.begin({
        id: runId,
        model: cfg.model,
        endpoint: cfg.baseUrl,
        config: { endpoint: { baseUrl: cfg.baseUrl, model: cfg.model, ...(values['api-key-env'] ? { apiKeyEnv: values['api-key-env'] } : {}), ...(cfg.via ? { via: cfg.via } : {}) }, sampling: { temperature: cfg.temperature, topP: cfg.topP, topK: cfg.topK, maxTokens: cfg.maxTokens, thinking: cfg.thinking }, hintText: hintOverride },
        hintSource: positionals.length === 1 ? (values.hint !== undefined ? 'given' : values['hint-file'] !== undefined ? 'file' : hintOverride !== null ? 'sibling _hint.txt' : 'none') : 'library',
        seeds,
        seedStart,
        arms,
        maxTurns: budget,
        runtime,
        selection: values.selection ?? null,
        hashes,
        // play plays N chosen seeds on both arms: the paired estimator, labelled as such in the run.
        estimator: 'paired',
      });
      let status: 'done' | 'cancelled' | 'failed' = 'failed';
      let runError: string | null = null;
      const meter = new Throughput();
      const res = await svc.regretMany({
        hashes,
        estimator: 'paired',
        seeds,
        seedStart,
        hintFor,
        maxTurns: budget,
        runtime: runtime === 'auto' ? undefined : runtime,
        concurrency,
        arms,
        runId,
        recorded: record,
        player: modelPlayer(new ChatClient(cfg, { ...(viaFetch ? { fetch: viaFetch } : {}), onCompletion: (c) => meter.add(c) }), { thinking: cfg.thinking === true, policy: { kind: 'llm', endpoint: cfg.baseUrl, ...(cfg.via ? { via: cfg.via } : {}), model: cfg.model, temperature: cfg.temperature, topP: cfg.topP, topK: cfg.topK, maxTokens: cfg.maxTokens, thinking: cfg.thinking } }),
        progress: (done) => {
          if (!values.json) io.err(meter.line(done, total));
        },
      }).then(
        (r) => ((status = r.cancelled ? 'cancelled' : 'done'), r),
        (e: unknown) => {
          runError = errorMessage(e);
          throw e;
        },
      ).finally(() => runs.end(runId, status, runError));
      const view = runs.get(runId);
      const ok = new Map(view.envs.flatMap((e) => e.episodes.map((x) => [`${x.envHash}:${x.hint ? 1 : 0}:${x.seed}`, x] as const)));
      const episodes = res.episodes.map((r) => {
        const got = svc.get(r.episodeId);
        const agent = (got.episode.meta.agent ?? {}) as Partial<Transcript> & { endedBy?: string };
        return {
          env: names.get(r.hash) ?? r.hash.slice(0, 12),
          hash: r.hash,
          episodeId: r.episodeId,
          seed: r.seed,
          hint: r.hint,
          // A failed episode has no return (null), only its error.
          return: r.failed ? null : r.ret,
          failed: r.failed,
          error: r.error ?? ok.get(`${r.hash}:${r.hint ? 1 : 0}:${r.seed ?? r.slot ?? 0}`)?.error ?? null,
          terminated: got.episode.terminated,
          truncated: got.episode.truncated,
          endedBy: r.endedBy,
          runtime: got.episode.runtime,
          steps: got.steps.map((s) => ({ idx: s.idx, kind: s.kind, action: s.action, rawAction: s.rawAction, observation: s.spade?.observation ?? s.observation, reward: s.spade ? s.spade.reward : s.reward, terminated: s.spade?.terminated ?? s.terminated, truncated: s.spade?.truncated ?? s.truncated, error: s.error?.message ?? null })),
          messages: agent.messages ?? [],
          turns: (agent.turns ?? []).map((t) => ({ turn: t.turn, kind: t.kind, action: t.action, calls: t.calls, finishReason: t.finishReason, usage: t.usage, latencyMs: Math.round(t.latencyMs), attempts: t.attempts, error: t.error })),
        };
      });
      const regret = view.envs.map((e) => ({
        env: names.get(e.envHash) ?? e.envName ?? e.envHash.slice(0, 12),
        hash: e.envHash,
        model: cfg.model,
        run_id: runId,
        skill: recorded.get(e.envHash)?.skill ?? null,
        // Measured by this run; null when not measured (see not_measured).
        r_hint: e.rHint,
        r_no_hint: e.rNoHint,
        regret: e.regret,
        win_rate: e.winRate,
        difficulty_score: e.difficulty,
        seeds: e.seeds,
        failed: e.failed,
        not_measured: e.notMeasured,
        hint_failed: e.hintFailed,
        // What a training run recorded for this game (imported), kept apart.
        recorded_regret: recorded.get(e.envHash)?.regret ?? null,
        recorded_win_rate: recorded.get(e.envHash)?.winRate ?? null,
      }));
      if (values.json) io.out(JSON.stringify({ run_id: runId, status: view.run.status, endpoint: cfg.baseUrl, ...(cfg.via ? { via: cfg.via } : {}), model: cfg.model, budget, failed: view.failedText, episodes, regret }, null, 2));
      else {
        for (const e of episodes) io.out(`${e.env.padEnd(28)} seed ${String(e.seed).padStart(5)} ${e.hint ? 'hint   ' : 'no hint'} ${e.return === null ? `FAILED: ${e.error ?? 'no return'}` : `return ${e.return.toFixed(2).padStart(5)}  ${e.turns.length} turns  ${e.endedBy}${e.endedBy === 'refused' && e.error ? `: ${e.error}` : ''}`}`);
        io.out('');
        for (const r of regret) {
          const nums = r.not_measured ? `not measured (${r.not_measured})` : `R(hint) ${fmtNum(r.r_hint)}  R(no hint) ${fmtNum(r.r_no_hint)}  regret ${fmtNum(r.regret)}  win rate ${fmtNum(r.win_rate)}`;
          io.out(`${r.env.padEnd(28)} ${nums}${r.recorded_regret !== null ? `  (recorded by training: ${r.recorded_regret.toFixed(3)})` : ''}`);
        }
        io.out(`run ${runId} (${cfg.model}): ${view.run.status}${view.failedText ? `, ${view.failedText}` : ''}`);
        io.out(meter.line(res.episodes.length, total));
      }
      return 0;
    } finally {
      await service?.closeAll();
      await rt.shutdown();
      await LocalEngine.closeAll();
      db?.close();
      ssh?.close();
    }
  },
};
