// The designer's reward per game in Chromium (issue 44), at 1440 and 1024 px: the Design page's
// round table (blend and its parts, "not measured" where regret was not measured), the plateau chart
// (uPlot's canvas: SPADE's plateau shaded, the points drawn where their numbers put them), and the
// library sorted by the blend (its Blend header and the query language's sort:blend). The round and
// the measurements are stored rows, as a finished round and a model run leave them.
import { afterEach, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openWorkbench, screenshot, waitForPack, type E2EContext } from '../helpers/browser';
import { createRound, finishGame, finishRound, saveAttempt, startGame } from '../../core/design/designStore';
import type { AttemptRecord, GameRecord, PlayOutcome } from '../../core/design/attempt';
import { RunStore } from '../../core/runs/runStore';
import { spadeBlendScore } from '../../core/api/spadeBlend';

let ctx: E2EContext | null = null;
afterEach(async () => {
  await ctx?.close();
  ctx = null;
});

const attempt = (n: number, rejectedBecause: string | null): AttemptRecord => ({
  n,
  prompt: 'design a game',
  messages: [{ role: 'user', content: 'design a game' }],
  answer: 'class G: pass',
  code: `class Blend${n}Env:\n    pass\n`,
  codeFrom: 'whole-answer',
  verdicts: [],
  rejectedBecause,
  acceptance: null,
  seeds: { positives: [], negatives: [] },
  document: null,
  builder: 'workbench:template',
  tokens: { prompt: 10, completion: 20 },
  ms: 1200,
  error: null,
});
const play = (rNoHint: number, regret: number, winRate: number): PlayOutcome => ({ rHint: rNoHint + regret, rNoHint, regret, winRate, hintedWinRate: 1, episodes: 4, failed: 0 });
const game = (over: Partial<GameRecord>): GameRecord => ({
  skill: 'Logical Deduction',
  attempts: [],
  accepted: true,
  code: null,
  className: null,
  hint: 'a hint',
  hintMessages: null,
  hintError: null,
  hintLeak: null,
  play: null,
  playError: null,
  cls: null,
  difficultyScore: null,
  parents: [],
  ...over,
});

// [mean unhinted reward, regret, share of wins] per game; null: accepted, play failed; 'rejected'.
const GAMES: ([number, number, number] | null | 'rejected')[] = [
  [0.5, 0.075, 1.0], // partial rewards: share of wins 1.0, SPADE's win_rate 0.5 (on the plateau)
  [1.0, 0.3, 1.0], // always won: off the plateau, regret term only
  null,
  'rejected',
  [0.275, 0.2, 0.5], // half way down the left ramp
  [0.05, 0.05, 0.25], // below the ramp: regret term only
];
const blendOf = (g: (typeof GAMES)[number]) => (Array.isArray(g) ? spadeBlendScore({ meanReward: g[0], regret: g[1] }).blend : null);

async function command(page: Page, text: string): Promise<void> {
  await page.keyboard.press('Control+Shift+P');
  await page.getByRole('dialog', { name: 'Command palette' }).waitFor();
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

/** The canvas pixel (RGBA) at CSS pixel (x, y) of the chart's canvas. */
async function pixel(page: Page, x: number, y: number): Promise<number[]> {
  return page.evaluate(
    ([px, py]) => {
      const c = document.querySelector('[data-testid=design-chart] canvas') as HTMLCanvasElement;
      const r = c.width / c.getBoundingClientRect().width;
      return [...c.getContext('2d')!.getImageData(Math.round(px! * r), Math.round(py! * r), 1, 1).data];
    },
    [x, y],
  );
}

describe("the designer's reward per game in Chromium", () => {
  it('shows the blend and its parts in the round table, charts mean reward x regret over SPADE’s plateau, and sorts the library by blend', async () => {
    ctx = await openWorkbench({ viewport: { width: 1440, height: 900 } });
    const { page } = ctx;
    const s = ctx.app.services;
    await waitForPack(s, 21);
    const envs = s.db.prepare('SELECT id, head_hash AS hash, name FROM environments ORDER BY id LIMIT 8').all() as { id: number; hash: string; name: string }[];

    // A finished round as the Design page's round stores it.
    createRound(s.db, 'blend-e2e', { count: GAMES.length, attempts: 1, extra: { designer: { model: 'designer' }, agent: { model: 'agent' } } });
    GAMES.forEach((g, i) => {
      startGame(s.db, 'blend-e2e', i, 'Logical Deduction');
      saveAttempt(s.db, 'blend-e2e', i, 'designer', attempt(1, g === 'rejected' ? 'spade.load: no class found' : null));
      const rec = g === 'rejected' ? game({ accepted: false, hint: null }) : g === null ? game({ playError: 'the agent endpoint refused the connection' }) : game({ play: play(...g) });
      finishGame(s.db, 'blend-e2e', i, rec, g === 'rejected' ? null : { id: envs[i]!.id, hash: envs[i]!.hash });
    });
    // The second game's regret says which estimator measured it.
    s.db.prepare("UPDATE design_games SET play = json_set(play, '$.estimator', 'spade') WHERE round_id = 'blend-e2e' AND idx = 1").run();
    finishRound(s.db, 'blend-e2e', 'done');

    await command(page, 'Design Environments');
    await page.getByTestId('design-view').waitFor();
    await page.getByTestId('design-round-row').first().click();
    await page.waitForSelector('[data-testid=design-round][data-status=done]');
    const rows = page.getByTestId('design-game');
    await page.waitForSelector('[data-testid=design-chart][data-points="4"][data-points-px]');

    // The table: blend to three places, its two terms below it; "not measured", never 0.
    const cells = await rows.getByTestId('design-game-blend').allInnerTexts();
    expect(cells.map((c) => c.split('\n')[0])).toEqual(GAMES.map((g) => (g === 'rejected' ? '–' : g === null ? 'not measured' : blendOf(g)!.toFixed(3))));
    // A play stored without an estimator's name was measured with paired seeds (the only estimator then).
    expect(await rows.nth(0).getByTestId('design-game-blend-parts').innerText()).toBe('0.60 + 0.20 · paired');
    expect(await rows.nth(1).getByTestId('design-game-blend-parts').innerText()).toBe('0.00 + 0.40 · spade');
    expect(await rows.nth(4).getByTestId('design-game-blend-parts').innerText()).toBe('0.30 + 0.40 · paired');
    expect(await rows.nth(0).getByTestId('design-game-mean').innerText()).toBe('0.50');
    const title = (await rows.nth(0).getByTestId('design-game-blend').getAttribute('title'))!;
    expect(title).toContain('plateau term = 0.6 × plateau(mean R 0.500) = 0.6 × 1.000');
    expect(title).toContain('regret term = 0.4 × clip(regret 0.075 / 0.15, 0, 1) = 0.4 × 0.500');
    expect(title).toContain('not masked');
    expect(await rows.nth(1).getByTestId('design-game-blend').getAttribute('title')).toContain('regret measured by the spade estimator');
    expect(await page.locator('.design-table th', { hasText: 'blend' }).getAttribute('title')).toContain('0.6 × plateau(mean R; 0.4–0.6, ramp 0.25) + 0.4 × clip(regret / 0.15, 0, 1)');

    // The chart: SPADE's plateau from the blend code's values, the memory band named for what it is.
    const chart = page.getByTestId('design-chart');
    expect(await chart.getAttribute('data-plateau')).toBe('0.4,0.6,0.25');
    expect(await chart.getAttribute('data-memory-band')).toBe('0.15,0.85');
    const key = await page.getByTestId('design-chart-key').innerText();
    expect(key).toContain('SPADE plateau 0.4–0.6, ramp 0.25');
    expect(key).toContain('memory seed filter 0.15–0.85');
    for (const w of [1440, 1024]) {
      await page.setViewportSize({ width: w, height: w === 1440 ? 900 : 768 });
      await page.getByTestId('design-chart-figure').scrollIntoViewIfNeeded();
      // Redrawn at the new width (the attributes follow each draw).
      await page.waitForFunction(() => document.querySelector('[data-testid=design-chart] canvas') !== null);
      await page.waitForTimeout(300);
      const [lo, hi, top, bottom] = (await chart.getAttribute('data-plateau-px'))!.split(',').map(Number) as [number, number, number, number];
      const X = (v: number) => lo + ((v - 0.4) / 0.2) * (hi - lo);
      const y = top + (bottom - top) * 0.35;
      const inside = await pixel(page, X(0.5) + 3, y);
      const ramp = await pixel(page, X(0.22), y);
      const outside = await pixel(page, X(0.93), y);
      // Inside the plateau: green over white; on the ramp: paler; past the ramp: the plain background.
      expect(inside[1]! - inside[0]!, `plateau pixel ${inside} at ${w}`).toBeGreaterThan(25);
      expect(ramp[1]! - ramp[0]!, `ramp pixel ${ramp} at ${w}`).toBeGreaterThan(0);
      expect(ramp[1]! - ramp[0]!).toBeLessThan(inside[1]! - inside[0]!);
      expect(outside[1]! - outside[0]!, `outside pixel ${outside} at ${w}`).toBeLessThanOrEqual(3);
      // Each measured game drawn where its mean reward puts it, in blue; left to right.
      const pts = (await chart.getAttribute('data-points-px'))!.split(';').map((p) => p.split(',').map(Number) as [number, number]);
      const xs = GAMES.filter((g): g is [number, number, number] => Array.isArray(g)).map((g) => g[0]).sort((a, b) => a - b);
      pts.forEach(([px, py], i) => {
        expect(Math.abs(px - X(xs[i]!)), `point ${i} at ${w}`).toBeLessThan(1.5);
        expect(py).toBeGreaterThan(top);
        expect(py).toBeLessThan(bottom);
      });
      for (const [px, py] of pts) {
        const c = await pixel(page, px, py);
        expect(c[2]! - c[0]!, `point pixel ${c} at ${w}`).toBeGreaterThan(40);
      }
      await screenshot(page, `design-blend-chart-${w}`);
      await page.getByTestId('design-games').scrollIntoViewIfNeeded();
      // The blend column is in view without scrolling the table sideways (it comes right after the result).
      const blendBox = (await rows.nth(0).getByTestId('design-game-blend').boundingBox())!;
      const wrap = (await page.locator('.design-table-wrap').boundingBox())!;
      expect(blendBox.x + blendBox.width, `blend column at ${w}`).toBeLessThanOrEqual(wrap.x + wrap.width + 1);
      await screenshot(page, `design-blend-${w}`);
    }
    expect(ctx.errors).toEqual([]);

    // The library: measurements by a model run for five seed-pack games (one without a regret).
    const runs = new RunStore(s.db);
    runs.start({ id: 'run-blend', model: 'agent-blend', endpoint: 'http://x', config: { endpoint: {}, sampling: { temperature: 1, topP: 1, topK: null, maxTokens: 64, thinking: null } }, hintSource: 'stored', seeds: 2, seedStart: 0, arms: ['hint', 'nohint'], maxTurns: 5, runtime: 'cpython', selection: null, hashes: [], estimator: 'paired' });
    const measured: [number, number | null][] = [[1.0, 0.9], [0.5, 0.075], [0.275, 0.2], [0.5, null], [0.45, 0.0]];
    measured.forEach(([mean, regret], i) =>
      runs.putEnv({ runId: 'run-blend', envHash: envs[i]!.hash, envName: envs[i]!.name, model: 'agent-blend', rHint: regret === null ? null : mean + regret, rNoHint: mean, regret, winRate: mean, hintFailed: false, okHint: 2, okNoHint: 2, failed: 0, seeds: [0, 1], estimator: 'paired' }),
    );
    const want = measured
      .map(([m, r]) => (r === null ? null : spadeBlendScore({ meanReward: m, regret: r }).blend))
      .filter((b): b is number => b !== null)
      .sort((a, b) => b - a)
      .map((b) => b.toFixed(2));
    const blends = () => page.locator('[data-testid=library-row]').evaluateAll((els) => els.map((e) => e.querySelector('[data-testid=library-blend]')!.textContent));
    for (const w of [1440, 1024]) {
      await page.setViewportSize({ width: w, height: w === 1440 ? 900 : 768 });
      await page.getByTestId('library-search').fill('');
      await page.locator('.lib-header .lib-th', { hasText: 'Blend' }).click();
      await page.locator('.lib-header .lib-th.active', { hasText: 'Blend' }).waitFor();
      await page.waitForFunction((n) => [...document.querySelectorAll('[data-testid=library-blend]')].filter((e) => e.textContent !== '–').length >= n, want.length);
      // The sorted rows come back in a re-render after the search is cleared: read them until they settle.
      await expect.poll(async () => (await blends()).slice(0, want.length), { timeout: 15_000 }).toEqual(want);
      expect(await page.getByTestId('library-blend').first().getAttribute('title')).toContain("SPADE's designer blend");
      // The header sorted; now the query language does: header off (desc -> asc -> off), sort:blend typed.
      await page.locator('.lib-header .lib-th', { hasText: 'Blend' }).click();
      await page.locator('.lib-header .lib-th', { hasText: 'Blend' }).click();
      await page.locator('.lib-header .lib-th.active').waitFor({ state: 'detached' });
      await page.getByTestId('library-search').fill('sort:blend');
      await page.waitForFunction((first) => document.querySelector('[data-testid=library-row] [data-testid=library-blend]')?.textContent === first, want[0]);
      expect((await blends()).slice(0, want.length)).toEqual(want);
      // An operator is no text: nothing in the games' code is lit up as a match for "sort".
      expect(await page.getByTestId('library-snippet').count()).toBe(0);
      // The Blend header is visible and not cut at this width.
      const head = await page.locator('.lib-header .lib-th', { hasText: 'Blend' }).evaluate((e) => ({ w: e.clientWidth, sw: e.scrollWidth, shown: getComputedStyle(e).display !== 'none' }));
      expect(head.shown).toBe(true);
      expect(head.sw).toBeLessThanOrEqual(head.w);
      await screenshot(page, `library-blend-${w}`);
    }
    expect(ctx.errors).toEqual([]);
  }, 120_000);
});
