import { afterEach, describe, expect, it } from 'vitest';
import type { Backend } from '../../core/api';
import { createHandlers } from '../../core/handlers';
import { createDispatcher } from '../../core/server/dispatcher';
import { createInProcessBackend } from '../../core/server/inProcess';
import { sha256 } from '../../core/memory/parse';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';

// The small UI bugs of issue 16, each as a person meets it in Chromium against the web host.
let ctx: E2EContext | null = null;
let api: Backend | null = null;
afterEach(async () => {
  api?.close();
  api = null;
  await ctx?.close();
  ctx = null;
});

async function start(): Promise<{ ctx: E2EContext; api: Backend }> {
  ctx = await openWorkbench();
  api = createInProcessBackend(createDispatcher(createHandlers(ctx.app.services)), ctx.app.services.events);
  for (;;) {
    const st = await api.call('memory.importStatus', { jobId: 'seed-pack' }).catch(() => null);
    if (!st || st.phase === 'done' || st.phase === 'failed') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await ctx.page.waitForFunction(() => document.querySelector('[data-testid=library-count]')?.textContent?.startsWith('21 '));
  return { ctx, api };
}

describe('UI bugs of the debugging loop', () => {
  it('palette, library keyboard and selection, episodes picker, head diff', async () => {
    const { ctx, api } = await start();
    const { page } = ctx;

    // The palette lists "Show Episodes" once (it was there twice).
    await page.keyboard.press('Control+Shift+P');
    await page.getByRole('dialog', { name: 'Command palette' }).locator('input').fill('Show Episodes');
    await page.locator('.palette-list [role=option]').first().waitFor();
    expect(await page.locator('.palette-list [role=option]', { hasText: 'Show Episodes' }).count()).toBe(1);
    await page.keyboard.press('Escape');

    // Arrow keys move from the search box into the results, Enter opens the one under the cursor.
    const search = page.getByTestId('library-search');
    await search.fill('GridWalk');
    await page.waitForFunction(() => document.querySelector('[data-testid=library-count]')?.textContent?.startsWith('1 '));
    await page.locator('[data-testid=library-row]', { hasText: 'GridWalkEnv' }).waitFor();
    await search.press('ArrowDown');
    await page.locator('.lib-row.cursor', { hasText: 'GridWalkEnv' }).waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.tab.active', { hasText: 'GridWalkEnv' }).waitFor();
    await page.keyboard.press('ArrowUp');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('library-search');

    // Results say where they match (there were no snippets).
    await search.fill('walls');
    const snip = page.locator('[data-testid=library-row]', { hasText: 'GridWalkEnv' }).getByTestId('library-snippet');
    await snip.locator('mark', { hasText: /^walls$/ }).waitFor();
    expect(await snip.getAttribute('data-field')).toBe('code');
    await screenshot(page, 'ux-library-snippets');

    // A selection made under one search does not act, unseen, under the next.
    await search.fill('');
    await page.waitForFunction(() => document.querySelector('[data-testid=library-count]')?.textContent?.startsWith('21 '));
    await page.locator('[data-testid=library-row] input[type=checkbox]').first().check();
    await page.getByText('1 selected').waitFor();
    await search.fill('Grid');
    await page.getByText('1 selected').waitFor({ state: 'detached' });
    await screenshot(page, 'ux-library-keyboard');

    // The Episodes environment picker is a drop-down showing the chosen environment, not a tiny list box.
    await page.getByRole('button', { name: 'Episodes' }).first().click();
    const picker = page.getByTestId('ep-env');
    await picker.waitFor();
    expect(await picker.evaluate((el) => (el as HTMLSelectElement).size)).toBe(0);
    await screenshot(page, 'ux-episodes-picker');

    // "diff" on the head version compares it with its parent (it opened head against head).
    const { rows } = await api.call('memory.search', { query: 'GridWalkEnv', limit: 5 });
    const env = rows.find((r) => r.name === 'GridWalkEnv')!;
    const first = await api.call('memory.get', { id: env.id });
    const saved = await api.call('editor.save', { envId: env.id, parentHash: first.hash, source: `${first.source}\n# edited\n`, message: 'edit', check: false });
    expect(saved.hash).toBe(sha256(`${first.source}\n# edited\n`));
    await page.getByRole('button', { name: 'Library' }).first().click();
    await page.locator('.tab', { hasText: 'GridWalkEnv' }).first().click();
    await page.locator('.tab-pane:not([hidden]) [data-testid=env-action-edit]').click();
    const head = page.locator(`.tab-pane:not([hidden]) [data-testid=version-list] li[data-hash="${saved.hash}"]`);
    await head.getByTestId('version-diff').click();
    await page.locator('.tab.active', { hasText: `${first.hash.slice(0, 7)}↔${saved.hash.slice(0, 7)}` }).waitFor();
    await page.waitForFunction(() => Number(document.querySelector('.tab-pane:not([hidden]) [data-testid=diff-editor]')?.getAttribute('data-changes') || 0) >= 1);
    await screenshot(page, 'ux-head-diff');
    expect(ctx.errors).toEqual([]);
  }, 300_000);
});
