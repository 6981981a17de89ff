import { afterEach, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import type { Services } from '../../core/services/services';
import type { StepRecord } from '../../core/episodes/episodeStore';

// Issue 31 in Chromium against the web host, with the real Pyodide audit and real SQLite: the
// leak's evidence and its replay say the same episode (seed, actions, the second reset, runtime,
// mode); closing the replay's tab leaves no runtime session open; 351 recorded episodes filtered.
let ctx: E2EContext | null = null;
afterEach(async () => {
  await ctx?.close();
  ctx = null;
});

async function waitForEnv(s: Services, className: string): Promise<string> {
  for (let i = 0; i < 300; i++) {
    const r = s.db.prepare('SELECT head_hash AS h FROM environments WHERE name = ?').get(className) as { h: string } | undefined;
    if (r) return r.h;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`${className} never arrived in the library`);
}

/** Both sizes people use: a laptop and a small window. */
async function shots(page: Page, name: string): Promise<void> {
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.waitForTimeout(250);
  await screenshot(page, `replay-${name}-1440x900`);
  await page.setViewportSize({ width: 1024, height: 700 });
  await page.waitForTimeout(250);
  await screenshot(page, `replay-${name}-1024x700`);
  await page.setViewportSize({ width: 1440, height: 900 });
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`never: ${what}`);
}

describe('audit evidence, its replay and the recorded list in Chromium', () => {
  it('replays exactly the episode the leak evidence names and closes its session with its tab', async () => {
    ctx = await openWorkbench();
    const { page } = ctx;
    const s = ctx.app.services;
    const hash = await waitForEnv(s, 'MentalArithmeticEnv');
    const stored = await s.audit.runOne(hash, { checks: ['reset-leak'] });
    expect(stored!.runtime).toBe('pyodide');

    await page.keyboard.press('Control+Shift+P');
    await page.getByRole('dialog', { name: 'Command palette' }).locator('input').fill('pool audit dashboard');
    await page.keyboard.press('Enter');
    const dash = page.getByTestId('audit-dashboard');
    await dash.locator('g[data-check="reset-leak"]').click();
    await dash.getByRole('button', { name: 'MentalArithmeticEnv' }).click();
    const view = page.locator('.tab-pane:not([hidden]) [data-testid=audit-view]');
    const leak = view.locator('li[data-check="reset-leak"]');
    await leak.waitFor();
    // The evidence says the whole episode: the seed the replay opens, the actions, the reset that leaks, where and how.
    const n = (stored!.checks.find((c) => c.id === 'reset-leak')!.evidence.actions as string[]).length;
    expect(await leak.locator('[data-ev=seed] code').textContent()).toBe('3');
    expect(await leak.locator('[data-ev=resetSeed] code').textContent()).toBe('5');
    expect(await leak.locator('[data-ev=runtime] code').textContent()).toBe('pyodide');
    expect(await leak.locator('[data-ev=mode] code').textContent()).toBe('deterministic');
    expect(await leak.getByTestId('audit-replay-plan').textContent()).toBe(
      `reset(seed=3), then ${n} action${n === 1 ? '' : 's'}, then reset(seed=5) on the same instance · Pyodide, deterministic mode`,
    );
    await shots(page, '01-evidence');

    const sessionsBefore = s.runtime.status().sessions;
    await leak.getByRole('button', { name: 'Replay' }).click();
    const episode = page.locator('.tab-pane:not([hidden]) [data-testid=episode-view]');
    await episode.waitFor({ timeout: 120_000 });
    await episode.getByTestId('leak-changes').waitFor();
    const id = Number(await episode.getAttribute('data-episode'));
    const ep = s.episodes.get(id);
    // The replay is the evidence's episode: its seed, its actions, then reset(5), in Pyodide, deterministic.
    expect(ep.episode).toMatchObject({ seed: 3, runtime: 'pyodide', live: true });
    expect(ep.episode.meta.mode).toBe('deterministic');
    expect(ep.steps.map((x) => (x.kind === 'reset' ? `reset(${x.seed})` : 'step'))).toEqual(['reset(3)', ...Array(n).fill('step'), 'reset(5)']);
    expect(await episode.locator('.ep-header .muted').first().textContent()).toContain('seed 3');
    expect(await episode.locator('.ep-header .muted').first().textContent()).toContain('pyodide');
    // Only the shown episode holds a session (the fresh reference reset was closed once recorded).
    expect(s.runtime.status().sessions).toBe(sessionsBefore + 1);
    await shots(page, '02-replayed');

    await page.getByRole('button', { name: `Close #${id} MentalArithmeticEnv (reset-leak)` }).click();
    await until('the replay session closes with its tab', () => s.runtime.status().sessions === sessionsBefore);
    expect(s.episodes.get(id).episode.live).toBe(false);
    expect(ctx.errors).toEqual([]);
  }, 600_000);

  it('filters 351 recorded episodes by environment, policy, hint, outcome and date', async () => {
    ctx = await openWorkbench();
    const { page } = ctx;
    const s = ctx.app.services;
    const store = s.episodes.ctx.d.store;
    const envs = ['GuessNumberEnv', 'GridWalkEnv', 'MentalArithmeticEnv'];
    const policies = [{ kind: 'interactive' }, { kind: 'script', count: 3 }, { kind: 'solution' }, { kind: 'llm', model: 'm' }];
    const reset: StepRecord = { idx: 0, kind: 'reset', action: null, rawAction: null, seed: 0, observation: 'go', reward: null, terminated: false, truncated: false, info: {}, error: null, state: null, types: null };
    let wonScriptNoHint = 0;
    for (let i = 0; i < 351; i++) {
      const hint = i % 2 === 0;
      const won = i % 5 === 0;
      const env = envs[i % 3]!;
      const policy = policies[i % 4]!;
      if (env === 'MentalArithmeticEnv' && policy.kind === 'script' && !hint && won && i % 30 >= 2) wonScriptNoHint++;
      const day = `2026-11-${String(1 + (i % 30)).padStart(2, '0')}`;
      const id = store.create({ envHash: `${i % 3}`.repeat(64), envName: env, className: env, seed: i, hintEnabled: hint, hintText: hint ? 'h' : null, maxTurns: 30, runtime: 'pyodide', origin: 'played', policy }, `${day}T12:00:00.000Z`);
      const spade = { observation: 'x', reward: won ? 1 : 0, terminated: true, truncated: false, info: {} };
      store.appendSteps(id, [reset, { ...reset, idx: 1, kind: 'step', action: '\\boxed{1}', seed: null, reward: spade.reward, terminated: true, spade }]);
    }
    await page.getByRole('button', { name: 'Episodes', exact: true }).click();
    const panel = page.getByTestId('episodes-panel');
    await page.waitForFunction(() => document.querySelector('[data-testid=ep-count]')?.textContent === '(200 of 351)');
    await shots(page, '03-episodes-all');

    await panel.getByTestId('ep-filter-env').selectOption('MentalArithmeticEnv');
    await panel.getByTestId('ep-filter-policy').selectOption('script');
    await panel.getByTestId('ep-filter-hint').selectOption('off');
    await panel.getByTestId('ep-filter-outcome').selectOption('won');
    await panel.getByTestId('ep-filter-since').fill('2026-11-03');
    await page.waitForFunction((k) => document.querySelector('[data-testid=ep-count]')?.textContent === `(${k})`, wonScriptNoHint);
    expect(wonScriptNoHint).toBeGreaterThan(0);
    const rows = panel.getByTestId('ep-item');
    expect(await rows.count()).toBe(wonScriptNoHint);
    for (const t of await rows.locator('.ep-name').allTextContents()) expect(t).toContain('MentalArithmeticEnv');
    await shots(page, '04-episodes-filtered');

    await panel.getByTestId('ep-filter-outcome').selectOption('truncated');
    await panel.getByTestId('ep-empty').waitFor();
    expect(await panel.getByTestId('ep-empty').textContent()).toBe('No recorded episode matches these filters.');
    await panel.getByTestId('ep-filter-clear').click();
    await page.waitForFunction(() => document.querySelector('[data-testid=ep-count]')?.textContent === '(200 of 351)');
    await panel.getByTestId('ep-more').click();
    await page.waitForFunction(() => document.querySelector('[data-testid=ep-count]')?.textContent === '(351)');
    expect(await rows.count()).toBe(351);
    expect(ctx.errors).toEqual([]);
  }, 300_000);
});
