import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { tempDir } from '../helpers/tmp';

// Issue 31 as a researcher sees it, in Chromium against the web host (real SQLite, the audit in
// the real Pyodide sandbox): a game whose step keeps every answer in a mutable default argument.
// The audit names the default argument and marks the line that appends to it, not reset's def.
let ctx: E2EContext | null = null;
let run: ReturnType<typeof tempDir> | null = null;
afterEach(async () => {
  await ctx?.close();
  ctx = null;
  run?.cleanup();
  run = null;
});

describe('reset-leak names hidden shared state in Chromium', () => {
  it('shows a default argument that leaks, with the line that grows it', async () => {
    run = tempDir('spade-leak-names-');
    const fixture = join(process.cwd(), 'tests', 'integration', 'audit', 'fixtures', 'leaks', 'l07_default_append.py');
    const source = readFileSync(fixture, 'utf8');
    const line = source.split('\n').findIndex((l) => l.includes('# leak')) + 1;
    mkdirSync(join(run.dir, 'games'));
    cpSync(fixture, join(run.dir, 'games', 'game_00001_000_memory_recall.py'));
    ctx = await openWorkbench();
    const { page } = ctx;
    const db = ctx.app.services.db;
    for (let i = 0; i < 300 && (db.prepare('SELECT COUNT(*) AS n FROM environments').get() as { n: number }).n < 21; i++) await page.waitForTimeout(100);

    await page.getByTestId('library-import-open').click();
    const dialog = page.getByTestId('import-dialog');
    await dialog.getByTestId('import-paths').fill(run.dir);
    await dialog.getByTestId('import-start').click();
    await dialog.getByTestId('import-summary').waitFor({ timeout: 60_000 });
    expect(await dialog.getByTestId('import-summary').textContent()).toMatch(/^1 imported/);
    await page.getByRole('dialog', { name: 'Import environments' }).getByRole('button', { name: 'Close' }).click();

    await page.locator('[data-testid=library-row]', { hasText: 'EchoEnv' }).click();
    await page.getByTestId('env-action-audit').click();
    const view = page.locator('.tab-pane:not([hidden]) [data-testid=audit-view]');
    await view.waitFor();
    await view.getByRole('button', { name: 'Run audit' }).click();
    const leak = view.locator('li[data-check="reset-leak"]');
    await leak.waitFor({ timeout: 120_000 });
    expect(await leak.getAttribute('class')).toContain('fail');
    if (!(await leak.locator('[data-ev=attribute]').isVisible())) await leak.locator('.audit-check-row').click();
    expect(await leak.locator('[data-ev=attribute]').textContent()).toContain('default EchoEnv.step.seen');
    expect(await leak.locator('[data-ev=scope]').textContent()).toContain('default');
    expect(await leak.locator('[data-ev=line]').textContent()).toContain(String(line));
    expect(await leak.textContent()).toContain(`(line ${line}, in step) grows it`);
    // The source beside the checks marks that line as failing.
    expect(await view.locator(`.audit-line.fail:has(.audit-lno:text-is("${line}"))`).count()).toBe(1);
    await screenshot(page, 'leak-default-argument');
    expect(ctx.errors).toEqual([]);
  }, 240_000);
});
