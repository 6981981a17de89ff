import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWorkbench, runCommand, screenshot, waitForPack, type E2EContext } from '../helpers/browser';

// Chromium against the web host: a regret sweep from the Runs page is SPADE's estimator unless the
// person picks paired seeds; the sweep card, the run's row and its detail say which regret it is,
// and two runs of different estimators are not compared as one quantity. At 1440 and 1024 px.

let ctx: E2EContext;

const GAME = (cls: string) => `# etapool: a game of the regret estimator e2e test
class ${cls}:
    def reset(self, seed=None):
        self.seed = seed
        return "Say \\\\boxed{7}", {}

    def solution(self):
        return "7"

    def step(self, action):
        return "done", 1.0 if "7" in action else 0.0, True, False, {}
`;

beforeAll(async () => {
  ctx = await openWorkbench({ viewport: { width: 1440, height: 900 } });
  await waitForPack(ctx.app.services, 21);
  const dir = join(ctx.dataDir, 'eta');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'eta_one.py'), GAME('EtaOneEnv'));
  writeFileSync(join(dir, 'eta_one_hint.txt'), 'Say seven.');
  const summary = await ctx.app.services.memory.startImport([dir]).done;
  if (!summary) throw new Error('the game was not imported');
  await runCommand(ctx.page, 'regret sweep over a pool');
  await ctx.page.getByTestId('regret-sweeps').waitFor();
}, 60_000);

afterAll(async () => {
  await ctx?.close();
});

describe('which regret, in Chromium', () => {
  it("sweeps by SPADE's estimator by default, labels every run by its estimator, and refuses to compare two", async () => {
    const { page } = ctx;
    const section = page.getByTestId('regret-sweeps');
    expect(await section.getByTestId('regret-estimator').inputValue()).toBe('spade');
    expect(await section.getByTestId('regret-seeds').count()).toBe(0);
    expect(await section.getByTestId('regret-spade-counts').textContent()).toContain('16 hinted plays');
    await section.getByTestId('regret-query').fill('etapool');
    await section.getByTestId('regret-start').click();
    const sweep = section.getByTestId('regret-sweep').first();
    await sweep.getByTestId('regret-progress').waitFor();
    // 16 hinted + 8 unhinted plays of the one game.
    expect(await sweep.getByTestId('regret-progress').textContent()).toMatch(/\d+ \/ 24/);
    expect(await sweep.getByTestId('regret-sweep-estimator').textContent()).toContain("SPADE's regret");
    await page.waitForFunction(() => document.querySelector('[data-testid=regret-sweep]')?.getAttribute('data-state') === 'done', undefined, { timeout: 120_000 });
    await screenshot(page, 'regret-estimator-spade-1440');

    // The paired option, chosen by name.
    await section.getByTestId('regret-estimator').selectOption('paired');
    await section.getByTestId('regret-seeds').fill('2');
    await section.getByTestId('regret-start').click();
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=regret-sweep]')].filter((x) => x.getAttribute('data-state') === 'done').length === 2, undefined, { timeout: 120_000 });
    expect(await section.getByTestId('regret-sweep-estimator').first().textContent()).toContain('paired-seed regret');

    const rows = page.getByTestId('runs-row');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=runs-row]').length >= 2);
    const labels = await page.getByTestId('runs-estimator').allTextContents();
    expect(labels.sort()).toEqual(['SPADE\'s', 'paired seeds'].sort());
    await rows.nth(0).getByTestId('runs-pick-a').check();
    await rows.nth(1).getByTestId('runs-pick-b').check();
    await page.getByText(/not comparable/).waitFor();
    await page.setViewportSize({ width: 1024, height: 768 });
    await page.getByText(/not comparable/).scrollIntoViewIfNeeded();
    await screenshot(page, 'regret-estimator-refused-1024');
    await page.setViewportSize({ width: 1440, height: 900 });
  }, 300_000);
});
