/**
 * `openenv-play` and `openenv-audit`: the workbench as a client of any OpenEnv server (a URL), through
 * core/openenv/client.ts. The environment's code runs wherever that server runs it; nothing of it
 * runs here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { CliIO, Command } from '../command';
import { UsageError } from '../command';
import { commandInfo } from '../catalog';
import { describeServer, parseServerUrl, WireSession } from '../../openenv/client';
import { observationText, pinOf, playRemote, scriptedActor, type RemoteTurn } from '../../openenv/remotePlay';
import { auditWire, DEFAULT_WIRE_AUDIT } from '../../openenv/wireAudit';
import { SPADE_DEFAULT_BUDGET } from '../../episodes/spade';
import { defaultDataDir } from '../../base/dataDir';
import { errorMessage } from '../../api/errorMessage';
import type { WireAudit } from '../../openenv/wireAudit';

function int(v: string | undefined, name: string, dflt: number, lo: number, hi: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < lo || n > hi) throw new UsageError(`${name} must be an integer in ${lo}-${hi}, got ${v}`);
  return n;
}

/** One action per line; a line that parses as a JSON string is that string (so it may hold newlines). */
function readActions(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`Cannot read --actions ${file}: ${(e as Error).message}`);
  }
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      try {
        const v: unknown = JSON.parse(l);
        return typeof v === 'string' ? v : l;
      } catch {
        return l;
      }
    });
}

function url(v: string | undefined): string {
  if (!v) throw new UsageError('--url URL is required (the OpenEnv server, e.g. http://127.0.0.1:8000)');
  return parseServerUrl(v).href;
}

function showTurn(io: CliIO, t: RemoteTurn): void {
  const head = t.idx === 0 ? 'reset' : `step ${t.idx}: ${JSON.stringify(t.text)}`;
  if (t.error) return io.out(`${head}\n  error: ${t.error}`);
  io.out(`${head}\n  reward ${t.reward ?? 'none'}${t.done ? ', done' : ''}\n  ${observationText(t.observation).replace(/\n/g, '\n  ')}`);
}

export const openenvPlayCommand: Command = {
  ...commandInfo('openenv-play'),
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      options: {
        url: { type: 'string' },
        seed: { type: 'string' },
        seeds: { type: 'string' },
        'seed-start': { type: 'string' },
        hint: { type: 'string' },
        'max-turns': { type: 'string' },
        env: { type: 'string' },
        actions: { type: 'string' },
        endpoint: { type: 'string' },
        model: { type: 'string' },
        'max-tokens': { type: 'string' },
        'data-dir': { type: 'string' },
        json: { type: 'boolean' },
      },
      strict: true,
    });
    const base = url(values.url);
    const maxTurns = int(values['max-turns'], '--max-turns', SPADE_DEFAULT_BUDGET, 1, 10_000);
    const info = await describeServer(base);
    const reset = values.env !== undefined ? { env: values.env } : pinOf(info);
    if (values.endpoint !== undefined) return playModel(io, values, info, maxTurns, reset);
    if (values.hint !== undefined && values.hint !== 'on' && values.hint !== 'off') throw new UsageError('--hint is on or off when playing given actions');
    const hint = values.hint === 'on';
    const seed = values.seed === undefined ? null : int(values.seed, '--seed', 0, 0, 2 ** 31 - 1);
    const actions = values.actions !== undefined ? readActions(values.actions) : [];
    const session = await WireSession.open(base);
    try {
      const ep = await playRemote(session, info, { seed, hint, maxTurns, actor: scriptedActor(actions), reset, ...(values.json ? {} : { onTurn: (t: RemoteTurn) => showTurn(io, t) }) });
      const state = ep.endedBy === 'error' ? null : await session.state().catch(() => null);
      if (values.json) io.out(JSON.stringify({ server: { url: info.url, name: info.metadata.name ?? null, hint_mode: info.hintMode, action_field: info.textField }, ...ep, state }, null, 2));
      else io.out(`ended: ${ep.endedBy}; last reward ${ep.lastReward ?? 'none'}; ${info.hintMode === null ? 'this server has no hint' : `hint ${hint ? 'on' : 'off'} (server: ${info.hintMode})`}`);
      return ep.endedBy === 'error' ? 1 : 0;
    } finally {
      await session.close();
    }
  },
};

async function playModel(io: CliIO, values: Record<string, string | boolean | undefined>, info: Awaited<ReturnType<typeof describeServer>>, maxTurns: number, reset: Record<string, unknown>): Promise<number> {
  const endpoint = String(values.endpoint);
  const [{ ChatClient, SPADE_SAMPLING }, { DEFAULT_LOCAL_MODEL, isLocalEndpoint, LOCAL_SAMPLING }, { LocalEngine }, { openDataDir }, { RunService }, { SettingsStore }, { memoryCatalog }, { remoteCatalog, runRemote }, { EpisodeStore }, { recordRemoteEpisode }] = await Promise.all([
    import('../../models/client'),
    import('../../models/localModel'),
    import('../../models/localEngine'),
    import('../../memory/cliDb'),
    import('../../runs/service'),
    import('../../memory/settingsStore'),
    import('../../episodes/catalog'),
    import('../../openenv/remoteRun'),
    import('../../episodes/episodeStore'),
    import('../../openenv/remoteEpisodes'),
  ]);
  const local = isLocalEndpoint(endpoint);
  if (!local && !/^https?:\/\//.test(endpoint)) throw new UsageError(`--endpoint must be an http(s) URL or local, got ${endpoint}`);
  if (!local && values.model === undefined) throw new UsageError('--model NAME is required with an endpoint');
  const hintArg = (values.hint as string | undefined) ?? 'off';
  if (hintArg !== 'on' && hintArg !== 'off' && hintArg !== 'both') throw new UsageError(`--hint must be on, off or both, got ${hintArg}`);
  const arms: ('hint' | 'nohint')[] = hintArg === 'both' ? ['hint', 'nohint'] : hintArg === 'on' ? ['hint'] : ['nohint'];
  if (arms.includes('hint') && info.hintMode === null) throw new UsageError('This server has no hint (only the workbench\'s serve-env says it takes one): use --hint off');
  const seeds = int(values.seeds as string | undefined, '--seeds', 1, 1, 10_000);
  const seedStart = int(values['seed-start'] as string | undefined, '--seed-start', 0, 0, 2 ** 31 - 1);
  const model = (values.model as string | undefined) ?? DEFAULT_LOCAL_MODEL.name;
  const maxTokens = int(values['max-tokens'] as string | undefined, '--max-tokens', local ? LOCAL_SAMPLING.maxTokens : SPADE_SAMPLING.maxTokens, 1, 1_000_000);
  const client = new ChatClient({ baseUrl: endpoint, model, apiKey: null, temperature: SPADE_SAMPLING.temperature, topP: SPADE_SAMPLING.topP, topK: SPADE_SAMPLING.topK, maxTokens, thinking: null, turnTimeoutMs: SPADE_SAMPLING.turnTimeoutMs, retries: 2, concurrency: 1, stream: false });
  const { db } = openDataDir(values['data-dir'] as string | undefined, (m) => io.err(m));
  try {
    const runs = new RunService({ db, catalog: remoteCatalog(memoryCatalog(db), info, reset), minShare: () => new SettingsStore(db).get().runMinSuccess });
    // Each episode is kept as a record the episode view opens and replays (runtime 'openenv').
    const episodes = new EpisodeStore(db);
    const r = await runRemote(runs, { info, client, model, endpoint, sampling: { temperature: SPADE_SAMPLING.temperature, topP: SPADE_SAMPLING.topP, topK: SPADE_SAMPLING.topK, maxTokens, thinking: null }, arms, seeds, seedStart, maxTurns, reset, record: (e, policy) => recordRemoteEpisode(episodes, info, e, { maxTurns, policy, label: `openenv-play ${model}`, pin: reset }), onEpisode: (e, failed) => !values.json && io.out(`${e.hint ? 'hint' : 'nohint'} seed ${e.seed}: ${failed ? `failed: ${failed}` : `${e.turns.length - 1} turn(s), ended ${e.endedBy}, last reward ${e.lastReward ?? 'none'}`}`) });
    const view = runs.get(r.runId);
    const env = view.envs[0];
    if (values.json) io.out(JSON.stringify({ run_id: r.runId, status: view.run.status, model, endpoint, url: info.url, hint_mode: info.hintMode, episodes: r.episodes, r_hint: env?.rHint ?? null, r_no_hint: env?.rNoHint ?? null, regret: env?.regret ?? null }, null, 2));
    else io.out(`run ${r.runId} (${model} on ${info.url}): ${view.run.status}; r_no_hint ${env?.rNoHint ?? 'n/a'}, r_hint ${env?.rHint ?? 'n/a'}`);
    return r.episodes.every((e) => e.error) ? 1 : 0;
  } finally {
    db.close();
    if (local) await LocalEngine.closeAll();
  }
}

export const openenvAuditCommand: Command = {
  ...commandInfo('openenv-audit'),
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      options: { url: { type: 'string' }, seeds: { type: 'string' }, actions: { type: 'string' }, 'max-turns': { type: 'string' }, 'reward-range': { type: 'string' }, env: { type: 'string' }, 'data-dir': { type: 'string' }, json: { type: 'boolean' } },
      strict: true,
    });
    const base = url(values.url);
    const seeds = values.seeds === undefined ? DEFAULT_WIRE_AUDIT.seeds : values.seeds.split(',').map((s) => int(s.trim(), '--seeds', 0, 0, 2 ** 31 - 1));
    if (new Set(seeds).size < 2) throw new UsageError('--seeds needs at least two different seeds');
    let rewardRange = DEFAULT_WIRE_AUDIT.rewardRange;
    if (values['reward-range'] !== undefined) {
      const [lo, hi] = values['reward-range'].split(',').map(Number);
      if (!Number.isFinite(lo) || !Number.isFinite(hi) || lo! > hi!) throw new UsageError(`--reward-range is LO,HI, got ${values['reward-range']}`);
      rewardRange = [lo!, hi!];
    }
    const a = await auditWire(base, {
      seeds,
      rewardRange,
      maxTurns: int(values['max-turns'], '--max-turns', DEFAULT_WIRE_AUDIT.maxTurns, 1, 1000),
      ...(values.actions !== undefined ? { actions: readActions(values.actions) } : {}),
      ...(values.env !== undefined ? { reset: { env: values.env } } : {}),
    });
    await keepAudit(a, values['data-dir'], io);
    if (values.json) io.out(JSON.stringify(a, null, 2));
    else {
      io.out(`Wire audit of ${a.url} (${a.server.name ?? 'unnamed'}): ${a.verdict}. These are checks over OpenEnv's protocol, not SPADE's audit.`);
      for (const c of a.checks) io.out(`  ${c.status.padEnd(4)} ${c.id}: ${c.message}`);
    }
    return a.verdict === 'fail' ? 1 : 0;
  },
};

/**
 * The audit kept with the app's (the OpenEnv URL page lists them): in --data-dir, or in the default
 * data dir when a workbench database is already there; never a new database made for it. The output
 * stays as it was; a database that refuses the write is said on stderr, the audit still printed.
 */
async function keepAudit(a: WireAudit, dataDir: string | undefined, io: CliIO): Promise<void> {
  if (dataDir === undefined && !existsSync(join(defaultDataDir(), 'workbench.sqlite'))) return;
  const [{ openDataDir }, { WireAuditStore }] = await Promise.all([import('../../memory/cliDb'), import('../../openenv/wireAuditStore')]);
  const { db } = openDataDir(dataDir, (m) => io.err(m));
  try {
    new WireAuditStore(db).add(a, 'cli');
  } catch (e) {
    io.err(`warning: the audit was not kept in the database: ${errorMessage(e)}`);
  } finally {
    db.close();
  }
}
