import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp';
import { startStandIn, type StandIn } from '../../helpers/standInOpenAi';
import { luckySevenGame } from '../../helpers/designGames';
import { ciRay, ciServices, rayRest } from '../jobs/helpers';
import { cli, slurmArgs } from './pool';

// `design --on`: each attempt's checks (SPADE's, the audit's, the hint-leak check) run on the real
// one-node Ray head and through the real Slurm of .ci/services.sh, and give the same verdicts as on
// this machine. The designer is the stand-in server (a scripted model: a broken answer, then a game
// with a hint that gives its answer away, so every kind of verdict is in the comparison).
const ray = ciRay();
const ci = ciServices();
if (!ray || !ci?.slurm) console.warn('[design --on test skipped] no Ray head or Slurm: `.ci/services.sh start` (CI does)');
const d = ray && ci?.slurm ? describe : describe.skip;

interface RoundJson {
  status: string;
  checks_on: string;
  games: { accepted: boolean; hint: string | null; hint_leak: unknown; attempts: { rejected_because: string | null; verdicts: { id: string; status: string; message?: string }[] }[] }[];
}

/** What must match wherever the checks ran; `timing` measures the wall time of whichever machine ran it. */
const comparable = (r: RoundJson) =>
  r.games.map((g) => ({ accepted: g.accepted, hint: g.hint, hintLeak: g.hint_leak, attempts: g.attempts.map((a) => ({ rejected: a.rejected_because, verdicts: a.verdicts.filter((v) => v.id !== 'timing') })) }));

d('design --on: the checks of each attempt run on the target, with the same verdicts', () => {
  const tmp = tempDir('spade-design-on-');
  let server: StandIn;
  let local: RoundJson;
  const round = async (data: string, on: string[]) => {
    const r = await cli(['design', '--skills', 'Logical Deduction', '--count', '1', '--designer', server.url, '--designer-model', 'designer', '--agent', server.url, '--agent-model', 'agent', '--attempts', '2', '--play-seeds', '0', '--max-turns', '4', '--seed', '3', '--data-dir', join(tmp.dir, data), '--json', ...on]);
    expect(r.code, r.err).toBe(0);
    return JSON.parse(r.out) as RoundJson;
  };
  beforeAll(async () => {
    let designs = 0;
    server = await startStandIn((b) => {
      const m = b.messages as { role: string; content: string }[];
      // The hinter gives the secret away: the hint-leak check has something to say.
      if (m[0]!.role === 'system' && m[0]!.content.includes('short hint')) return { content: 'Answer \\boxed{7}.' };
      designs++;
      return { content: designs % 2 === 1 ? 'I forgot the code.' : `\`\`\`python\n${luckySevenGame('LuckyEnv')}\`\`\`` };
    });
    local = await round('local', []);
    expect(local.checks_on).toBe('local');
    expect(local.games[0]!.accepted).toBe(true);
    expect(local.games[0]!.attempts).toHaveLength(2);
  }, 180_000);
  afterAll(async () => {
    await server.close();
    tmp.cleanup();
  });

  it('on the Ray head: one Ray job a check', async () => {
    const before = await rayRest(ray!.address, 'GET', '/api/jobs/');
    const seen = new Set((JSON.parse(before.text) as { submission_id: string }[]).map((j) => j.submission_id));
    const target = `ray://${new URL(ray!.address).host}`;
    const r = await round('ray', ['--on', target, '--ray-python', join(ray!.bin, 'python')]);
    expect(r.checks_on).toBe(target);
    expect(comparable(r)).toEqual(comparable(local));
    const after = JSON.parse((await rayRest(ray!.address, 'GET', '/api/jobs/')).text) as { submission_id: string; status: string }[];
    const mine = after.filter((j) => !seen.has(j.submission_id) && j.submission_id.startsWith('spade_audit_check-'));
    // Both attempts' audits (the broken answer is judged as SPADE judges it: it does not load) and the hint-leak check.
    expect(mine.map((j) => j.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
  }, 180_000);

  it('through Slurm: one array job a check, in its own folder on the host', async () => {
    const home = ci!.user === 'root' ? '/root' : `/home/${ci!.user}`;
    const folder = join(home, '.spade_workbench', 'audits');
    const before = new Set(existsSync(folder) ? readdirSync(folder) : []);
    const target = `slurm:${ci!.user}@${ci!.host}:${ci!.port}`;
    const r = await round('slurm', slurmArgs(ci!));
    expect(r.checks_on).toBe(target);
    expect(comparable(r)).toEqual(comparable(local));
    expect(readdirSync(folder).filter((f) => !before.has(f) && f.startsWith('check-'))).toHaveLength(3);
  }, 180_000);
});
