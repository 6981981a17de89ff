import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';

/**
 * The job view of a SPADE run as a person sees it: the metric charts (each on its axis) from a log
 * written from SPADE's and Slime's print statements (tests/fixtures/spade-logs), its [REGRET] games,
 * and the GPU panel beside them, read over the job's own connection: a real local job whose PATH
 * starts with a stand-in nvidia-smi (tests/fixtures/nvidia-smi, which says so at its top), and one
 * on this machine, which has no nvidia-smi: "No GPU seen".
 */
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const LOG = join(process.cwd(), 'tests', 'fixtures', 'spade-logs', 'slime-run.log');

describe('the job view with GPU use (Chromium)', () => {
  let ctx: E2EContext;
  beforeAll(async () => {
    ctx = await openWorkbench();
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it("charts a node's GPUs beside a SPADE run's metrics and games, at 1440 and 1024 px", async () => {
    const { page, dataDir, app } = ctx;
    const bin = join(dataDir, 'standin-bin');
    mkdirSync(bin);
    copyFileSync(join(process.cwd(), 'tests', 'fixtures', 'nvidia-smi', 'nvidia-smi'), join(bin, 'nvidia-smi'));
    await page.click('button[aria-label=Jobs]');
    await page.waitForSelector('[data-testid=jobs-panel]');
    await app.services.jobs.submit({
      name: 'spade run on gpus',
      backend: 'local',
      command: ['sh', '-c', `cat '${LOG}'; sleep 40`],
      env: { PATH: `${bin}:${SYSTEM_PATH}` },
      workdir: join(dataDir, 'gpu-run'),
      noPool: true,
    });
    await page.click('[data-testid=jobs-item]:has-text("spade run on gpus")');
    const view = '[data-testid=job-view]:has(h2:has-text("spade run on gpus"))';
    await page.waitForSelector(`${view} [data-testid=jobs-chart][data-key="train/loss"][data-points="4"]`, { timeout: 60_000 });
    // Three samples of both GPUs, all four quantities where the GPUs give them.
    await page.waitForSelector(`${view} [data-testid=gpu-chart][data-quantity=util]`, { timeout: 60_000 });
    const util = page.locator(`${view} [data-testid=gpu-chart][data-quantity=util]`);
    for (let i = 0; i < 120 && Number(await util.getAttribute('data-points')) < 3; i++) await page.waitForTimeout(500);
    expect(Number(await util.getAttribute('data-points'))).toBeGreaterThanOrEqual(3);
    expect(await page.getAttribute(`${view} [data-testid=gpu-panel]`, 'data-sampler')).toBe('sampling');
    const quantities = await page.$$eval(`${view} [data-testid=gpu-chart]`, (els) => els.map((e) => e.getAttribute('data-quantity')));
    expect(quantities).toEqual(['util', 'memUsed', 'power', 'temp']);
    const rows = await page.$$eval(`${view} [data-testid=gpu-row]`, (els) => els.map((e) => [...e.querySelectorAll('td')].map((td) => td.textContent?.trim())));
    expect(rows).toHaveLength(2);
    expect(rows[0]![0]).toBe('0');
    expect(await page.textContent(`${view} [data-testid=gpu-node] h4`)).toMatch(/^\S+ · 2 × NVIDIA H100 80GB HBM3$/);
    expect(rows[0]![2]).toMatch(/^\d+ \/ 81559$/);
    // GPU 1's [N/A] power and [Not Supported] temperature: said, not drawn as 0.
    expect(rows[1]!.slice(3)).toEqual(['n/a', 'n/a']);
    const procs = await page.$$eval(`${view} [data-testid=gpu-proc]`, (els) => els.map((e) => [...e.querySelectorAll('td')].map((td) => td.textContent)));
    expect(procs).toEqual([
      ['0', '31337', '/usr/bin/python3', '40536'],
      ['0', '31338', 'ray::MegatronTrainRayActor', 'n/a'],
    ]);
    await page.click(`${view} [data-testid=jobs-games] summary`);
    expect(await page.$$eval(`${view} [data-testid=jobs-game-row]`, (els) => els.length)).toBe(3);
    for (const [width, height] of [[1440, 900], [1024, 768]] as const) {
      await page.setViewportSize({ width, height });
      await page.waitForTimeout(300);
      await page.$eval(`${view} .jobs-top`, (e) => e.scrollTo(0, 0));
      await screenshot(page, `job-gpu-${width}`);
      // Nothing of the GPU panel is cut at the right edge, and every chart has its axes drawn.
      const box = await page.$eval(`${view} [data-testid=gpu-panel]`, (e) => {
        const r = e.getBoundingClientRect();
        return { right: r.right, scroll: e.scrollWidth - e.clientWidth };
      });
      expect(box.right).toBeLessThanOrEqual(width);
      expect(box.scroll).toBeLessThanOrEqual(1);
      await page.locator(`${view} [data-testid=gpu-procs]`).scrollIntoViewIfNeeded();
      await screenshot(page, `job-gpu-${width}-procs`);
      await page.locator(`${view} [data-testid=jobs-game-row]`).last().scrollIntoViewIfNeeded();
      await screenshot(page, `job-gpu-${width}-games`);
      // The games table stays in the metrics column: it does not run under the GPU panel.
      const games = await page.$eval(`${view} [data-testid=jobs-games] table`, (t) => t.getBoundingClientRect().right);
      const panelLeft = await page.$eval(`${view} [data-testid=gpu-panel]`, (e) => e.getBoundingClientRect().left);
      expect(games).toBeLessThanOrEqual(panelLeft + 1);
    }
    const axes = await page.$$eval(`${view} [data-testid=gpu-chart]`, (els) => els.map((e) => e.querySelectorAll('.u-axis').length));
    expect(axes).toEqual([2, 2, 2, 2]);
    await page.setViewportSize({ width: 1400, height: 860 });
    expect(ctx.errors).toEqual([]);
  });

  it('says "No GPU seen" for a node without nvidia-smi', async () => {
    const { page, dataDir, app } = ctx;
    await app.services.jobs.submit({ name: 'cpu only', backend: 'local', command: ['sh', '-c', `cat '${LOG}'; sleep 5`], env: { PATH: SYSTEM_PATH }, workdir: join(dataDir, 'cpu-run'), noPool: true });
    if (!(await page.isVisible('[data-testid=jobs-panel]'))) await page.click('button[aria-label=Jobs]');
    await page.click('[data-testid=jobs-item]:has-text("cpu only")');
    const view = '[data-testid=job-view]:has(h2:has-text("cpu only"))';
    await page.waitForSelector(`${view} [data-testid=gpu-none]`, { timeout: 60_000 });
    await page.waitForSelector(`${view} [data-testid=jobs-chart][data-key="train/loss"][data-points="4"]`, { timeout: 60_000 });
    expect(await page.textContent(`${view} [data-testid=gpu-none]`)).toMatch(/^No GPU seen on \S+: nvidia-smi is not on this node's PATH$/);
    expect(await page.$$(`${view} [data-testid=gpu-chart]`)).toHaveLength(0);
    for (const [width, height] of [[1440, 900], [1024, 768]] as const) {
      await page.setViewportSize({ width, height });
      await page.waitForTimeout(300);
      await screenshot(page, `job-gpu-none-${width}`);
    }
    await page.setViewportSize({ width: 1400, height: 860 });
    expect(ctx.errors).toEqual([]);
  });
});
