import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { writeStandIn8b } from '../integration/jobs/standIn8b';

/**
 * The job view's artefacts: a real local job lays out a run folder as SPADE's launchers and Slime
 * do (a --save folder of iter_NNNNNNN checkpoints with latest_checkpointed_iteration.txt) and puts
 * beside it the results.json files SPADE's eval_offline code wrote (tests/fixtures/eval-offline).
 */
describe("a run's checkpoints and offline evaluation in the job view (Chromium)", () => {
  let ctx: E2EContext;
  beforeAll(async () => {
    ctx = await openWorkbench();
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('lists the checkpoints by step and shows one column of eval_offline results per checkpoint', async () => {
    const { page, dataDir, app } = ctx;
    const fix = join(process.cwd(), 'tests', 'fixtures', 'eval-offline');
    const script = [
      'set -e',
      'S="$OUTPUT_DIR/Qwen3-8B_games_blend_thinking"',
      'for i in 0000015 0000031; do mkdir -p "$S/iter_$i" "$OUTPUT_DIR/offline_eval/iter_$i"; cp "$FIX/iter_$i/results.json" "$OUTPUT_DIR/offline_eval/iter_$i/"; done',
      'printf 31 > "$S/latest_checkpointed_iteration.txt"',
      'echo checkpoints written',
    ].join('\n');
    await app.services.jobs.submit({ name: 'run with checkpoints', backend: 'local', command: ['sh', '-c', script], env: { OUTPUT_DIR: '{{JOB_DIR}}/run', FIX: fix }, workdir: join(dataDir, 'runs'), noPool: true });
    await page.click('button[aria-label=Jobs]');
    await page.click('[data-testid=jobs-item]:has-text("run with checkpoints")');
    const view = '[data-testid=job-view]:has(h2:has-text("run with checkpoints"))';
    await page.waitForSelector(`${view}[data-state=succeeded]`, { timeout: 60_000 });
    // Read again when the job ends: the summary line says what is there before it is opened.
    const panel = `${view} [data-testid=job-artefacts]`;
    await page.waitForSelector(`${panel}[data-checkpoints="2"][data-evals="2"]`);
    expect(await page.textContent(`${panel} summary`)).toBe('Checkpoints: 2, latest step 31 · offline evaluation: 2 checkpoints');
    await page.click(`${panel} summary`);
    const ckpts = await page.$$eval(`${panel} [data-testid=job-checkpoint-row]`, (rows) => rows.map((r) => [r.getAttribute('data-step'), r.getAttribute('data-latest'), r.querySelector('td.mono')?.textContent ?? '']));
    expect(ckpts.map(([s, l]) => [s, l])).toEqual([['31', 'true'], ['15', 'false']]);
    // Named within the run folder (shown above them); the full path is the cell's title.
    expect(ckpts[0]![2]).toBe('Qwen3-8B_games_blend_thinking/iter_0000031latest');
    expect(await page.$$eval(`${panel} [data-testid=job-eval-col]`, (els) => els.map((e) => e.textContent))).toEqual(['step 15', 'step 31']);
    const rows = await page.$$eval(`${panel} [data-testid=job-eval-row]`, (els) => els.map((e) => [...e.querySelectorAll('td')].map((td) => td.textContent)));
    expect(rows).toContainEqual(['aime', 'aime2025_pass1', '0.2125', '0.2604']);
    // json.dumps wrote NaN for a year with no problems: no number is made up for it.
    expect(rows).toContainEqual(['', 'aime2026_pass1', '0.1875', '–']);
    // A suite eval_offline skipped at one checkpoint and that failed at the other says so.
    expect(rows).toContainEqual(['livecodebench', '(not run)', 'skipped', 'error: RuntimeError: LCB_ROOT is not set']);
    expect(rows).toContainEqual(['gem', 'gem_eval/overall_win_rate', '0.3100', '0.3600']);
    // A command without a recipe cannot be continued, and the view says why.
    expect(await page.isDisabled(`${panel} [data-testid=job-continue]`)).toBe(true);
    expect(await page.textContent(`${panel} [data-testid=job-continue-note]`)).toBe('Cannot continue: this job was launched without a recipe');
    for (const [width, height] of [[1024, 768], [1440, 900]] as const) {
      await page.setViewportSize({ width, height });
      // The panel from its top (summary, continue, checkpoints), then scrolled to the eval table's end.
      await page.$eval(panel, (el) => el.scrollTo(0, 0));
      await screenshot(page, `job-artefacts-${width}`);
      await page.$eval(panel, (el) => el.scrollTo(0, el.scrollHeight));
      await screenshot(page, `job-artefacts-eval-${width}`);
      // The summary and the table's header stay in view as it scrolls.
      expect(await page.isVisible(`${panel} summary`)).toBe(true);
      // The table scrolls inside its own box: the page never scrolls sideways.
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    }
    expect(ctx.errors).toEqual([]);
  });

  it("continues a SPADE run from its newest checkpoint: the recipe again, LOAD_DIR = its save folder, a new job", async () => {
    const { page, dataDir, app } = ctx;
    const checkout = join(dataDir, 'spade');
    writeStandIn8b(checkout);
    app.services.jobs.secrets.set('WANDB_API_KEY', 'e2e-wandb-key');
    const first = await app.services.jobs.submit({ name: 'spade 8b', backend: 'local', recipe: 'spade-games-8b', workdir: checkout, env: { WANDB_ENTITY: 'e2e', CORPUS_FILE: '' }, secretEnv: ['WANDB_API_KEY'], noPool: true });
    await page.click('[data-testid=jobs-item]:has-text("spade 8b")');
    const view = '[data-testid=job-view]:has(h2:text-is("spade 8b"))';
    await page.waitForSelector(`${view}[data-state=succeeded]`, { timeout: 60_000 });
    const panel = `${view} [data-testid=job-artefacts]`;
    await page.waitForSelector(`${panel}[data-checkpoints="2"]`);
    await page.click(`${panel} summary`);
    const save = join(checkout, '.spade_workbench', first.id, 'run', 'Qwen3-8B_games_blend_thinking');
    expect(await page.textContent(`${panel} [data-testid=job-continue]`)).toBe('Continue from step 31');
    expect(await page.textContent(`${panel} [data-testid=job-continue-note]`)).toBe(`LOAD_DIR=${save}`);
    for (const [width, height] of [[1024, 768], [1440, 900]] as const) {
      await page.setViewportSize({ width, height });
      await screenshot(page, `job-artefacts-continue-${width}`);
    }
    await page.click(`${panel} [data-testid=job-continue]`);
    // The new job opens in its own tab and reads the old run's checkpoint and memory.
    const next = '[data-testid=job-view]:has(h2:text-is("spade 8b (from step 31)"))';
    await page.waitForSelector(`${next}[data-state=succeeded]`, { timeout: 60_000 });
    await page.waitForSelector(`${next} [data-testid=jobs-term]:has-text("Seeded env memory from")`);
    expect(await page.textContent(`${next} [data-testid=jobs-term]`)).toContain(`[stand-in] LOAD_DIR=${save} latest=31`);
    const cont = app.services.jobs.manager.list().find((j) => j.name === 'spade 8b (from step 31)')!;
    expect(cont.spec.env.LOAD_DIR).toBe(save);
    expect(cont.spec.secretEnv).toEqual(['WANDB_API_KEY']);
    expect(ctx.errors).toEqual([]);
  });
});
