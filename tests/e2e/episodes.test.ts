import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { tempDir } from '../helpers/tmp';
import { firstPrompt } from '../../core/episodes/hint';
import type { Services } from '../../core/services/services';

const GAMES = join(process.cwd(), 'resources', 'seed-pack', 'games');

let ctx: E2EContext | null = null;
afterEach(async () => {
  await ctx?.close();
  ctx = null;
});

/** The seed pack is imported in the background on first start; wait until the named game is in. */
async function waitForEnv(s: Services, className: string): Promise<string> {
  for (let i = 0; i < 300; i++) {
    const r = s.db.prepare('SELECT head_hash AS h FROM environments WHERE name = ?').get(className) as { h: string } | undefined;
    if (r) return r.h;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`${className} never arrived in the library`);
}

async function pickEnv(page: Page, name: string, seed: number): Promise<void> {
  await page.getByRole('button', { name: 'Episodes', exact: true }).click();
  await page.getByTestId('episodes-panel').waitFor();
  await page.getByTestId('ep-env-search').fill(name);
  await page.waitForFunction((n) => {
    const sel = document.querySelector('[data-testid=ep-env]') as HTMLSelectElement | null;
    return !!sel && sel.options.length > 0 && sel.options[0]!.text.startsWith(n);
  }, name);
  await page.getByTestId('ep-env').selectOption({ index: 0 });
  await page.getByTestId('ep-seed').fill(String(seed));
}

async function stepsIs(page: Page, n: number, scope = '[data-testid=episode-view]'): Promise<void> {
  await page.waitForSelector(`${scope}[data-steps="${n}"]`);
}

describe('episodes in Chromium', () => {
  it('plays the seed pack game that leaks state across reset; the leak shows in the state diff', async () => {
    ctx = await openWorkbench();
    const { page } = ctx;
    await waitForEnv(ctx.app.services, 'MentalArithmeticEnv');
    await pickEnv(page, 'MentalArithmeticEnv', 1);
    await page.getByTestId('ep-open').click();
    await stepsIs(page, 1);
    await page.getByTestId('action-input').fill('\\boxed{1}');
    await page.getByTestId('action-input').press('Enter');
    await stepsIs(page, 2);
    expect(await page.getByTestId('step-action').textContent()).toBe('\\boxed{1}');
    await page.getByTestId('reset-again').click();
    await stepsIs(page, 3);
    const leak = page.getByTestId('leak-changes');
    await leak.waitFor();
    expect(await leak.textContent()).toContain('asked');
    // the state tree marks `asked` as changed (it grew although reset() ran)
    expect(await page.locator('[data-testid=state-tree] [data-path="asked"]').getAttribute('data-changed')).toBe('true');
    expect(await page.getByTestId('state-changes').textContent()).toContain('asked');
    await screenshot(page, 'episodes-leak');
    // scrub back to step 0 with the timeline: the step panel follows
    await page.getByTestId('timeline').fill('0');
    await page.waitForSelector('[data-testid=step-panel][data-idx="0"]');
    expect(ctx.errors).toEqual([]);
  });

  it('shows the same seed without and with the hint in two synchronized columns', async () => {
    ctx = await openWorkbench({ colorScheme: 'dark' });
    const { page } = ctx;
    await waitForEnv(ctx.app.services, 'GridWalkEnv');
    // SPADE injects the hint verbatim, whitespace included (the import keeps it so).
    const hint = readFileSync(join(GAMES, 'game_00000_005_spatial_reasoning_hint.txt'), 'utf8');
    await pickEnv(page, 'GridWalkEnv', 3);
    await page.getByTestId('ep-compare-hint').click();
    await page.getByTestId('pair-view').waitFor();
    await page.waitForSelector('[data-testid=col-b] [data-testid=step-observation]');
    const a = (await page.locator('[data-testid=col-a] [data-testid=step-observation]').textContent())!;
    const b = (await page.locator('[data-testid=col-b] [data-testid=step-observation]').textContent())!;
    expect(a).not.toContain('HINT:');
    expect(b).toBe(`${a}\n\nHINT: ${hint}`);
    expect(await page.locator('[data-testid=col-b] [data-testid=injected-hint]').textContent()).toBe(`\n\nHINT: ${hint}`);
    await page.getByTestId('pair-action').fill('\\boxed{up}');
    await page.getByTestId('pair-action').press('Enter');
    await page.waitForSelector('[data-testid=col-a][data-steps="2"]');
    await page.waitForSelector('[data-testid=col-b][data-steps="2"]');
    await page.waitForSelector('[data-testid=col-a] [data-testid=step-panel][data-idx="1"]');
    await page.waitForSelector('[data-testid=col-b] [data-testid=step-panel][data-idx="1"]');
    expect(await page.locator('[data-testid=col-a] [data-testid=step-observation]').textContent()).toBe(await page.locator('[data-testid=col-b] [data-testid=step-observation]').textContent());
    await page.getByTestId('pair-timeline').fill('0');
    await page.waitForSelector('[data-testid=col-b] [data-testid=step-panel][data-idx="0"]');
    await screenshot(page, 'episodes-hint-columns');
    expect(ctx.errors).toEqual([]);
  });

  it('imports a trajectory with a planted divergence and reports it at the right step, side by side', async () => {
    ctx = await openWorkbench();
    const { page } = ctx;
    const s = ctx.app.services;
    const hash = await waitForEnv(s, 'GridWalkEnv');
    // A real trace to start from, played in the app's own runtime.
    const ep = s.episodes;
    const { episode } = await ep.open({ hash, seed: 8, hint: false, label: 'source', runtime: 'pyodide' });
    const played = await ep.run(episode.id, { kind: 'script', actions: ['\\boxed{up}', '\\boxed{left}', '\\boxed{down}', '\\boxed{right}'], extract: false }, { kind: 'steps', count: 4 }, 10);
    const msgs: { role: string; content: string; reward?: number }[] = [{ role: 'user', content: firstPrompt(played.steps[0]!.observation!) }];
    for (const st of played.steps.slice(1)) {
      msgs.push({ role: 'assistant', content: `<think>plan</think>I move ${st.action}` });
      msgs.push({ role: 'user', content: st.observation! });
    }
    msgs[2 * 2]!.content = 'You moved up.\nS....\n.....\n.....\n.....\n....G'; // planted at step 2
    await pickEnv(page, 'GridWalkEnv', 0);
    await page.getByTestId('ep-import-text').fill(msgs.map((m) => JSON.stringify(m)).join('\n'));
    await page.getByTestId('ep-import-run').click();
    await page.getByTestId('divergence-banner').waitFor();
    expect(await page.getByTestId('divergence-step').textContent()).toBe('2');
    expect(await page.getByTestId('ep-msg').textContent()).toContain('seed 8 (search)');
    await page.getByTestId('show-divergence').click();
    await page.getByTestId('pair-view').waitFor();
    await page.waitForSelector('[data-testid=col-a] [data-testid=step-panel][data-idx="2"]');
    await page.waitForSelector('[data-testid=col-b] [data-testid=step-panel][data-idx="2"]');
    const rec = await page.locator('[data-testid=col-a] [data-testid=step-observation]').textContent();
    const now = await page.locator('[data-testid=col-b] [data-testid=step-observation]').textContent();
    expect(rec).toContain('S....');
    expect(now).toBe(played.steps[2]!.observation);
    expect(await page.locator('[data-testid=col-b] [data-testid=state-changes]').textContent()).toMatch(/pos|turn/);
    expect(await page.getByTestId('divergence-state').textContent()).toMatch(/turn/);
    await screenshot(page, 'episodes-divergence');
    expect(ctx.errors).toEqual([]);
  });

  it('runs the regret panel: returns with and without the hint, regret and solve rates, with a chart', async () => {
    ctx = await openWorkbench();
    const { page } = ctx;
    await waitForEnv(ctx.app.services, 'GridWalkEnv');
    await pickEnv(page, 'GridWalkEnv', 0);
    await page.getByTestId('ep-regret').click();
    await page.getByTestId('regret-view').waitFor();
    await page.getByTestId('regret-seeds').fill('5');
    await page.getByTestId('regret-policy').selectOption('random');
    await page.getByTestId('regret-hint-policy').selectOption('solution');
    await page.getByTestId('regret-run').click();
    await page.getByTestId('regret-table').waitFor();
    expect(await page.getByTestId('r-hint').textContent()).toBe('1');
    expect(await page.getByTestId('r-no-hint').textContent()).toBe('0');
    expect(await page.getByTestId('regret-value').textContent()).toBe('1');
    expect(await page.getByTestId('regret-chart').getAttribute('data-points')).toBe('5');
    await screenshot(page, 'episodes-regret');

    // A long run shows its progress and stops on Cancel with the same seeds in both arms.
    await page.getByTestId('regret-seeds').fill('400');
    await page.getByTestId('regret-run').click();
    await page.getByTestId('regret-progress').getByText(/ (?:[4-9]|\d{2,}) \/ 800 episodes/).waitFor({ timeout: 60_000 });
    expect(await page.getByTestId('regret-progress').textContent()).toMatch(/seed \d+ of 400 · \d+ \/ 800 episodes · about \d+ s left/);
    await screenshot(page, 'episodes-regret-progress');
    await page.getByTestId('regret-cancel').click();
    await page.getByTestId('regret-cancelled').waitFor({ timeout: 60_000 });
    const nHint = Number(await page.getByTestId('n-hint').textContent());
    expect(nHint).toBeGreaterThanOrEqual(2);
    expect(nHint).toBeLessThan(400);
    expect(await page.getByTestId('n-no-hint').textContent()).toBe(String(nHint));
    expect(await page.getByTestId('regret-chart').getAttribute('data-points')).toBe(String(nHint));
    expect(await page.getByTestId('regret-progress').count()).toBe(0);
    expect(ctx.errors).toEqual([]);
  });

  it('keeps episodes across an app restart and continues them', async () => {
    const dir = tempDir('spade-e2e-episodes-restart-');
    try {
      ctx = await openWorkbench({ dataDir: dir.dir });
      await waitForEnv(ctx.app.services, 'GridWalkEnv');
      await pickEnv(ctx.page, 'GridWalkEnv', 2);
      await ctx.page.getByTestId('ep-open').click();
      await stepsIs(ctx.page, 1);
      await ctx.page.getByTestId('policy').selectOption('solution');
      await ctx.page.getByTestId('run').click();
      await ctx.page.getByTestId('run-result').waitFor();
      const n = Number(await ctx.page.getByTestId('episode-view').getAttribute('data-steps'));
      expect(n).toBeGreaterThan(2);
      const ret = await ctx.page.getByTestId('episode-return').textContent();
      expect(ret).toBe('1');
      await ctx.close();
      ctx = await openWorkbench({ dataDir: dir.dir });
      await ctx.page.getByRole('button', { name: 'Episodes', exact: true }).click();
      await ctx.page.getByTestId('ep-item').first().click();
      await stepsIs(ctx.page, n);
      expect(await ctx.page.getByTestId('episode-return').textContent()).toBe('1');
      // scrub: the recording answers without a live session
      await ctx.page.getByTestId('timeline').fill('1');
      await ctx.page.waitForSelector('[data-testid=step-panel][data-idx="1"]');
      await screenshot(ctx.page, 'episodes-after-restart');
      expect(ctx.errors).toEqual([]);
    } finally {
      await ctx?.close();
      ctx = null;
      dir.cleanup();
    }
  });
});
