// A design round run as a job on another machine (issue 33): the design-round recipe over the real
// sshd of .ci/services.sh (the "remote" is this machine reached through SSH, as a login node would
// be), a scripted designer and agent served there (the stand-in server: no model can be served here),
// the workbench's own CLI running the round, and its games flowing back into this library with
// their parents, named by hash.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildSpec } from '../../../core/jobs/launch';
import { MemorySecretStore } from '../../../core/jobs/secrets';
import { importPaths } from '../../../core/memory/importer';
import { packageRoot } from '../../../core/base/appInfo';
import { startStandIn } from '../../helpers/standInOpenAi';
import { luckySevenGame } from '../../helpers/designGames';
import { tempDir } from '../../helpers/tmp';
import { ciServices, makeManager, SERVICES_MISSING, waitFor, waitState } from './helpers';

const ci = ciServices();
if (!ci) console.warn(`[design-round job test skipped] ${SERVICES_MISSING}`);
const d = ci ? describe : describe.skip;
const tmp = tempDir('spade-design-job-');
afterAll(() => tmp.cleanup());

// The seed: a number game whose measured numbers (win rate 0.5, regret 0.4) put it at the frontier,
// so SPADE's sampling offers it as a positive seed.
const SEED = `import random
class SeedGuessEnv:
    def __init__(self, max_turns=6):
        self.max_turns = max_turns
    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.t = 0
        self.secret = random.randint(1, 100)
        return "Guess my number from 1 to 100 as \\\\boxed{n}.", {}
    def step(self, action):
        self.t += 1
        if action == "\\\\boxed{%d}" % self.secret:
            return "Correct!", 1.0, True, False, {}
        return "No.", 0.0, False, self.t >= self.max_turns, {}
`;
const DESIGNED = luckySevenGame('LuckySevenEnv');

d('design round as a job', () => {
  it('runs the round over SSH with the served models, and its game comes back naming its parent by hash', async () => {
    type Msg = { role: string; content: string };
    const designerPrompts: string[] = [];
    const server = await startStandIn((b) => {
      const m = b.messages as Msg[];
      if (m[0]!.role === 'system' && m[0]!.content.includes('short hint')) return { content: 'The number is lucky; answer as \\boxed{n}.' };
      if (String(b.model) === 'served-designer') {
        designerPrompts.push(m.map((x) => x.content).join('\n'));
        return { content: `\`\`\`python\n${DESIGNED}\`\`\`` };
      }
      const first = m.find((x) => x.role === 'user')!.content;
      return { content: first.includes('HINT: ') ? '\\boxed{7}' : '\\boxed{3}' };
    });
    const pool = join(tmp.dir, 'pool');
    mkdirSync(join(pool, 'spade_games'), { recursive: true });
    mkdirSync(join(pool, 'spade_games_cache'), { recursive: true });
    const seedFile = join(pool, 'spade_games', 'game_00001_000_logical_deduction.py');
    writeFileSync(seedFile, `"""SPADE self-play generated game"""\n\n${SEED}`);
    writeFileSync(
      join(pool, 'spade_games_cache', 'env_memory.json'),
      JSON.stringify([{ game_file: seedFile, skill: 'Logical Deduction', code_snippet: SEED.slice(0, 200), actor_win_rate: 0.5, regret: 0.4, rollout_id: 1, metadata: {} }]),
    );
    const secrets = new MemorySecretStore();
    secrets.set('SPADE_DESIGNER_API_KEY', 'sk-design-round-test');
    const ctx = makeManager(join(tmp.dir, 'here'), { secrets });
    try {
      // This library holds the seed too, so the parent the job names opens here.
      await importPaths(ctx.db, [pool]);
      const seedHash = (ctx.db.prepare("SELECT head_hash FROM environments WHERE name = 'SeedGuessEnv'").get() as { head_hash: string }).head_hash;
      const spec = buildSpec({
        name: 'design round over ssh',
        backend: 'ssh',
        recipe: 'design-round',
        ssh: { host: ci!.host, port: ci!.port, user: ci!.user, identityFile: ci!.key, knownHostsFile: ci!.knownHosts },
        workdir: join(tmp.dir, 'remote'),
        poolDir: pool,
        env: {
          DESIGN_SKILLS: 'Logical Deduction',
          DESIGN_COUNT: '1',
          DESIGN_ATTEMPTS: '1',
          DESIGN_PLAY_SEEDS: '1',
          DESIGNER_URL: server.url,
          DESIGNER_MODEL: 'served-designer',
          AGENT_URL: server.url,
          AGENT_MODEL: 'served-agent',
          // The workbench on the "remote" machine: this checkout's launcher, run by this Node.
          SPADE_WORKBENCH_CLI: join(packageRoot(), 'bin', 'spade-workbench.mjs'),
          SPADE_WORKBENCH_NODE: process.execPath,
          ...(process.env.SPADE_WORKBENCH_VENV ? { SPADE_WORKBENCH_VENV: process.env.SPADE_WORKBENCH_VENV } : {}),
        },
        secretEnv: ['SPADE_DESIGNER_API_KEY'],
      });
      const job = await ctx.manager.submit(spec);
      const done = await waitState(ctx.manager, job.id, ['succeeded', 'failed', 'lost'], 240_000);
      const log = ctx.manager.readLog(job.id, 0, 1 << 20).text;
      expect(done.state, `${done.detail}\n${log}`).toBe('succeeded');
      expect(log).toContain('design-round: importing the seed pool');
      expect(log).toMatch(/game 1 Logical Deduction: accepted/);
      // The served designer was asked with the pool's seed in its prompt, and with the job's secret key.
      expect(designerPrompts.some((p) => p.includes('SeedGuessEnv'))).toBe(true);
      expect(server.auth.filter((a) => a === 'Bearer sk-design-round-test').length).toBeGreaterThan(0);
      const row = await waitFor('the designed game in this library', () =>
        ctx.db.prepare("SELECT e.id, e.meta, e.skill, s.job_id FROM environments e JOIN env_sources s ON s.env_id = e.id WHERE e.name = 'LuckySevenEnv'").get() as { id: number; meta: string; skill: string; job_id: string } | undefined,
      );
      expect(row.job_id).toBe(job.id);
      expect(row.skill).toBe('Logical Deduction');
      const meta = JSON.parse(row.meta) as { spec?: { parents?: { name: string; sha256: string }[]; design?: { seq: number } } };
      expect(meta.spec?.parents).toEqual([{ name: 'game_00001_000_logical_deduction', sha256: seedHash }]);
      // Its numbers came back too (env_memory.json): hinted play wins, unhinted never.
      const stats = ctx.db.prepare('SELECT win_rate, regret FROM environments WHERE id = ?').get(row.id) as { win_rate: number | null; regret: number | null };
      expect(stats).toEqual({ win_rate: 0, regret: 1 });
    } finally {
      await ctx.manager.close();
      ctx.db.close();
      await server.close();
    }
  }, 300_000);
});
