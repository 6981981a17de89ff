import { TARGET_OPTIONS, cliTarget, nodePython, reachSettings } from './targetOptions';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { CliIO, Command } from '../command';
import { UsageError } from '../command';
import { commandInfo } from '../catalog';
import type { Policy } from '../../api/calls/episodes';
import { errorMessage } from '../../api/errorMessage';
import type { SweepProgress } from '../../sweeps/sweep';
import { followSweep } from './sweepCli';
import { refuseIfOwned } from '../../sweeps/sweepOwner';
import { getSweep, setSweepState, type SweepRow } from '../../sweeps/sweepStore';
import { remoteExecutor, type DispatchSettings, type SweepTarget } from '../../sweeps/targets';
import { parseActionsFile } from '../../episodes/actionsFile';
import { SPADE_DEFAULT_BUDGET } from '../../episodes/spade';
import { openDataDir } from '../../memory/cliDb';
import { failure } from '../../runtime/types';
import type { RuntimePort } from '../../episodes/session';
import { SPADE_SAMPLING } from '../../models/client';
import type { SweepModel } from '../../episodes/regretRemote';
import { regretReport, reportEpisodes, reportLines } from '../../episodes/regretReport';
import { spadeOptions } from '../../episodes/estimator';
import { cliEstimator, ESTIMATOR_OPTIONS } from './estimatorOptions';

/** `solution`, `random[:SEED]` or `script:FILE` (a JSON array of texts, or one action a line). */
function parsePolicy(v: string | undefined, extract: boolean): Policy {
  if (v === undefined || v === 'solution') return { kind: 'solution' };
  const random = /^random(?::(-?\d+))?$/.exec(v);
  if (random) return { kind: 'random', lo: 1, hi: 100, ...(random[1] !== undefined ? { seed: Number(random[1]) } : {}) };
  const script = /^script:(.+)$/.exec(v);
  if (script) {
    const file = script[1]!;
    if (!existsSync(file)) throw new UsageError(`--policy script:FILE: no such file: ${file}`);
    return { kind: 'script', actions: parseActionsFile(readFileSync(file, 'utf8')), extract };
  }
  throw new UsageError(`--policy must be solution, random[:SEED] or script:FILE, got ${v}`);
}

function progressLine(label: string, p: SweepProgress): string {
  const rate = p.envsPerSec !== null ? `, ${p.envsPerSec.toFixed(1)} episodes/s` : '';
  return `regret sweep ${p.sweepId} on ${label}: ${p.done}/${p.total} episodes (${p.failed} failed${p.repeats ? `, ${p.repeats} repeated result(s) not counted` : ''}${rate})${p.phase === 'submitting' ? ', submitting' : ''}`;
}

/** A runtime for a sweep whose episodes all play elsewhere: nothing opens here. */
const nowhere: RuntimePort = {
  open: async () => ({ ok: false, runtime: 'cpython', error: { kind: 'unavailable', type: 'unavailable', message: 'this sweep plays on a cluster, not here' } }),
  call: async () => failure('unknown_session', 'no session here'),
  close: async () => undefined,
};

/**
 * `regret --pool QUERY [--on TARGET]`: SPADE's hint-based regret of a scripted policy over the
 * library's environments that match QUERY, each episode an item of a sweep played here or on a
 * cluster and kept in SQLite as it arrives (a model-run record, `runs show`). The same command again
 * (or `--resume ID`) finishes an interrupted sweep; `--cancel ID` stops its work on the cluster.
 */
export const regretCommand: Command = {
  ...commandInfo('regret'),
  async run(argv: string[], io: CliIO): Promise<number> {
    const { values } = parseArgs({
      args: argv,
      allowPositionals: false,
      options: {
        pool: { type: 'string' },
        ...TARGET_OPTIONS,
        resume: { type: 'string' },
        cancel: { type: 'string' },
        policy: { type: 'string' },
        'no-extract': { type: 'boolean' },
        endpoint: { type: 'string' },
        model: { type: 'string' },
        'api-key-env': { type: 'string' },
        temperature: { type: 'string' },
        'top-p': { type: 'string' },
        'top-k': { type: 'string' },
        'max-tokens': { type: 'string' },
        thinking: { type: 'boolean' },
        timeout: { type: 'string' },
        retries: { type: 'string' },
        seeds: { type: 'string' },
        'seed-start': { type: 'string' },
        'max-turns': { type: 'string' },
        concurrency: { type: 'string' },
        'step-timeout': { type: 'string' },
        'shard-size': { type: 'string' },
        'data-dir': { type: 'string' },
        json: { type: 'boolean' },
        quiet: { type: 'boolean' },
        ...ESTIMATOR_OPTIONS,
      },
      strict: true,
    });
    const modes = [values.pool !== undefined, values.resume !== undefined, values.cancel !== undefined].filter(Boolean).length;
    if (modes !== 1) throw new UsageError('Give one of --pool QUERY, --resume SWEEP_ID or --cancel SWEEP_ID');
    const num = (v: string | undefined, name: string, lo: number, hi: number, dflt: number, int = true) => {
      if (v === undefined) return dflt;
      const n = Number(v);
      if (!Number.isFinite(n) || n < lo || n > hi || (int && !Number.isInteger(n))) throw new UsageError(`--${name} must be ${int ? 'an integer' : 'a number'} from ${lo} to ${hi}, got ${v}`);
      return n;
    };
    const target = cliTarget(values.on);
    if (values.on !== undefined && values.pool === undefined) throw new UsageError('--on goes with --pool; a resumed or cancelled sweep keeps the target it was started on');
    // SPADE's estimator (the default) has its own counts; paired seeds need --seeds N.
    const { estimator, spade } = cliEstimator(values);
    if (values.pool !== undefined && estimator === 'paired' && values.seeds === undefined) throw new UsageError('--seeds N is required with --estimator paired');
    if (estimator === 'spade' && (values.seeds !== undefined || values['seed-start'] !== undefined)) throw new UsageError("--seeds and --seed-start choose paired seeds: SPADE's estimator seeds its hinted plays from the game's path (--hint-plays N, --nohint-plays N, --hash-seed N), or give --estimator paired");
    const policy = parsePolicy(values.policy, values['no-extract'] !== true);
    if ((values.endpoint === undefined) !== (values.model === undefined)) throw new UsageError('A served model needs both --endpoint URL and --model NAME');
    if (values.endpoint !== undefined && values.policy !== undefined) throw new UsageError('Give --policy or --endpoint/--model, not both');
    if (values.endpoint !== undefined && !/^https?:\/\//.test(values.endpoint)) throw new UsageError(`--endpoint must be an http(s) URL reachable from where the episodes play, got ${values.endpoint}`);
    const model: SweepModel | undefined =
      values.endpoint !== undefined
        ? {
            baseUrl: values.endpoint,
            model: values.model!,
            ...(values['api-key-env'] ? { apiKeyEnv: values['api-key-env'] } : {}),
            temperature: num(values.temperature, 'temperature', 0, 5, SPADE_SAMPLING.temperature, false),
            topP: num(values['top-p'], 'top-p', 0, 1, SPADE_SAMPLING.topP, false),
            topK: values['top-k'] === 'none' ? null : num(values['top-k'], 'top-k', -1, 1_000_000, SPADE_SAMPLING.topK),
            maxTokens: num(values['max-tokens'], 'max-tokens', 1, 10_000_000, SPADE_SAMPLING.maxTokens),
            thinking: values.thinking ? true : null,
            turnTimeoutMs: num(values.timeout, 'timeout', 1, 3600, SPADE_SAMPLING.turnTimeoutMs / 1000, false) * 1000,
            retries: num(values.retries, 'retries', 0, 20, SPADE_SAMPLING.retries),
          }
        : undefined;
    const regret = {
      policy,
      budget: num(values['max-turns'], 'max-turns', 1, 10_000, SPADE_DEFAULT_BUDGET),
      seeds: num(values.seeds, 'seeds', 1, 100_000, 1),
      seedStart: num(values['seed-start'], 'seed-start', 0, 2 ** 31 - 1, 0),
      stepTimeoutSec: num(values['step-timeout'], 'step-timeout', 1, 600, 30, false),
      ...(model ? { model } : {}),
      estimator,
      ...(estimator === 'spade' ? { spade: spadeOptions(spade) } : {}),
    };
    const concurrency = num(values.concurrency, 'concurrency', 1, 1024, Math.max(1, Math.min(4, availableParallelism())));
    const python = nodePython(values, values.pool !== undefined && target.kind !== 'local');
    const dispatch: DispatchSettings = {
      workers: Math.max(1, cpus().length),
      shardSize: num(values['shard-size'], 'shard-size', 1, 100_000, 30),
      envTimeoutSec: 120,
      python,
      ...reachSettings(values),
    };
    const { db, dataDir } = openDataDir(values['data-dir']);
    const [{ prepareRegretSweep, driveRegretSweep }, { EpisodeStore }, { RunService }, { memoryCatalog }, { SettingsStore }] = await Promise.all([
      import('../../runs/regretSweep'),
      import('../../episodes/episodeStore'),
      import('../../runs/service'),
      import('../../episodes/catalog'),
      import('../../memory/settingsStore'),
    ]);
    let rt: import('../../runtime/service').RuntimeService | null = null;
    try {
      let sweep: SweepRow;
      if (values.pool !== undefined) {
        const prepared = prepareRegretSweep(db, values.pool, { regret, dispatch, target });
        if (!prepared.sweep.items.length) throw new UsageError(`No environment in the library matches "${values.pool}"`);
        if (prepared.resumed) io.err(`Resuming regret sweep ${prepared.sweep.id} (the same pool, policy, seeds and target, interrupted earlier).`);
        sweep = prepared.sweep;
      } else {
        const id = (values.resume ?? values.cancel)!;
        const found = getSweep(db, id);
        if (!found || found.kind !== 'regret') throw new UsageError(`No regret sweep ${id} in ${dataDir}${found ? ' (that is an audit sweep: audit --resume/--cancel)' : ''}`);
        sweep = found;
      }
      const stored = sweep.options as unknown as { target: SweepTarget; dispatch: DispatchSettings; runId: string; regret: typeof regret };
      if (values.cancel !== undefined) {
        // Another live process drives it: marked cancelled here, it would go on there.
        refuseIfOwned(db, sweep.id, 'Regret sweep', 'cancelled');
        const answers: string[] = [];
        if (stored.target.kind !== 'local') {
          const ex = remoteExecutor(stored.target, stored.dispatch, db, dataDir);
          try {
            for (const h of sweep.remote) answers.push(await ex.stop(h).catch((e: unknown) => `could not stop it: ${errorMessage(e)}`));
          } finally {
            await ex.close();
          }
        }
        if (sweep.state === 'running') setSweepState(db, sweep.id, 'cancelled', answers.join('; ') || null);
        io.out(`Regret sweep ${sweep.id} on ${sweep.target}: cancelled${answers.length ? ` (${answers.join('; ')})` : ''}.\n`);
        return 0;
      }
      if (stored.target.kind === 'local') {
        const { RuntimeService } = await import('../../runtime/service');
        rt = new RuntimeService({
          settings: () => ({ stepTimeoutSec: stored.regret.stepTimeoutSec, maxTurns: stored.regret.budget, defaultRuntime: 'cpython' }),
          poolSize: Math.max(1, Math.min(4, concurrency, availableParallelism())),
          pythonProbeCache: join(dataDir, 'cache', 'python-probe.json'),
        });
      }
      const catalog = memoryCatalog(db);
      const runs = new RunService({ db, catalog, minShare: () => new SettingsStore(db).get().runMinSuccess });
      const out = await followSweep(io, { kind: 'regret', sweepId: sweep.id, target: sweep.target, unit: 'episodes', quiet: values.quiet === true, progress: (p) => progressLine(sweep.target, p) }, (hooks) =>
        driveRegretSweep({ db, dataDir, store: new EpisodeStore(db), runs, runtime: rt ?? nowhere, concurrency }, sweep, hooks),
      );
      if (out === null) return 130;
      const view = runs.get(out.runId);
      const report = regretReport(sweep, out, view);
      if (values.json) io.out(JSON.stringify({ ...report, episodes: reportEpisodes(out.results) }, null, 2));
      else for (const line of reportLines(report, view.run.model)) io.out(line);
      return 0;
    } finally {
      await rt?.shutdown();
      db.close();
    }
  },
};
