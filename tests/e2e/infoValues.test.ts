import { afterEach, describe, expect, it } from 'vitest';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { ingest } from '../../core/memory/repository';

/** A game whose info holds booleans, None and a string (SPADE keeps the first two, drops the string). */
const GAME = String.raw`"""SPADE self-play generated game"""
import re

class InfoFlagEnv:
    def __init__(self, max_turns=5):
        self.max_turns = max_turns

    def reset(self, seed=None):
        return "Say \\boxed{7}", {}

    def step(self, action):
        m = re.search(r"\\boxed\{([^}]*)\}", action)
        correct = bool(m) and m.group(1) == "7"
        return ("Right" if correct else "Wrong"), (1.0 if correct else 0.0), correct, False, {"correct": correct, "missing": None, "label": "seen"}
`;

let ctx: E2EContext | null = null;
afterEach(async () => {
  await ctx?.close();
  ctx = null;
});

describe('boolean info in Chromium', () => {
  it('plays a step whose info is {"correct": True} and shows it, with no error', { timeout: 180_000 }, async () => {
    ctx = await openWorkbench();
    const { page } = ctx;
    ingest(ctx.app.services.db, { source: GAME, path: 'info_flag_env.py' });
    await page.getByRole('button', { name: 'Episodes', exact: true }).click();
    await page.getByTestId('episodes-panel').waitFor();
    await page.getByTestId('ep-env-search').fill('InfoFlagEnv');
    await page.waitForFunction(() => {
      const sel = document.querySelector('[data-testid=ep-env]') as HTMLSelectElement | null;
      return !!sel && sel.options.length > 0 && sel.options[0]!.text.startsWith('InfoFlagEnv');
    });
    await page.getByTestId('ep-env').selectOption({ index: 0 });
    await page.getByTestId('ep-open').click();
    // The first open starts an interpreter: on a shared CI machine that can take longer than a step.
    await page.waitForSelector('[data-testid=episode-view][data-steps="1"]', { timeout: 120_000 }).catch(async (e: unknown) => {
      await screenshot(page, 'episodes-bool-info-open-failed');
      throw e;
    });
    await page.getByTestId('action-input').fill('\\boxed{7}');
    await page.getByTestId('action-input').press('Enter');
    await page.waitForSelector('[data-testid=episode-view][data-steps="2"]');
    const info = page.locator('.ep-info');
    await info.waitFor();
    expect(JSON.parse((await info.textContent()) ?? '')).toEqual({ correct: true, missing: null, label: 'seen' });
    await screenshot(page, 'episodes-bool-info');
    expect(ctx.errors).toEqual([]);
  });
});
