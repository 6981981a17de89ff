import { afterEach, describe, expect, it } from 'vitest';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';

let ctx: E2EContext | null = null;
afterEach(async () => {
  await ctx?.close();
  ctx = null;
});

describe('workbench shell in Chromium', () => {
  it('renders activity bar, side panel, tabs, bottom panel and status bar', async () => {
    ctx = await openWorkbench();
    const { page } = ctx;
    for (const label of ['Library', 'Episodes', 'Jobs']) {
      await expect(page.getByRole('button', { name: label, exact: true }).isVisible()).resolves.toBe(true);
    }
    expect(await page.getByRole('tab', { name: /Welcome/ }).isVisible()).toBe(true);
    expect(await page.locator('.bottom-tabs').textContent()).toContain('Problems');
    expect(await page.getByTestId('backend-status').textContent()).toContain('connected');
    expect(await page.locator('.welcome').textContent()).toContain(ctx.dataDir);
    await screenshot(page, 'shell-light');
    expect(ctx.errors).toEqual([]);
  });

  it('opens the command palette with Ctrl+Shift+P and runs a command from it', async () => {
    ctx = await openWorkbench();
    const { page } = ctx;
    await page.keyboard.press('Control+Shift+P');
    const palette = page.getByRole('dialog', { name: 'Command palette' });
    await palette.waitFor();
    await page.keyboard.type('open settings');
    await screenshot(page, 'palette');
    await page.keyboard.press('Enter');
    await page.getByRole('tab', { name: /Settings/ }).waitFor();
    expect(await palette.isVisible()).toBe(false);
    expect(await page.getByTestId('data-dir').textContent()).toBe(ctx.dataDir);
    // Native runs without bubblewrap are refused unless this is ticked (issue 12); off by default.
    const unsandboxed = page.getByLabel('Native runs without an OS sandbox');
    expect(await unsandboxed.isChecked()).toBe(false);
    expect(await page.getByLabel('Audits run in').inputValue()).toBe('pyodide');
    await screenshot(page, 'settings');
    await unsandboxed.check();
    for (let i = 0; i < 50 && !(await ctx.app.services.settings.get()).allowUnsandboxedNative; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await ctx.app.services.settings.get()).allowUnsandboxedNative).toBe(true);
  });

  it('follows the system theme and switches theme from the palette, persisting it', async () => {
    ctx = await openWorkbench({ colorScheme: 'dark' });
    const { page } = ctx;
    expect(await page.getByTestId('workbench').getAttribute('data-theme')).toBe('dark');
    const darkBg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await screenshot(page, 'shell-dark');
    await page.keyboard.press('Control+Shift+P');
    await page.keyboard.type('toggle light/dark');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-testid=workbench][data-theme=light]');
    const lightBg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(lightBg).not.toBe(darkBg);
    const settings = await ctx.app.services.settings.get();
    expect(settings.theme).toBe('light');
    await page.reload();
    await page.waitForSelector('[data-testid=workbench][data-theme=light]');
  });

  it('loads Monaco from our own origin with its worker', async () => {
    ctx = await openWorkbench();
    const { page } = ctx;
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.keyboard.press('Control+Shift+P');
    await page.keyboard.type('new scratch python');
    await page.getByRole('option', { name: /New Scratch Python Buffer/, selected: true }).waitFor();
    await page.keyboard.press('Enter');
    const pane = page.locator('.tab-pane:not([hidden])');
    await pane.locator('[data-testid=code-editor][data-ready=true]').waitFor();
    await pane.locator('.monaco-editor .view-lines').click();
    await page.keyboard.press('Control+End');
    // A slow page (CPU throttled) lets keys arrive before React re-renders the last one: typed
    // text must survive that, not be reset to a stale value.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 8 });
    await page.keyboard.type('# typed here');
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
    await page.waitForFunction(() => (document.querySelector('.tab-pane:not([hidden]) .monaco-editor .view-lines')?.textContent ?? '').replace(/\u00a0/g, ' ').includes('typed here'));
    await screenshot(page, 'monaco-scratch');
    const origin = new URL(ctx.app.host.url).origin;
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((u) => !u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith('blob:'))).toEqual([]);
    expect(requests.some((u) => /editor\.worker/.test(u))).toBe(true);
    expect(ctx.errors).toEqual([]);
  });
});
