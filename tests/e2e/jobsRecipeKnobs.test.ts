import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';

/**
 * The launch dialog says what a SPADE script allows (issue 42): the values a variable may take per
 * size as a choice, what the workbench sets itself and why (Tinker's AIME 2026 path, a dry run's
 * PREPARE_ONLY), that the script reads no arguments, and the engine's refusal of a value typed anyway.
 */
describe("the launch dialog and SPADE's script knobs (Chromium)", () => {
  let ctx: E2EContext;
  beforeAll(async () => {
    ctx = await openWorkbench();
  });
  afterAll(async () => {
    await ctx?.close();
  });

  const options = async (sel: string): Promise<string[]> => ctx.page.$$eval(`${sel} option`, (os) => os.map((o) => (o as HTMLOptionElement).value));

  it('offers per size the REWARD_VARIANT values the script accepts, notes fixed variables, and refuses a typed value the script refuses', async () => {
    const { page } = ctx;
    await page.click('button[aria-label=Jobs]');
    await page.waitForSelector('[data-testid=jobs-panel]');
    await page.click('[data-testid=jobs-new]');
    await page.waitForSelector('[data-testid=jobs-recipe] option[value=spade-tinker-qwen3-4b-instruct]', { state: 'attached' });

    await page.selectOption('[data-testid=jobs-recipe]', 'spade-games-8b');
    expect(await options('[data-testid=jobs-knob-REWARD_VARIANT]')).toEqual(['', 'blend', 'regret_var']);
    await page.selectOption('[data-testid=jobs-recipe]', 'spade-games-30b');
    expect(await options('[data-testid=jobs-knob-REWARD_VARIANT]')).toEqual(['', 'blend', 'learning_potential', 'solve_rate']);
    await page.selectOption('[data-testid=jobs-recipe]', 'spade-games-4b');
    expect(await page.$('[data-testid=jobs-knob-REWARD_VARIANT]')).toBeNull();
    expect(await page.textContent('[data-testid=jobs-no-args]')).toContain('cmd/games/train_spade_4b.sh reads no arguments');

    await page.selectOption('[data-testid=jobs-recipe]', 'spade-fixed-rlve-8b');
    expect(await options('[data-testid=jobs-knob-RLVE_ENV_SET]')).toEqual(['', 'all', 'official16']);

    await page.selectOption('[data-testid=jobs-recipe]', 'spade-fixed-gpt55-4b-dry-run');
    expect(await page.textContent('[data-testid=jobs-fixed-PREPARE_ONLY]')).toMatch(/PREPARE_ONLY=1 is set by the workbench and cannot be changed: this recipe is SPADE's dry run/);

    await page.selectOption('[data-testid=jobs-recipe]', 'spade-tinker-qwen3-4b-instruct');
    const fixed = await page.textContent('[data-testid=jobs-fixed-AIME_2026_PATH]');
    expect(fixed).toMatch(/AIME_2026_PATH=\{\{JOB_DIR\}\}\/no-aime-2026 is set by the workbench/);
    expect(fixed).toMatch(/SpadeConfig declares only aime_2024_path and aime_2025_path/);
    expect(await page.textContent('.jobs-desc')).toMatch(/no local GPU/);
    for (const [width, height] of [[1024, 768], [1440, 900]] as const) {
      await page.setViewportSize({ width, height });
      await screenshot(page, `jobs-knobs-tinker-${width}`);
    }

    // A choice and a typed line that disagree are said, and nothing is launched.
    await page.selectOption('[data-testid=jobs-recipe]', 'spade-games-8b');
    await page.selectOption('[data-testid=jobs-knob-REWARD_VARIANT]', 'regret_var');
    await page.fill('[data-testid=jobs-env]', 'WANDB_ENTITY=e\nCORPUS_FILE=\nREWARD_VARIANT=blend');
    await page.click('[data-testid=jobs-submit]');
    await page.waitForSelector('text=REWARD_VARIANT is chosen as regret_var above and typed as blend');
    // A value the 8B script refuses, typed: the engine refuses the launch in words.
    await page.selectOption('[data-testid=jobs-knob-REWARD_VARIANT]', '');
    await page.fill('[data-testid=jobs-env]', 'WANDB_ENTITY=e\nCORPUS_FILE=\nREWARD_VARIANT=solve_rate');
    await page.click('[data-testid=jobs-submit]');
    await page.waitForSelector('text=REWARD_VARIANT must be one of blend, regret_var');
    for (const [width, height] of [[1024, 768], [1440, 900]] as const) {
      await page.setViewportSize({ width, height });
      await screenshot(page, `jobs-knobs-refused-${width}`);
    }
    const jobs = await ctx.page.$$('[data-testid=jobs-panel] [data-testid=jobs-item]');
    expect(jobs).toHaveLength(0);
    await page.click('[data-testid=jobs-launch] button:has-text("Cancel")');
  });
});
