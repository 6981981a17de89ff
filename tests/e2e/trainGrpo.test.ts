/**
 * Jobs → "Train locally (GRPO)" in Chromium: launched from the dialog over the app's own seed pack,
 * TRL's per-step numbers appear as charts while it trains (the y range fits the values), and Cancel
 * ends it (the trainer with it). A second, tiny run (2 steps, an adapter saved each step) ends with
 * base and checkpoint evaluated: Compare opens Runs → compare on the two runs, and Evaluate on a
 * saved checkpoint launches the evaluation as a new job that can be compared in turn.
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

  it('evaluates a tiny run at its end and from a saved checkpoint, and Compare opens Runs → compare', { timeout: 1_200_000 }, async () => {
    const { page, dataDir, app } = ctx;
    // Every job opened stays mounted in its tab: look only in the one shown.
    const view = '[data-testid=job-view]:visible';
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.click('[data-testid=jobs-new]');
    await page.waitForSelector('[data-testid=jobs-recipe] option[value=train-grpo]', { state: 'attached' });
    await page.selectOption('[data-testid=jobs-recipe]', 'train-grpo');
    await page.fill('[data-testid=jobs-name]', 'grpo tiny');
    await page.fill('[data-testid=jobs-workdir]', join(dataDir, 'runs'));
    await page.selectOption('[data-testid=jobs-pool]', 'none');
    // The CI settings, smaller: 2 steps over one seed-pack game, an adapter saved after each step.
    await page.fill('[data-testid=jobs-env]', 'TRAIN_SELECTION=tag:seed Sequence\nTRAIN_STEPS=2\nTRAIN_SAVE_EVERY=1\nTRAIN_MAX_TURNS=1\nTRAIN_MAX_NEW_TOKENS=16\nTRAIN_PROMPTS_PER_STEP=1\nTRAIN_SEEDS=2\nTRAIN_EVAL_SEEDS=1\nTRAIN_BOXED_REWARD=0.5\nTRAIN_RUNTIME=cpython');
    await page.click('[data-testid=jobs-submit]');
    const jobs = () => app.services.jobs.manager.list();
    const ended = async (name: string) => {
      const end = Date.now() + 900_000;
      for (;;) {
        const j = jobs().find((x) => x.name === name);
        if (j && ['succeeded', 'failed', 'lost', 'cancelled'].includes(j.state)) return j;
        if (Date.now() > end) throw new Error(`${name} did not end in 15 minutes`);
        await page.waitForTimeout(3000);
      }
    };
    const tiny = await ended('grpo tiny');
    expect(tiny.state, app.services.jobs.manager.readLog(tiny.id, 0, 1 << 22).text.slice(-3000)).toBe('succeeded');
    await page.waitForSelector('[data-testid=job-view][data-state=succeeded]');
    // The end of the run evaluated adapter-final: one evaluation, and every saved adapter is offered.
    await page.waitForSelector(`${view} [data-testid=train-panel][data-evaluations="1"]`);
    expect(await page.locator(`${view} [data-testid=train-checkpoint]`).evaluateAll((rows) => rows.map((r) => r.getAttribute('data-name')))).toEqual(['checkpoint-1', 'checkpoint-2', 'adapter-final']);
    await page.waitForSelector(`${view} [data-testid=jobs-chart][data-key="reward"]`);
    for (const [width, height] of [[1024, 768], [1440, 900]] as const) {
      await page.setViewportSize({ width, height });
      await screenshot(page, `train-grpo-done-${width}`);
    }
    const [base, checkpoint] = (await page.locator(`${view} [data-testid=train-evaluation] td.mono`).allTextContents()).slice(1, 3);
    expect(app.services.runs.get(base!).run.model).toBe('base');
    expect(app.services.runs.get(checkpoint!).run.model).toBe('checkpoint');
    await page.click(`${view} [data-testid=train-compare]`);
    await page.waitForSelector('[data-testid=runs-compare-row]:visible');
    expect(await page.locator('[data-testid=runs-compare-row]:visible').count()).toBe(1);
    for (const [width, height] of [[1024, 768], [1440, 900]] as const) {
      await page.setViewportSize({ width, height });
      await screenshot(page, `train-grpo-compare-${width}`);
    }
    // Evaluate a saved checkpoint: a new job, which ends with its own evaluation to compare.
    await page.locator('[data-testid=jobs-item]', { hasText: 'grpo tiny' }).first().click();
    await page.waitForSelector(`${view} [data-testid=train-checkpoint][data-name=checkpoint-1]`);
    await page.click(`${view} [data-testid=train-checkpoint][data-name=checkpoint-1] [data-testid=train-evaluate]`);
    const evalJob = await ended('grpo tiny (evaluate checkpoint-1)');
    expect(evalJob.state, app.services.jobs.manager.readLog(evalJob.id, 0, 1 << 22).text.slice(-3000)).toBe('succeeded');
    expect(evalJob.spec.env.TRAIN_EVALUATE).toMatch(/checkpoint-1$/);
    await page.waitForSelector(`[data-testid=job-view][data-state=succeeded]:visible [data-testid=train-panel][data-evaluations="1"]`);
    expect(await page.locator(`${view} [data-testid=train-evaluation] td.mono`).first().textContent()).toBe('checkpoint-1');
    for (const [width, height] of [[1024, 768], [1440, 900]] as const) {
      await page.setViewportSize({ width, height });
      await screenshot(page, `train-grpo-evaluated-${width}`);
    }
    await page.click(`${view} [data-testid=train-compare]`);
    await page.waitForSelector('[data-testid=runs-compare-row]:visible');
  });
});
