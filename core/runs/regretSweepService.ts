import { availableParallelism } from 'node:os';
import type { CallInput } from '../api';
import type { RegretReport, RegretSweepView } from '../api/calls/runs';
import { errorMessage } from '../api/errorMessage';
import { BackgroundSweeps, type LiveView } from '../sweeps/backgroundSweeps';
import { recentSweeps, type SweepRow } from '../sweeps/sweepStore';
import { remoteExecutor, resolveTarget } from '../sweeps/targets';
import { DomainError } from '../errors';
import type { Db } from '../memory/db';
import { ChatClient, ModelError, SPADE_SAMPLING } from '../models/client';
import type { RunService } from './service';
import type { EventBus } from '../server/events';
import type { EpisodeDeps } from '../episodes/context';
import { regretSweeps, type SweepModel } from '../episodes/regretRemote';
import { regretReport } from '../episodes/regretReport';
import { driveRegretSweep, prepareRegretSweep, regretItems, storedOutcome, type StoredRegretOptions } from './regretSweep';
import type { EpisodeStore } from '../episodes/episodeStore';
import { spadeOptions } from '../episodes/estimator';

export interface RegretSweepServiceOptions {
  db: Db;
  dataDir: string;
  events: EventBus;
  store: EpisodeStore;
  runs: () => RunService;
  /** The app's runtime: a sweep on this machine plays in it. */
  runtime: EpisodeDeps['runtime'];
  /** SPADE's turn budget and the step limit as the user set them (the CLI's defaults are the same 30 turns and 30 s). */
  settings: () => { maxTurns: number; stepTimeoutSec: number };
  /** The session's secrets (jobs.setSecret): a served model's API key, by the name the sweep keeps. */
  secret?: (name: string) => string | undefined;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

type StartInput = CallInput<'runs.sweepStart'>;

/** What played, in words: the Runs page's model column says the same (policy:solution, the model's name). */
function policyText(o: StoredRegretOptions['regret']): string {
  if (o.model) return `${o.model.model} at ${o.model.baseUrl}`;
  if (o.policy.kind === 'random') return o.policy.seed !== undefined ? `random guesses (seed ${o.policy.seed})` : 'random guesses';
  if (o.policy.kind === 'script') return `a script of ${o.policy.actions.length} action(s)`;
  return 'solution()';
}

/**
 * Regret sweeps started from the app: the same sweep as `regret --pool` (regretSweep.ts), run in
 * the background with its progress as `runs.sweepProgress`, cancellable (its tasks on the engine
 * stopped) and resumable; its episodes are kept as a model run, so the Runs page lists it.
 */
export class RegretSweepService {
  private readonly sweeps: BackgroundSweeps<RegretSweepView>;

  constructor(private readonly o: RegretSweepServiceOptions) {
    this.sweeps = new BackgroundSweeps<RegretSweepView>(
      o.db,
      {
        info: regretSweeps,
        run: async (sweep, signal, onProgress, onSubmitted) => {
          const apiKey = await this.localKey(sweep, signal);
          return driveRegretSweep(
            { db: o.db, dataDir: o.dataDir, store: o.store, runs: o.runs(), runtime: o.runtime, concurrency: Math.max(1, Math.min(4, availableParallelism())), ...(apiKey !== undefined ? { apiKey } : {}) },
            sweep,
            { signal, onProgress, onSubmitted },
          );
        },
        stopInterrupted: (sweep) => this.stopInterrupted(sweep),
        view: (s, live, message) => regretView(s, live, message),
        emit: (view) => o.events.emit('runs.sweepProgress', view),
      },
      o.log,
    );
  }

  start(input: StartInput): RegretSweepView {
    const query = input.query.trim();
    const { target, dispatch } = resolveTarget(this.o.db, input.target ?? { kind: 'local' });
    const p = input.policy;
    const model: SweepModel | undefined =
      p.kind === 'model'
        ? {
            baseUrl: p.baseUrl,
            model: p.model,
            temperature: p.temperature ?? SPADE_SAMPLING.temperature,
            topP: p.topP ?? SPADE_SAMPLING.topP,
            topK: p.topK === undefined ? SPADE_SAMPLING.topK : p.topK,
            maxTokens: p.maxTokens ?? SPADE_SAMPLING.maxTokens,
            thinking: p.thinking ?? null,
            turnTimeoutMs: p.turnTimeoutSec !== undefined ? p.turnTimeoutSec * 1000 : SPADE_SAMPLING.turnTimeoutMs,
            retries: p.retries ?? SPADE_SAMPLING.retries,
            // The secret's name only: here the key comes from the session's store, on a node from its variable of that name.
            ...(p.apiKeySecret ? { apiKeyEnv: p.apiKeySecret } : {}),
          }
        : undefined;
    if (model?.apiKeyEnv && target.kind === 'local' && this.o.secret?.(model.apiKeyEnv) === undefined) throw new DomainError('invalid_input', noSecret(model.apiKeyEnv));
    const s = this.o.settings();
    const regret: StoredRegretOptions['regret'] = {
      // The CLI's `random[:SEED]`: guesses from 1 to 100 (SPADE's baseline); a model plays instead of the policy.
      policy: p.kind === 'random' ? { kind: 'random', lo: 1, hi: 100, ...(p.seed !== undefined ? { seed: p.seed } : {}) } : { kind: 'solution' },
      budget: input.maxTurns ?? s.maxTurns,
      seeds: input.seeds ?? 1,
      seedStart: input.seedStart ?? 0,
      stepTimeoutSec: s.stepTimeoutSec,
      ...(model ? { model } : {}),
      estimator: input.estimator ?? 'spade',
      ...((input.estimator ?? 'spade') === 'spade' ? { spade: spadeOptions(input.spade) } : {}),
    };
    const items = regretItems(this.o.db, query, regret.seeds, regret.seedStart, regret.estimator, regret.spade);
    if (!items.length) throw new DomainError('invalid_input', `No environment in the library matches "${query}"`);
    const prepared = prepareRegretSweep(this.o.db, query, { regret, dispatch, target }, items);
    if (prepared.resumed && this.sweeps.isLive(prepared.sweep.id)) return this.sweeps.view(prepared.sweep);
    return this.sweeps.drive(prepared.sweep);
  }

  resume(id: string): RegretSweepView {
    return this.sweeps.resume(id);
  }

  /** Stops the sweep's episodes (here, or its Ray job or Slurm array); what arrived stays. */
  cancel(id: string): Promise<{ cancelled: boolean; stopped: string[] }> {
    return this.sweeps.cancel(id);
  }

  list(limit: number): RegretSweepView[] {
    return recentSweeps(this.o.db, limit, regretSweeps.kind).map((s) => this.sweeps.view(s));
  }

  /** The report `regret --json` prints, over what has arrived (all of it once the sweep is done). */
  report(id: string): RegretReport {
    const sweep = this.sweeps.find(id);
    const out = storedOutcome(this.o.db, sweep);
    return regretReport(sweep, out, this.o.runs().get(out.runId));
  }

  busy(): number {
    return this.sweeps.busy();
  }

  /** Cancels what runs, as Ctrl-C does to the CLI (resumable), and waits for each to end. */
  close(): Promise<void> {
    return this.sweeps.close();
  }

  /**
   * The API key of a served model whose episodes play here (undefined for any other sweep), after
   * one short request to the server: a server that refuses it for want of a key (401, 403) fails the
   * sweep in words before any episode, where each would otherwise fail alike. Any other answer lets
   * the sweep go on, its episodes meeting the server as SPADE's do.
   */
  private async localKey(sweep: SweepRow, signal: AbortSignal): Promise<string | null | undefined> {
    const stored = sweep.options as unknown as StoredRegretOptions;
    const m = stored.regret.model;
    if (!m || stored.target.kind !== 'local') return undefined;
    const key = m.apiKeyEnv ? (this.o.secret?.(m.apiKeyEnv) ?? null) : null;
    if (m.apiKeyEnv && key === null) throw new DomainError('invalid_input', noSecret(m.apiKeyEnv));
    const probe = new ChatClient({ ...m, apiKey: key, maxTokens: 16, retries: 0, turnTimeoutMs: Math.min(m.turnTimeoutMs, 30_000), concurrency: 1, stream: false });
    try {
      await probe.complete([{ role: 'user', content: 'Say OK.' }], { signal });
    } catch (e) {
      if (e instanceof ModelError && (e.status === 401 || e.status === 403)) {
        const why = m.apiKeyEnv ? `it does not take the key held in secret ${m.apiKeyEnv}: set the right one in Episodes → Play with a model (key)` : 'it wants an API key: name the secret that holds it in Episodes → Play with a model (key secret, key), then start the sweep with that model';
        // The client has taken the key out of its message (a server may echo the key it refused).
        throw new DomainError('invalid_input', `The model server at ${m.baseUrl} refused the sweep (${e.message}): ${why}`);
      }
    }
    return key;
  }

  /** An interrupted sweep's Ray job or Slurm array, which may still run (regret --cancel). */
  private async stopInterrupted(sweep: SweepRow): Promise<string[]> {
    const stored = sweep.options as unknown as StoredRegretOptions;
    const stopped: string[] = [];
    if (stored.target.kind !== 'local') {
      const ex = remoteExecutor(stored.target, stored.dispatch, this.o.db, this.o.dataDir);
      try {
        for (const h of sweep.remote) stopped.push(await ex.stop(h).catch((e: unknown) => `could not stop it: ${errorMessage(e)}`));
      } finally {
        await ex.close();
      }
    }
    return stopped;
  }
}

function noSecret(name: string): string {
  return `No secret named ${name} is held in this session: set the key in Episodes → Play with a model (key secret ${name}, key) and start the sweep again. It is kept sealed, never written in plain text.`;
}

/** A served model's settings as the sweep keeps them (the key by its secret's name only). */
function modelSettings(m: SweepModel | undefined): RegretSweepView['modelSettings'] {
  if (!m) return null;
  return { temperature: m.temperature, topP: m.topP, topK: m.topK, maxTokens: m.maxTokens, thinking: m.thinking, turnTimeoutSec: m.turnTimeoutMs / 1000, retries: m.retries, apiKeySecret: m.apiKeyEnv ?? null };
}

function regretView(s: SweepRow, live: LiveView, message: string | null): RegretSweepView {
  const stored = s.options as unknown as StoredRegretOptions;
  const rate = live.progress?.envsPerSec ?? null;
  const total = s.items.length;
  return {
    id: s.id,
    query: s.query,
    target: s.target,
    state: live.state,
    phase: live.phase,
    done: live.done,
    total,
    failed: live.failed,
    message,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    runId: stored.runId,
    policy: policyText(stored.regret),
    seeds: stored.regret.seeds,
    seedStart: stored.regret.seedStart,
    budget: stored.regret.budget,
    estimator: stored.regret.estimator ?? 'paired',
    envs: new Set(s.items.map((it) => it.sha256)).size,
    episodesPerSec: rate,
    etaSec: live.running && rate ? (total - live.done) / rate : null,
    modelSettings: modelSettings(stored.regret.model),
  };
}
