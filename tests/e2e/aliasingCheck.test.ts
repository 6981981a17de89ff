import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openWorkbench, screenshot, waitForPack, type E2EContext } from '../helpers/browser';
import { tempDir } from '../helpers/tmp';

// Issue 46 as a researcher sees it, in Chromium against the web host (real SQLite, the audit in the
// real Pyodide sandbox): a game that returns the same `info` list at every step and keeps appending
// to it fails the `aliasing` check, listed with the others, naming what changed and when.
let ctx: E2EContext | null = null;
let run: ReturnType<typeof tempDir> | null = null;
afterEach(async () => {
  await ctx?.close();
  ctx = null;
  run?.cleanup();
  run = null;
});

describe('the aliasing check in the audit view', () => {
  it.each([1440, 1024])('shows a returned info list that later steps change (%i px)', async (width) => {
    run = tempDir('spade-aliasing-');
    mkdirSync(join(run.dir, 'games'));
    cpSync(join(process.cwd(), 'tests', 'integration', 'audit', 'fixtures', 'issue46', 'info_alias.py'), join(run.dir, 'games', 'game_00001_000_memory_recall.py'));
    ctx = await openWorkbench({ viewport: { width, height: 860 } });
    const { page } = ctx;
    await waitForPack(ctx.app.services, 21);

    await page.getByTestId('library-import-open').click();
    const dialog = page.getByTestId('import-dialog');
    await dialog.getByTestId('import-paths').fill(run.dir);
    await dialog.getByTestId('import-start').click();
    await dialog.getByTestId('import-summary').waitFor({ timeout: 60_000 });
    expect(await dialog.getByTestId('import-summary').textContent()).toMatch(/^1 imported/);
    await page.getByRole('dialog', { name: 'Import environments' }).getByRole('button', { name: 'Close' }).click();

    await page.locator('[data-testid=library-row]', { hasText: 'TrailGuessEnv' }).click();
    await page.getByTestId('env-action-audit').click();
    const view = page.locator('.tab-pane:not([hidden]) [data-testid=audit-view]');
    await view.waitFor();
    await view.getByRole('button', { name: 'Run audit' }).click();
    const alias = view.locator('li[data-check="aliasing"]');
    await alias.waitFor({ timeout: 120_000 });
    expect(await alias.getAttribute('class')).toContain('fail');
    // Listed among the other checks, after reset-leak as the check order has it.
    const ids = await view.locator('li[data-check]').evaluateAll((els) => els.map((e) => e.getAttribute('data-check')));
    expect(ids.indexOf('aliasing')).toBe(ids.indexOf('reset-leak') + 1);
    if (!(await alias.locator('[data-ev=part]').isVisible())) await alias.locator('.audit-check-row').click();
    expect(await alias.locator('[data-ev=part]').textContent()).toContain('info');
    expect(await alias.locator('[data-ev=returnedBy]').textContent()).toContain('reset');
    expect(await alias.locator('[data-ev=changedBy]').textContent()).toContain('step 1');
    expect(await alias.textContent()).toContain('changed afterwards');
    await alias.scrollIntoViewIfNeeded();
    await screenshot(page, `aliasing-check-${width}`);
    // Nothing on the page scrolls sideways at this width.
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    expect(ctx.errors).toEqual([]);
  }, 240_000);
});
