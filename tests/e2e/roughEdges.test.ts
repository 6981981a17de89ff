import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { Backend } from '../../core/api';
import { createHandlers } from '../../core/handlers';
import { createDispatcher } from '../../core/server/dispatcher';
import { createInProcessBackend } from '../../core/server/inProcess';
import { openFromLibrary, openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { tempDir } from '../helpers/tmp';

// Issue 31, the rough edges of the shell, as a person meets them in Chromium at 1024 and 1440 px.
let ctx: E2EContext | null = null;
let api: Backend | null = null;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  api?.close();
  api = null;
  await ctx?.close();
  ctx = null;
  for (const c of cleanups.splice(0)) c();
});

async function start(width: number): Promise<{ ctx: E2EContext; api: Backend; page: Page }> {
  ctx = await openWorkbench({ viewport: { width, height: 768 } });
  api = createInProcessBackend(createDispatcher(createHandlers(ctx.app.services)), ctx.app.services.events);
  await ctx.page.waitForFunction(() => document.querySelector('[data-testid=library-count]')?.textContent?.startsWith('21 '), undefined, { timeout: 120_000 });
  return { ctx, api, page: ctx.page };
}

const sideWidth = (page: Page) => page.getByTestId('side-panel').evaluate((el) => Math.round(el.getBoundingClientRect().width));

async function dragResizer(page: Page, dx: number): Promise<void> {
  const box = (await page.getByTestId('side-resizer').boundingBox())!;
  const x = box.x + box.width / 2;
  const y = box.y + box.height / 2;
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x + dx / 2, y, { steps: 4 });
  await page.mouse.move(x + dx, y, { steps: 4 });
  await page.mouse.up();
}

const HANGS = `class HangEnv:
    """Its step never returns."""

    def reset(self, seed=None):
        return "ready", {}

    def step(self, action):
        while True:
            pass
`;

describe('the shell at small and large windows', () => {
  for (const width of [1024, 1440]) {
    it(`at ${width} px: readable names, a resizable side panel, Esc on every dialog, sentences for bad input, ~ in paths, charts that fit`, async () => {
      const { page, api } = await start(width);

      // Names are readable (they were cut to ~5 letters at 1024): the name column has room, and a
      // cut name ends with an ellipsis and is whole in the row's tooltip.
      const names = await page.locator('[data-testid=library-row] .lib-name').evaluateAll((els) =>
        els.map((e) => ({ w: e.getBoundingClientRect().width, text: e.textContent ?? '', title: e.closest('[title]')?.getAttribute('title') ?? '', ellipsis: getComputedStyle(e).textOverflow })),
      );
      expect(names.length).toBeGreaterThan(5);
      for (const n of names) {
        expect(n.w, n.text).toBeGreaterThanOrEqual(110);
        expect(n.title.startsWith(n.text.replace(/^[★⚙]+/, '').replace(/ ⚠$/, ''))).toBe(true);
        expect(n.ellipsis).toBe('ellipsis');
      }
      await screenshot(page, `rough-${width}-library`);

      // The side panel resizes with its edge, keeps its width across a reload, and has a minimum.
      const before = await sideWidth(page);
      await dragResizer(page, 120);
      expect(await sideWidth(page)).toBeGreaterThanOrEqual(before + 110);
      const wider = await sideWidth(page);
      await page.reload();
      await page.waitForFunction(() => document.querySelector('[data-testid=library-count]')?.textContent?.startsWith('21 '));
      expect(await sideWidth(page)).toBe(wider);
      await screenshot(page, `rough-${width}-side-wider`);
      await dragResizer(page, -1000);
      expect(await sideWidth(page)).toBe(240);
      await screenshot(page, `rough-${width}-side-narrowest`);
      // Names stay readable at the narrowest too.
      const narrowest = await page.locator('[data-testid=library-row] .lib-name').first().evaluate((e) => e.getBoundingClientRect().width);
      expect(narrowest).toBeGreaterThanOrEqual(80);
      await page.getByTestId('side-resizer').dblclick();
      expect(await sideWidth(page)).toBe(before);

      // Esc closes every dialog: the import dialog, the launch dialog, the attach dialog, the palette.
      await page.getByTestId('library-import-open').click();
      await page.getByTestId('import-dialog').waitFor();
      await page.getByTestId('import-paths').focus();
      await page.keyboard.press('Escape');
      await page.getByTestId('import-dialog').waitFor({ state: 'detached' });
      await page.getByRole('button', { name: 'Jobs', exact: true }).click();
      for (const open of ['jobs-new', 'jobs-attach-open']) {
        await page.getByTestId(open).click();
        const dialog = page.locator('[role=dialog][aria-modal=true]');
        await dialog.waitFor();
        await page.keyboard.press('Escape');
        await dialog.waitFor({ state: 'detached' });
      }
      await page.keyboard.press('Control+Shift+P');
      await page.getByRole('dialog', { name: 'Command palette' }).waitFor();
      await page.keyboard.press('Escape');
      await page.getByRole('dialog', { name: 'Command palette' }).waitFor({ state: 'detached' });

      // Bad input reads as a sentence (it was zod's text), and ~ is the home folder in a path field.
      const home = tempDir('spade-e2e-home-');
      const savedHome = process.env.HOME;
      process.env.HOME = home.dir;
      cleanups.push(() => {
        process.env.HOME = savedHome;
        home.cleanup();
      });
      const { rows } = await api.call('memory.search', { query: 'GridWalkEnv', limit: 1 });
      await api.call('memory.tag', { ids: [rows[0]!.id], add: ['keep'] });
      await page.keyboard.press('Control+Shift+P');
      await page.getByRole('dialog', { name: 'Command palette' }).locator('input').fill('Export Seed Set');
      await page.keyboard.press('Enter');
      const view = page.getByTestId('export-view');
      await view.waitFor();
      await view.getByLabel('Tagged').check();
      await view.getByLabel('Export tag').fill('keep it');
      await view.getByTestId('export-folder').fill('~/seeds');
      await view.getByRole('button', { name: 'Export' }).click();
      await view.getByText('A tag cannot contain spaces or commas.').waitFor();
      expect(await view.textContent()).not.toMatch(/Invalid input|selection\.tag/);
      await screenshot(page, `rough-${width}-sentence`);
      await view.getByLabel('Export tag').fill('keep');
      await view.getByRole('button', { name: 'Export' }).click();
      await view.getByTestId('export-result').waitFor();
      expect(await view.getByTestId('export-result').locator('code').textContent()).toBe(join(home.dir, 'seeds'));
      expect(readdirSync(join(home.dir, 'seeds')).length).toBeGreaterThan(0);
      // The web host has no native picker: no "Choose…" button beside the path.
      expect(await view.getByTestId('export-folder-choose').count()).toBe(0);

      // A chart fits its pane and follows it when the window changes (built once at its first width, it was cut).
      await page.getByRole('button', { name: 'Episodes', exact: true }).click();
      await page.getByTestId('ep-env-search').fill('GridWalkEnv');
      await page.waitForFunction(() => (document.querySelector('[data-testid=ep-env]') as HTMLSelectElement | null)?.options[0]?.text.startsWith('GridWalkEnv'));
      await page.getByTestId('ep-env').selectOption({ index: 0 });
      await page.getByTestId('ep-open').click();
      // Pyodide's cold start shows in the status bar while it loads (it said nothing for 8-10 s).
      const coldStart = await page
        .getByTestId('runtime-starting')
        .waitFor({ timeout: 20_000 })
        .then(() => true)
        .catch(() => false);
      if (coldStart) {
        expect(await page.getByTestId('runtime-status').textContent()).toMatch(/Pyodide starting… \d+ s/);
        await screenshot(page, `rough-${width}-pyodide-starting`);
      }
      await page.locator('.tab-pane:not([hidden]) [data-testid=episode-view][data-steps="1"]').waitFor({ timeout: 180_000 });
      const chart = page.locator('.tab-pane:not([hidden]) [data-testid=return-chart]');
      await chart.waitFor();
      const fits = () => chart.evaluate((el) => ({ box: el.clientWidth, drawn: el.querySelector('.uplot')!.getBoundingClientRect().width }));
      let f = await fits();
      expect(f.drawn).toBeLessThanOrEqual(f.box + 1);
      const first = f.drawn;
      const drawnWidth = () => page.evaluate(() => document.querySelector('.tab-pane:not([hidden]) [data-testid=return-chart] .uplot')!.getBoundingClientRect().width);
      // The window grows: the chart grows with its pane ...
      await page.setViewportSize({ width: width + 600, height: 768 });
      await page.waitForFunction((w) => (document.querySelector('.tab-pane:not([hidden]) [data-testid=return-chart] .uplot')?.getBoundingClientRect().width ?? 0) > w + 100, first);
      f = await fits();
      expect(Math.abs(f.drawn - f.box)).toBeLessThanOrEqual(2);
      // ... and shrinks back with it instead of being cut at the pane's edge.
      await page.setViewportSize({ width, height: 768 });
      await page.waitForFunction((w) => (document.querySelector('.tab-pane:not([hidden]) [data-testid=return-chart] .uplot')?.getBoundingClientRect().width ?? 1e9) <= w + 2, first);
      f = await fits();
      expect(f.drawn).toBeLessThanOrEqual(f.box + 1);
      expect(Math.abs(f.drawn - f.box)).toBeLessThanOrEqual(2);
      expect(Math.abs((await drawnWidth()) - first)).toBeLessThanOrEqual(2);
      await screenshot(page, `rough-${width}-chart`);
      expect(ctx!.errors).toEqual([]);
    }, 400_000);
  }

  it('a single audit of a game that never returns shows which check runs, its time limit and Cancel', async () => {
    const { page, api } = await start(1024);
    const dir = tempDir('spade-e2e-hang-');
    cleanups.push(() => dir.cleanup());
    mkdirSync(join(dir.dir, 'games'));
    writeFileSync(join(dir.dir, 'games', 'game_00000_001_hang.py'), HANGS);
    await api.call('memory.import', { paths: [join(dir.dir, 'games')], jobId: 'hang' });
    await openFromLibrary(page, 'HangEnv');
    await page.getByTestId('env-action-audit').click();
    const view = page.locator('.tab-pane:not([hidden]) [data-testid=audit-view]');
    await view.getByRole('button', { name: 'Run audit' }).click();
    // At once a line with a moving bar and Cancel: no blank panel while the interpreter starts.
    const live = view.getByTestId('audit-live');
    await live.waitFor({ timeout: 2_000 });
    await screenshot(page, 'rough-audit-starting');
    await live.getByText(/Checking spade\.step/).waitFor({ timeout: 180_000 });
    await page.waitForFunction(() => /of at most 2 min/.test(document.querySelector('.tab-pane:not([hidden]) [data-testid=audit-live]')?.textContent ?? ''));
    const text = (await live.textContent())!;
    expect(text).toMatch(/check \d+ of \d+/);
    await screenshot(page, 'rough-audit-hanging');
    await live.getByTestId('audit-live-cancel').click();
    await view.getByText('The audit was cancelled; nothing was stored.').waitFor({ timeout: 30_000 });
    await live.waitFor({ state: 'detached' });
    expect(await view.textContent()).toContain('This version is not audited yet.');
    await screenshot(page, 'rough-audit-cancelled');
    expect(ctx!.errors).toEqual([]);
  }, 400_000);
});
