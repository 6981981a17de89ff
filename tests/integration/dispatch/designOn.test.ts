import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp';
import { startStandIn, type StandIn } from '../../helpers/standInOpenAi';
import { luckySevenGame } from '../../helpers/designGames';
import { openDatabase } from '../../../core/memory/db';
import { RunStore } from '../../../core/runs/runStore';
import { RunService } from '../../../core/runs/service';
import { EpisodeStore } from '../../../core/episodes/episodeStore';
import { memoryCatalog } from '../../../core/episodes/catalog';
import { playGameOn } from '../../../core/design/plays';
import { SweepCancelled } from '../../../core/sweeps/sweep';
import { parseTarget } from '../../../core/sweeps/targets';
import { probePython } from '../../../core/runtime/native';
import { failure } from '../../../core/runtime/types';
import { ciRay, ciServices, rayRest } from '../jobs/helpers';
import { cli, slurmArgs } from './pool';

// `design --on`: each attempt's checks (SPADE's, the audit's, the hint-leak check) and the accepted
// game's plays run on the real one-node Ray head and through the real Slurm of .ci/services.sh, and
// give the same verdicts, regret, win rate, episodes and run record as on this machine. The designer
// and the agent are the stand-in server (a scripted model: a broken answer, then a game with a hint
// that gives its answer away, so every kind of verdict is in the comparison; an agent that wins with
// the hint and, without it, on some seeds only, so win rate and regret are neither 0 nor 1 by chance).
const ray = ciRay();
const ci = ciServices();
if (!ray || !ci?.slurm) console.warn('[design --on test skipped] no Ray head or Slurm: `.ci/services.sh start` (CI does)');
const d = ray && ci?.slurm ? describe : describe.skip;

interface RoundJson {
  status: string;
  checks_on: string;
  plays_on: string | null;
  data_dir: string;
  games: {
    accepted: boolean;
    env_id: number | null;
    hint: string | null;
    hint_leak: unknown;
    regret: number | null;
    win_rate: number | null;
    class: string | null;
    difficulty_score: number | null;
    play_error: string | null;
    plays_on: string | null;
    run_id: string | null;
    attempts: { rejected_because: string | null; verdicts: { id: string; status: string; message?: string }[] }[];
  }[];
}

/** What must match wherever the checks ran; `timing` measures the wall time of whichever machine ran it. */
const comparable = (r: RoundJson) =>
  r.games.map((g) => ({
    accepted: g.accepted,
    hint: g.hint,
    hintLeak: g.hint_leak,
    attempts: g.attempts.map((a) => ({ rejected: a.rejected_because, verdicts: a.verdicts.filter((v) => v.id !== 'timing') })),
    played: { regret: g.regret, winRate: g.win_rate, cls: g.class, difficulty: g.difficulty_score, error: g.play_error },
  }));

/**
 * What the round kept of its plays: the run record (less its id, times and where it ran) with its
 * episode rows, and each recorded episode's return, ending and transcript. `on` is returned apart.
 */
function kept(r: RoundJson): { on: unknown; sweep: unknown; run: unknown; episodes: unknown[] } {
  const runId = r.games[0]!.run_id!;
  const db = openDatabase(join(r.data_dir, 'workbench.sqlite'));
  try {
    const store = new RunStore(db);
    const run = store.get(runId)!;
    const { on, sweep, ...endpoint } = run.config.endpoint;
    const rows = db.prepare("SELECT hint_enabled, seed, hint_text, max_turns, label, meta FROM episodes WHERE json_extract(meta, '$.run') = ? ORDER BY hint_enabled, seed").all(runId) as { meta: string }[];
    return {
      on,
      sweep,
      run: { model: run.model, endpoint: run.endpoint, endpointConfig: endpoint, sampling: run.config.sampling, seeds: run.seeds, arms: run.arms, maxTurns: run.maxTurns, selection: run.selection, status: run.status, episodes: store.episodes(runId).map(({ episodeId: _id, ...e }) => e) },
      episodes: rows.map((e) => {
        const meta = JSON.parse(e.meta) as { spadeReturn?: number; endedBy?: string; agent?: { messages?: unknown } };
        return { ...e, meta: undefined, ret: meta.spadeReturn, endedBy: meta.endedBy, messages: meta.agent?.messages };
      }),
    };
  } finally {
    db.close();
  }
}

d('design --on: the checks of each attempt run on the target, with the same verdicts', () => {
  const tmp = tempDir('spade-design-on-');
  let server: StandIn;
  let local: RoundJson;
  let onRay: RoundJson | null = null;
  /** While set, the agent's answers wait this long (plays to cancel while they are in flight). */
  let slowAgent = 0;
  const round = async (data: string, on: string[]) => {
    const r = await cli(['design', '--skills', 'Logical Deduction', '--count', '1', '--designer', server.url, '--designer-model', 'designer', '--agent', server.url, '--agent-model', 'agent', '--attempts', '2', '--estimator', 'paired', '--play-seeds', '3', '--max-turns', '4', '--seed', '3', '--data-dir', join(tmp.dir, data), '--json', ...on]);
    expect(r.code, r.err).toBe(0);
    return JSON.parse(r.out) as RoundJson;
  };
  beforeAll(async () => {
    let designs = 0;
    server = await startStandIn((b) => {
      const m = b.messages as { role: string; content: string }[];
      // The hinter gives the secret away: the hint-leak check has something to say.
      if (m[0]!.role === 'system' && m[0]!.content.includes('short hint')) return { content: 'Answer \\boxed{7}.' };
      // The agent: with the hint it answers 7; without, it wins only where the round number is odd, at its second turn.
      if (m[0]!.content.startsWith('You are playing a language game')) {
        if (slowAgent) return { content: 'thinking', delayMs: slowAgent };
        if (m[0]!.content.includes('\n\nHINT: ')) return { content: 'The hint says \\boxed{7}' };
        const odd = Number(/Round (\d+)/.exec(m[0]!.content)?.[1] ?? 0) % 2 === 1;
        return { content: odd && m.length === 3 ? 'Now \\boxed{7}' : 'Maybe \\boxed{3}' };
      }
      designs++;
      return { content: designs % 2 === 1 ? 'I forgot the code.' : `\`\`\`python\n${luckySevenGame('LuckyEnv')}\`\`\`` };
    });
    local = await round('local', []);
    expect(local.checks_on).toBe('local');
    expect(local.games[0]!.accepted).toBe(true);
    expect(local.games[0]!.attempts).toHaveLength(2);
    // The plays really ran: the hint wins every episode, and only some seeds without it.
    expect(local.plays_on).toBe('local');
    expect(local.games[0]!.play_error).toBeNull();
    expect(local.games[0]!.win_rate).toBeGreaterThan(0);
    expect(local.games[0]!.win_rate).toBeLessThan(1);
    expect(local.games[0]!.regret).toBeGreaterThan(0);
    expect(kept(local).on).toBe('local');
    expect(kept(local).episodes).toHaveLength(6);
  }, 180_000);
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  it('on the Ray head: one Ray job a check, one for the plays', async () => {
    const before = await rayRest(ray!.address, 'GET', '/api/jobs/');
    const seen = new Set((JSON.parse(before.text) as { submission_id: string }[]).map((j) => j.submission_id));
    const target = `ray://${new URL(ray!.address).host}`;
    const r = await round('ray', ['--on', target, '--ray-python', join(ray!.bin, 'python')]);
    onRay = r;
    expect(r.checks_on).toBe(target);
    expect(r.plays_on).toBe(target);
    expect(r.games[0]!.plays_on).toBe(target);
    expect(comparable(r)).toEqual(comparable(local));
    const there = kept(r);
    expect(there.on).toBe(target);
    expect({ ...there, on: null, sweep: null }).toEqual({ ...kept(local), on: null, sweep: null });
    const after = JSON.parse((await rayRest(ray!.address, 'GET', '/api/jobs/')).text) as { submission_id: string; status: string }[];
    const mine = after.filter((j) => !seen.has(j.submission_id) && j.submission_id.startsWith('spade_audit_check-'));
    // Both attempts' audits (the broken answer is judged as SPADE judges it: it does not load) and the hint-leak check.
    expect(mine.map((j) => j.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    // The accepted game's six episodes: one regret job, its sweep's (other tests' sweeps may run on the head meanwhile).
    expect(after.filter((j) => j.submission_id.startsWith(`spade_regret_${String(there.sweep)}_`)).map((j) => j.status)).toEqual(['SUCCEEDED']);
  }, 180_000);

  it('through Slurm: one array job a check and one for the plays, each in its own folder on the host', async () => {
    const home = ci!.user === 'root' ? '/root' : `/home/${ci!.user}`;
    const folder = join(home, '.spade_workbench', 'audits');
    const plays = join(home, '.spade_workbench', 'regrets');
    const before = new Set(existsSync(folder) ? readdirSync(folder) : []);
    const playsBefore = new Set(existsSync(plays) ? readdirSync(plays) : []);
    const target = `slurm:${ci!.user}@${ci!.host}:${ci!.port}`;
    const r = await round('slurm', slurmArgs(ci!));
    expect(r.checks_on).toBe(target);
    expect(r.plays_on).toBe(target);
    expect(comparable(r)).toEqual(comparable(local));
    const there = kept(r);
    expect(there.on).toBe(target);
    expect({ ...there, on: null, sweep: null }).toEqual({ ...kept(local), on: null, sweep: null });
    expect(readdirSync(folder).filter((f) => !before.has(f) && f.startsWith('check-'))).toHaveLength(3);
    // The plays' array job ran in the sweep's own folder (other tests' sweeps may run meanwhile).
    expect(readdirSync(plays).filter((f) => !playsBefore.has(f))).toContain(String(there.sweep));
    expect(readdirSync(join(plays, String(there.sweep), '0')).filter((f) => f.startsWith('results-'))).not.toHaveLength(0);
  }, 180_000);

  it("on the Ray head: a cancelled round's plays stop there, and the game's run record says cancelled", async () => {
    // The game the Ray round accepted, played again as another game of a round that is cancelled
    // while its first episode waits on the agent (the round hands its signal to the plays).
    const r = onRay ?? (await round('ray-cancel', ['--on', `ray://${new URL(ray!.address).host}`, '--ray-python', join(ray!.bin, 'python')]));
    const db = openDatabase(join(r.data_dir, 'workbench.sqlite'));
    const before = new Set((JSON.parse((await rayRest(ray!.address, 'GET', '/api/jobs/')).text) as { submission_id: string }[]).map((j) => j.submission_id));
    const { hash, name } = db.prepare('SELECT head_hash AS hash, name FROM environments WHERE id = ?').get(r.games[0]!.env_id) as { hash: string; name: string };
    const runs = new RunService({ db, catalog: memoryCatalog(db), minShare: () => 1 });
    const nowhere = { open: async () => ({ ok: false as const, runtime: 'cpython' as const, error: { kind: 'unavailable' as const, type: 'unavailable', message: 'plays on the cluster' } }), call: async () => failure('unknown_session', 'none'), close: async () => undefined };
    const ac = new AbortController();
    slowAgent = 60_000;
    const asked = server.requests.length;
    try {
      const playing = playGameOn(
        { db, dataDir: r.data_dir, store: new EpisodeStore(db), runs, runtime: nowhere },
        {
          target: parseTarget(`ray://${new URL(ray!.address).host}`) as { kind: 'ray'; address: string },
          dispatch: { workers: 1, shardSize: 1, envTimeoutSec: 120, python: probePython()!.path, rayPython: join(ray!.bin, 'python') },
          roundId: 'design-cancelled',
          seq: 9,
          idx: 0,
          hash,
          name,
          envId: r.games[0]!.env_id,
          hint: r.games[0]!.hint,
          seeds: 3,
          estimator: 'paired',
          budget: 4,
          stepTimeoutSec: 30,
          model: { baseUrl: server.url, model: 'agent', temperature: 1, topP: 0.95, topK: 20, maxTokens: 256, thinking: null, turnTimeoutMs: 600_000, retries: 2 },
        },
        ac.signal,
      );
      const outcome = playing.then(
        () => 'finished',
        (e: unknown) => e,
      );
      // An episode is in flight on the head: its agent request has reached the server.
      while (server.requests.length === asked) await new Promise((res) => setTimeout(res, 200));
      ac.abort();
      expect(await outcome).toBeInstanceOf(SweepCancelled);
    } finally {
      slowAgent = 0;
    }
    const sweepId = String(new RunStore(db).get('design-cancelled-g1')!.config.endpoint.sweep);
    const jobs = (JSON.parse((await rayRest(ray!.address, 'GET', '/api/jobs/')).text) as { submission_id: string; status: string }[]).filter((j) => !before.has(j.submission_id) && j.submission_id.startsWith(`spade_regret_${sweepId}_`));
    expect(jobs.map((j) => j.status)).toEqual(['STOPPED']);
    const run = new RunStore(db).get('design-cancelled-g1')!;
    expect(run.status).toBe('cancelled');
    expect(new RunStore(db).episodes('design-cancelled-g1')).toEqual([]);
    db.close();
  }, 180_000);
});
