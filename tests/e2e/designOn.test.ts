// The Design page's "Checks and plays run on": a round whose attempts are checked, and whose accepted
// game is played, on the real one-node Ray head of .ci/services.sh, driven in Chromium against the
// web host; the designer and the agent are the stand-in server (a scripted model), the checks are the
// real audit on Ray's workers, the plays a regret sweep there played back here.
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { heldHealthPoll, openWorkbench, screenshot, waitForPack, type E2EContext } from '../helpers/browser';
import { startStandIn, type StandIn } from '../helpers/standInOpenAi';
import { tempDir } from '../helpers/tmp';
import { luckySevenGame } from '../helpers/designGames';
import { ciRay, rayRest } from '../integration/jobs/helpers';

const ray = ciRay();
if (!ray) console.warn('[design checks-on e2e skipped] no Ray head: `.ci/services.sh start` (CI does)');
const d = ray ? describe : describe.skip;

let ctx: E2EContext | null = null;
let server: StandIn | null = null;
const dir = tempDir('spade-e2e-design-on-');
afterEach(async () => {
  await ctx?.close();
  ctx = null;
  await server?.close();
  server = null;
});
afterAll(() => dir.cleanup());

const jobIds = async (prefix: string): Promise<Set<string>> =>
  new Set((JSON.parse((await rayRest(ray!.address, 'GET', '/api/jobs/')).text) as { submission_id: string }[]).map((j) => j.submission_id).filter((id) => id.startsWith(prefix)));

d('the Design page: checks on a Ray cluster', () => {
  it('runs a round whose attempts are checked and whose game is played on the Ray head, and says where they ran', async () => {
    server = await startStandIn((b) => {
      const m = b.messages as { role: string; content: string }[];
      if (m[0]!.role === 'system' && m[0]!.content.includes('short hint')) return { content: 'The number is lucky.' };
      // The agent: 7 when it sees the hint (a win), 3 otherwise (a loss): regret 1, win rate 0.
      if (m[0]!.content.startsWith('You are playing a language game')) return { content: m[0]!.content.includes('\n\nHINT: ') ? '\\boxed{7}' : '\\boxed{3}' };
      return { content: `\`\`\`python\n${luckySevenGame('RayCheckedEnv')}\`\`\`` };
    });
    const before = await jobIds('spade_audit_check-');
    const playsBefore = await jobIds('spade_regret_');
    // The health poll only when the test fires it: the status bar must learn the round ended from its events.
    ctx = await openWorkbench({ dataDir: dir.dir, viewport: { width: 1440, height: 900 }, init: heldHealthPoll });
    await waitForPack(ctx.app.services, 21);
    const { page } = ctx;
    await page.keyboard.press('Control+Shift+P');
    await page.getByRole('dialog', { name: 'Command palette' }).waitFor();
    await page.keyboard.type('Design Environments');
    await page.keyboard.press('Enter');
    await page.getByTestId('design-view').waitFor();
    await page.getByTestId('design-designer-url').fill(server.url);
    await page.getByTestId('design-designer-model').fill('designer');
    await page.getByTestId('design-count').fill('1');
    await page.getByTestId('design-attempts').fill('1');
    await page.getByRole('spinbutton', { name: 'episodes per arm' }).fill('1');
    await page.getByTestId('design-agent-url').fill(server.url);
    await page.getByTestId('design-agent-model').fill('agent');
    expect(await page.getByTestId('design-checks-on').inputValue()).toBe('local');
    await page.getByTestId('design-checks-on').selectOption('ray');
    await page.getByTestId('design-checks-ray-address').fill(new URL(ray!.address).host);
    await page.getByTestId('design-checks-ray-python').fill(join(ray!.bin, 'python'));
    await screenshot(page, 'design-checks-on-ray-form-1440');
    await page.getByTestId('design-start').click();
    await page.waitForSelector('[data-testid=design-round][data-status=done]', { timeout: 120_000 });
    expect(await page.getByTestId('design-checks-on-label').textContent()).toContain(`checks and plays on Ray at ${new URL(ray!.address).host}`);
    const games = await page.getByTestId('design-games').textContent();
    expect(games).toContain('accepted');
    expect(games).not.toContain('not played');
    // It said "design: busy" here, after the round was done.
    await page.getByTestId('status-bar').getByText('design: busy').waitFor({ state: 'detached' });
    await screenshot(page, 'design-checks-on-ray-done-1440');
    // The program's audit and its hint-leak check each ran as a job on the head, and the game's two episodes as one more.
    const after = await jobIds('spade_audit_check-');
    expect([...after].filter((id) => !before.has(id))).toHaveLength(2);
    // The round kept the game's numbers from the run record of its play on the head.
    const [round] = ctx.app.services.design.list(1);
    const game = ctx.app.services.design.get(round!.id).games[0]!;
    expect(game.run_id).not.toBeNull();
    const sweep = String(ctx.app.services.runs.get(game.run_id!).run.config.endpoint.sweep);
    expect([...(await jobIds(`spade_regret_${sweep}_`))].filter((id) => !playsBefore.has(id))).toHaveLength(1);
    expect({ regret: game.regret, winRate: game.win_rate, on: game.plays_on }).toEqual({ regret: 1, winRate: 0, on: `ray://${new URL(ray!.address).host}` });
    // Its episodes keep each step's game state, as the app's local play of a few seeds does.
    const eps = ctx.app.services.runs.get(game.run_id!).envs[0]!.episodes;
    // SPADE's estimator, the Design page's default: 16 hinted plays and 8 unhinted ones.
    expect(eps).toHaveLength(24);
    for (const e of eps) expect(ctx.app.services.episodes.ctx.d.store.steps(e.episodeId!, true).every((st) => st.state !== null)).toBe(true);
  }, 240_000);
});
