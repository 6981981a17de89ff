import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RegretReport } from '../../core/api/calls/runs';
import { main } from '../../core/cli/main';
import type { Services } from '../../core/services/services';
import { openWorkbench, runCommand, screenshot, waitForPack, type E2EContext } from '../helpers/browser';
import { startStandIn, type StandIn } from '../helpers/standInOpenAi';

// Chromium against the web host: a regret sweep started from the Runs page on this machine (real
// CPython), its progress, its report (per environment SPADE's r_hint, r_no_hint, regret and win
// rates, the pool's means, the regret chart) checked against `regret --json` run on the same pool,
// the run listed on the Runs page; and a sweep cancelled mid-way, then resumed to its end.

let ctx: E2EContext;
let server: StandIn | null = null;

/** A game of the test pool: `body` is its step's outcome; its reset waits a moment on an episode's seed (not SPADE's load checks, 42 and 123) so that progress can be seen. */
function game(cls: string, tag: string, wait: number, outcome: string): string {
  return `# ${tag}: a game of the regret sweep e2e test
import time


class ${cls}:
    def reset(self, seed=None):
        self.seed = seed
        if seed not in (None, 42, 123):
            time.sleep(${wait})
        return "Say \\\\boxed{7}", {}

    def solution(self):
        return "7"

    def step(self, action):
        ok = "7" in action
        ${outcome}
`;
}

async function importGames(s: Services, dir: string, games: { file: string; src: string; hint: string | null }[]): Promise<void> {
  mkdirSync(dir, { recursive: true });
  for (const g of games) {
    writeFileSync(join(dir, `${g.file}.py`), g.src);
    if (g.hint !== null) writeFileSync(join(dir, `${g.file}_hint.txt`), g.hint);
  }
  const summary = await s.memory.startImport([dir]).done;
  if (!summary) throw new Error(`the games in ${dir} were not imported`);
}

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(args, { out: (t) => void (out += `${t}\n`), err: (t) => void (err += `${t}\n`) });
  return { code, out, err };
}

const fmt = (x: number | null) => (x === null ? '–' : (Math.round(x * 1000) / 1000).toString());

beforeAll(async () => {
  ctx = await openWorkbench({ viewport: { width: 1440, height: 900 } });
  await waitForPack(ctx.app.services, 21);
  await importGames(ctx.app.services, join(ctx.dataDir, 'zeta'), [
    // Wins on even seeds only: a win rate of 0.5 over seeds 0 and 1.
    { file: 'zeta_parity', src: game('ZetaParityEnv', 'zetapool', 0.3, 'return "done", 1.0 if ok and (self.seed or 0) % 2 == 0 else 0.0, True, False, {}'), hint: 'Even seeds can be won.' },
    // No hint: only the unhinted arm plays, and its regret is not measured (issue 46: it read 0).
    { file: 'zeta_always', src: game('ZetaAlwaysEnv', 'zetapool', 0.3, 'return "done", 1.0 if ok else 0.0, True, False, {}'), hint: null },
    { file: 'zeta_never', src: game('ZetaNeverEnv', 'zetapool', 0.3, 'return "done", -0.5, True, False, {}'), hint: 'Nothing helps here.' },
  ]);
  await importGames(ctx.app.services, join(ctx.dataDir, 'slow'), [
    { file: 'slow_a', src: game('SlowRegretAEnv', 'slowregret', 1.2, 'return "done", 1.0 if ok else 0.0, True, False, {}'), hint: 'Say seven.' },
    { file: 'slow_b', src: game('SlowRegretBEnv', 'slowregret', 1.2, 'return "done", 1.0 if ok else 0.0, True, False, {}'), hint: 'Say seven.' },
  ]);
  const { page } = ctx;
  await runCommand(page, 'regret sweep over a pool');
  await page.getByTestId('regret-sweeps').waitFor();
}, 60_000);

afterAll(async () => {
  await ctx?.close();
  await server?.close();
});

describe('regret sweeps in Chromium', () => {
  it('starts a sweep here, shows its progress and a report equal to regret --json, and lists its run', async () => {
    const { page } = ctx;
    const section = page.getByTestId('regret-sweeps');
    expect(await section.getByTestId('regret-on').inputValue()).toBe('local');
    expect(await section.getByTestId('regret-policy').inputValue()).toBe('solution');

    // A query that matches nothing is refused in words; no sweep appears.
    await section.getByTestId('regret-query').fill('no-such-game-anywhere');
    await section.getByTestId('regret-start').click();
    expect(await section.getByTestId('regret-error').textContent()).toContain('No environment in the library matches "no-such-game-anywhere"');
    expect(await section.getByTestId('regret-sweep').count()).toBe(0);

    await section.getByTestId('regret-query').fill('zetapool');
    // Paired seeds, the labelled option (SPADE's estimator, the default, has its own counts).
    await section.getByTestId('regret-estimator').selectOption('paired');
    await section.getByTestId('regret-seeds').fill('2');
    await section.getByTestId('regret-start').click();
    const sweep = section.getByTestId('regret-sweep').first();
    // 3 games x 2 seeds x 2 arms, less the hinted arm of the game without a hint.
    await sweep.getByTestId('regret-progress').waitFor();
    expect(await sweep.getByTestId('regret-progress').textContent()).toMatch(/\d+ \/ 10/);
    expect(await sweep.textContent()).toContain('solution() · 3 envs × 2 seeds');
    await page.waitForFunction(() => document.querySelector('[data-testid=regret-sweep]')?.getAttribute('data-state') === 'done', undefined, { timeout: 60_000 });
    expect(await sweep.getByTestId('regret-sweep-summary').textContent()).toContain('10 / 10 episodes · 0 failed');
    const report = sweep.getByTestId('regret-report');
    await report.waitFor();
    await report.getByTestId('regret-chart').locator('canvas').waitFor();
    await screenshot(page, 'regret-sweep-done-1440');

    // The same pool, policy and seeds through the command line: a new sweep, played again.
    const r = await cli(['regret', '--pool', 'zetapool', '--estimator', 'paired', '--seeds', '2', '--policy', 'solution', '--json', '--quiet', '--data-dir', ctx.dataDir]);
    expect(r.code, r.err).toBe(0);
    const fromCli = JSON.parse(r.out) as RegretReport & { episodes: unknown[] };
    expect(fromCli.envs.map((e) => e.env).sort()).toEqual(['ZetaAlwaysEnv', 'ZetaNeverEnv', 'ZetaParityEnv']);
    // What the app's report says, number for number, is what the command printed (less its ids and episode list).
    const sweepId = (await sweep.getAttribute('data-sweep'))!;
    const fromApp = ctx.app.services.regretSweeps.report(sweepId);
    const { sweep: _s, run_id: _r, episodes: _e, ...cliRest } = fromCli;
    const { sweep: _s2, run_id: appRun, ...appRest } = fromApp;
    expect(appRest).toEqual(cliRest);
    expect(fromCli.envs.find((e) => e.env === 'ZetaParityEnv')).toMatchObject({ r_hint: 0.5, r_no_hint: 0.5, regret: 0, win_rate_hint: 0.5, win_rate_no_hint: 0.5, returns_hint: [1, 0] });
    expect(fromCli.envs.find((e) => e.env === 'ZetaAlwaysEnv')).toMatchObject({ hint_failed: true, r_hint: null, r_no_hint: 1, regret: null, win_rate_hint: null, win_rate_no_hint: 1 });
    // The means cover the two games with regret measured, and agree with each other.
    expect(fromCli.summary).toMatchObject({ envs: 3, measured: 2, no_hint: 1 });
    expect(fromCli.summary.avg_regret).toBeCloseTo(fromCli.summary.avg_r_hint! - fromCli.summary.avg_r_no_hint!, 12);
    expect(fromCli.envs.find((e) => e.env === 'ZetaNeverEnv')).toMatchObject({ r_hint: -0.5, r_no_hint: -0.5, win_rate_no_hint: 0 });
    // And what the page shows is those numbers.
    for (const e of fromCli.envs) {
      const cells = await report.locator(`[data-testid=regret-row][data-hash="${e.hash}"] td`).allTextContents();
      expect(cells.slice(0, 6)).toEqual([`${e.env} ${e.hash.slice(0, 8)}`, e.hint_failed ? 'no hint' : fmt(e.r_hint), fmt(e.r_no_hint), e.regret === null ? 'not measured' : fmt(e.regret), fmt(e.win_rate_hint), fmt(e.win_rate_no_hint)]);
    }
    expect(await report.getByTestId('regret-avg').textContent()).toBe(fmt(fromCli.summary.avg_regret));
    expect(await report.getByTestId('regret-summary').textContent()).toContain(`mean over those 2: regret ${fmt(fromCli.summary.avg_regret)} · R(hint) ${fmt(fromCli.summary.avg_r_hint)} · R(no hint) ${fmt(fromCli.summary.avg_r_no_hint)}`);
    expect(await report.getByTestId('regret-unmeasured').textContent()).toContain('2 with regret measured; 1 without a hint: not measured');
    // The chart: the two measured environments in the bin of regret 0; the game without a hint is not drawn.
    const bins = (await report.getByTestId('regret-chart').getAttribute('data-bins'))!.split(',').map(Number);
    expect(bins.reduce((a, b) => a + b, 0)).toBe(2);
    expect(bins[bins.length >> 1]).toBe(2);
    expect(await report.getByTestId('regret-chart-title').textContent()).toBe('environments by regret (2 of 3; 1 not measured)');

    // The run is on the Runs page as the command's is, and opens from the report.
    const row = page.locator(`[data-testid=runs-row][data-run="${appRun}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain('policy:solution');
    await report.getByTestId('regret-open-run').click();
    expect(await page.getByTestId('runs-detail').locator('h3').textContent()).toContain(appRun);

    await page.setViewportSize({ width: 1024, height: 768 });
    await report.getByTestId('regret-chart').scrollIntoViewIfNeeded();
    await screenshot(page, 'regret-sweep-done-1024');
    expect(ctx.errors).toEqual([]);
  }, 90_000);

  it('sweeps with a served model the app played before, whose hint makes a regret the chart shows', async () => {
    const { page } = ctx;
    await page.setViewportSize({ width: 1440, height: 900 });
    // The stand-in model answers right only when it was given the hint (SPADE's "HINT: " in the first message).
    server = await startStandIn((b) => {
      const msgs = b.messages as { role: string; content: string }[];
      return { content: msgs[0]!.content.includes('HINT: ') ? 'So: \\boxed{7}' : 'I guess \\boxed{3}' };
    });
    // The endpoint Episodes -> Play with a model keeps, as it keeps it.
    await page.evaluate((url) => localStorage.setItem('spade.llm.endpoint', JSON.stringify({ baseUrl: url, model: 'stand-in-model', apiKeySecret: null, temperature: 1, topP: 0.95, topK: 20, maxTokens: 256, thinking: null, concurrency: 2, via: null })), server.url);
    const section = page.getByTestId('regret-sweeps');
    await section.getByTestId('regret-policy').selectOption('model');
    expect(await section.getByTestId('regret-model').inputValue()).toBe(`stand-in-model @ ${server.url}`);
    await section.getByTestId('regret-query').fill('zetapool');
    // Paired seeds, the labelled option (SPADE's estimator, the default, has its own counts).
    await section.getByTestId('regret-estimator').selectOption('paired');
    await section.getByTestId('regret-seeds').fill('2');
    await section.getByTestId('regret-start').click();
    const sweep = section.locator('[data-testid=regret-sweep]', { hasText: 'stand-in-model' }).first();
    await sweep.waitFor();
    const sweepId = (await sweep.getAttribute('data-sweep'))!;
    await page.waitForFunction((id) => document.querySelector(`[data-testid=regret-sweep][data-sweep="${id}"]`)?.getAttribute('data-state') === 'done', sweepId, { timeout: 60_000 });
    const report = sweep.getByTestId('regret-report');
    await report.getByTestId('regret-chart').locator('canvas').waitFor();
    const r = ctx.app.services.regretSweeps.report(sweepId);
    expect(r).toMatchObject({ policy: 'model', model: 'stand-in-model', status: 'done', failed: null });
    // Hinted it wins the parity game's even seed; unhinted it never wins: regret 0.5 there, 0 elsewhere.
    expect(r.envs.find((e) => e.env === 'ZetaParityEnv')).toMatchObject({ r_hint: 0.5, r_no_hint: 0, regret: 0.5, win_rate_hint: 0.5, win_rate_no_hint: 0 });
    expect(r.envs.find((e) => e.env === 'ZetaAlwaysEnv')).toMatchObject({ hint_failed: true, r_no_hint: 0, regret: null });
    const cells = await report.locator(`[data-testid=regret-row][data-hash="${r.envs.find((e) => e.env === 'ZetaParityEnv')!.hash}"] td`).allTextContents();
    expect(cells.slice(0, 6)).toEqual([`ZetaParityEnv ${r.envs.find((e) => e.env === 'ZetaParityEnv')!.hash.slice(0, 8)}`, '0.5', '0', '0.5', '0.5', '0']);
    const bins = (await report.getByTestId('regret-chart').getAttribute('data-bins'))!.split(',').map(Number);
    const zero = bins.length >> 1;
    expect([bins[zero], bins[zero + 2]]).toEqual([1, 1]);
    await report.scrollIntoViewIfNeeded();
    await screenshot(page, 'regret-sweep-model-1440');
    expect(ctx.errors).toEqual([]);
  }, 60_000);

  it('cancels a running sweep, keeps what arrived, and resumes it to the end with nothing played twice', async () => {
    const { page } = ctx;
    await page.setViewportSize({ width: 1024, height: 768 });
    const section = page.getByTestId('regret-sweeps');
    await section.getByTestId('regret-policy').selectOption('solution');
    await section.getByTestId('regret-query').fill('slowregret');
    // Paired seeds, the labelled option (SPADE's estimator, the default, has its own counts).
    await section.getByTestId('regret-estimator').selectOption('paired');
    await section.getByTestId('regret-seeds').fill('2');
    await section.getByTestId('regret-start').click();
    const slow = section.locator('[data-testid=regret-sweep]', { hasText: 'slowregret' }).first();
    await slow.getByTestId('regret-progress').waitFor();
    expect(await slow.getByTestId('regret-progress').textContent()).toContain('/ 8');
    // Once an episode is in, the line says how fast and how long is left.
    await page.waitForFunction(() => /[1-7] \/ 8 .* left/.test(document.querySelector('[data-testid=regret-progress]')?.textContent ?? ''), undefined, { timeout: 30_000 });
    await section.scrollIntoViewIfNeeded();
    await screenshot(page, 'regret-sweep-running-1024');
    await slow.getByTestId('regret-progress-cancel').click();
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=regret-sweep]')].some((e) => e.textContent?.includes('slowregret') && e.getAttribute('data-state') === 'cancelled'), undefined, { timeout: 30_000 });
    const resume = slow.getByTestId('regret-resume');
    const [, kept] = /^Resume \((\d)\/8\)$/.exec((await resume.textContent()) ?? '') ?? [];
    expect(Number(kept)).toBeLessThan(8);
    await screenshot(page, 'regret-sweep-cancelled-1024');
    const sweepId = (await slow.getAttribute('data-sweep'))!;
    const runId = ctx.app.services.regretSweeps.list(20).find((s) => s.id === sweepId)!.runId;
    expect(ctx.app.services.runs.get(runId).run.status).toBe('cancelled');

    await resume.click();
    await page.waitForFunction((id) => document.querySelector(`[data-testid=regret-sweep][data-sweep="${id}"]`)?.getAttribute('data-state') === 'done', sweepId, { timeout: 30_000 });
    expect(await slow.getByTestId('regret-sweep-summary').textContent()).toContain('8 / 8 episodes · 0 failed');
    // Each episode once in the run, and the two games measured over both seeds.
    const view = ctx.app.services.runs.get(runId);
    expect(view.run.status).toBe('done');
    expect(view.episodes).toMatchObject({ total: 8, ok: 8, failed: 0 });
    expect(view.envs.map((e) => [e.regret, e.winRate, e.seeds])).toEqual([
      [0, 1, [0, 1]],
      [0, 1, [0, 1]],
    ]);
    expect(ctx.errors).toEqual([]);
  }, 60_000);
  it('shows a sweep the command line runs on the same memory file as running in another process, with its count moving and no Resume, and as interrupted once it is killed', async () => {
    const { page } = ctx;
    // Each model answer waits until the test lets it through, so the other process is seen mid-way.
    const gates: (() => void)[] = [];
    const gated = await startStandIn(() => ({ content: '\\boxed{7}', after: new Promise<void>((r) => gates.push(r)) }));
    const bin = join(__dirname, '..', '..', 'bin', 'spade-workbench.mjs');
    const child = spawn(process.execPath, [bin, 'regret', '--pool', 'zetapool', '--estimator', 'paired', '--seeds', '1', '--max-turns', '2', '--endpoint', gated.url, '--model', 'elsewhere-model', '--concurrency', '1', '--data-dir', ctx.dataDir], { env: process.env, stdio: 'ignore' });
    try {
      for (let i = 0; i < 600 && !gates.length; i++) await new Promise((r) => setTimeout(r, 50));
      expect(gates.length, 'the command line made its first model call').toBeGreaterThan(0);
      // The page was open before that process started: it finds the sweep without being opened again.
      await page.getByTestId('regret-sweeps').waitFor();
      const card = page.locator('[data-testid=regret-sweep][data-state=elsewhere]');
      await card.waitFor({ timeout: 15_000 });
      expect(await card.locator('.sweep-state').textContent()).toBe('running in another process');
      expect(await card.textContent()).toContain(`Running in process ${child.pid}`);
      // Neither Resume nor Cancel: a second driver would play its episodes again.
      expect(await card.getByRole('button', { name: /Resume|Cancel/ }).count()).toBe(0);
      // Its episodes land and the card counts them without any event from that process. A gate is let
      // through only while none has landed and the other process waits on its next call, so it stays mid-way.
      const id = (await card.getAttribute('data-sweep'))!;
      const landed = () => (ctx.app.services.db.prepare('SELECT COUNT(*) AS n FROM sweep_results WHERE sweep_id = ?').get(id) as { n: number }).n;
      for (let i = 0; i < 600 && landed() === 0; i++) {
        gates.shift()?.();
        await new Promise((r) => setTimeout(r, 50));
      }
      const mine = page.locator(`[data-testid=regret-sweep][data-sweep="${id}"]`);
      await page.waitForFunction((sid) => /^[1-9]\d* \/ \d+ episodes/.test(document.querySelector(`[data-testid=regret-sweep][data-sweep="${sid}"] [data-testid=regret-progress]`)?.textContent ?? ''), id);
      expect(await mine.getAttribute('data-state')).toBe('elsewhere');
      // Its run in the table below: no Resume either, and its episodes counted as they land.
      const runRow = page.locator('[data-testid=runs-row]', { hasText: 'elsewhere-model' });
      await runRow.getByTestId('runs-elsewhere').waitFor();
      expect(await runRow.getByRole('button', { name: /Resume|Cancel/ }).count()).toBe(0);
      await page.waitForFunction(() => /^[1-9]\d*\/\d+/.test([...document.querySelectorAll('[data-testid=runs-row]')].find((r) => r.textContent?.includes('elsewhere-model'))?.querySelectorAll('td')[9]?.textContent?.trim() ?? ''));
      await mine.scrollIntoViewIfNeeded();
      await screenshot(page, 'regret-sweep-elsewhere-1024');

      // Killed with -9: no owner lives, so it is interrupted, resumable here.
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      const killed = page.locator(`[data-testid=regret-sweep][data-sweep="${id}"][data-state=interrupted]`);
      await killed.waitFor();
      await killed.getByTestId('regret-resume').waitFor();
      await runRow.getByRole('button', { name: 'Resume' }).waitFor();
      await screenshot(page, 'regret-sweep-interrupted-1024');
      expect(ctx.errors).toEqual([]);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      for (const g of gates.splice(0)) g();
      await gated.close();
    }
  }, 60_000);
});
