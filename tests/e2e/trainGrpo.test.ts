/**
 * Jobs → "Train locally (GRPO)" in Chromium: launched from the dialog over the app's own seed pack,
 * TRL's per-step numbers appear as charts while it trains, and Cancel ends it (the trainer with it).
 * Needs the training venv (scripts/train-venv.mjs) and the embedded model.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { openWorkbench, screenshot, waitForPack, type E2EContext } from '../helpers/browser';

describe('local GRPO training as a job (Chromium)', () => {
  let ctx: E2EContext;
  beforeAll(async () => {
    ctx = await openWorkbench();
    await waitForPack(ctx.app.services, 10);
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('launches Train locally (GRPO), charts reward/KL/loss live, and Cancel stops it', { timeout: 900_000 }, async () => {
    const { page, dataDir, app } = ctx;
    await page.click('button[aria-label=Jobs]');
    await page.waitForSelector('[data-testid=jobs-panel]');
    await page.click('[data-testid=jobs-new]');
    await page.waitForSelector('[data-testid=jobs-recipe] option[value=train-grpo]', { state: 'attached' });
    await page.selectOption('[data-testid=jobs-recipe]', 'train-grpo');
    await page.fill('[data-testid=jobs-name]', 'grpo smoke');
    await page.fill('[data-testid=jobs-workdir]', join(dataDir, 'runs'));
    await page.selectOption('[data-testid=jobs-pool]', 'none');
    // Many steps, so it is still training when cancelled; small turns so steps come quickly on 2 cores.
    await page.fill('[data-testid=jobs-env]', 'TRAIN_SELECTION=Sequence\nTRAIN_STEPS=200\nTRAIN_MAX_TURNS=1\nTRAIN_MAX_NEW_TOKENS=16\nTRAIN_PROMPTS_PER_STEP=1\nTRAIN_BOXED_REWARD=0.5\nTRAIN_RUNTIME=cpython');
    for (const [width, height] of [[1024, 768], [1440, 900]] as const) {
      await page.setViewportSize({ width, height });
      await screenshot(page, `train-grpo-launch-${width}`);
    }
    await page.click('[data-testid=jobs-submit]');
    await page.waitForSelector('[data-testid=job-view][data-state=running]', { timeout: 120_000 });
    const job = () => app.services.jobs.manager.list().find((j) => j.name === 'grpo smoke')!;
    // Live: the charts of what TRL logs fill in while the job runs (a job that ends first says why).
    const end = Date.now() + 600_000;
    while (!(await page.$('[data-testid=jobs-chart][data-key="reward"]'))) {
      const j = job();
      if (j.state !== 'running' && j.state !== 'pending') throw new Error(`the job ended (${j.state}: ${j.detail}) before charting: ${app.services.jobs.manager.readLog(j.id, 0, 1 << 22).text.slice(-3000)}`);
      if (Date.now() > end) throw new Error(`no reward chart after 10 minutes; log: ${app.services.jobs.manager.readLog(j.id, 0, 1 << 22).text.slice(-3000)}`);
      await page.waitForTimeout(2000);
    }
    for (const key of ['frac_reward_zero_std', 'loss']) await page.waitForSelector(`[data-testid=jobs-chart][data-key="${key}"]`);
    expect(await page.getAttribute('[data-testid=job-view]', 'data-state')).toBe('running');
    for (const [width, height] of [[1024, 768], [1440, 900]] as const) {
      await page.setViewportSize({ width, height });
      await screenshot(page, `train-grpo-live-${width}`);
    }
    await page.click('[data-testid=job-stop]');
    await page.waitForSelector('[data-testid=job-view][data-state=cancelled]', { timeout: 60_000 });
    expect(job().state).toBe('cancelled');
    for (const [width, height] of [[1024, 768], [1440, 900]] as const) {
      await page.setViewportSize({ width, height });
      await screenshot(page, `train-grpo-cancelled-${width}`);
    }
  });
});
