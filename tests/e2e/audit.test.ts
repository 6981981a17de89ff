import { afterEach, describe, expect, it } from 'vitest';
import { openWorkbench, screenshot, waitForPack, type E2EContext } from '../helpers/browser';

// Chromium against the web host: real seed pack import, real CPython audits.
let ctx: E2EContext | null = null;
afterEach(async () => {
  await ctx?.close();
  ctx = null;
});

describe('audit in Chromium', () => {
  it('audits the whole pool, charts failing checks, opens the failing environment with evidence and replays it', async () => {
    ctx = await openWorkbench();
    const { page } = ctx;
    await waitForPack(ctx.app.services, 21);
    await page.keyboard.press('Control+Shift+P');
    await page.getByRole('dialog', { name: 'Command palette' }).waitFor();
    await page.keyboard.type('pool audit dashboard');
    await page.keyboard.press('Enter');
    const dash = page.getByTestId('audit-dashboard');
    await dash.waitFor();
    await dash.getByRole('button', { name: 'Audit all' }).click();
    await dash.locator('svg.audit-bars').waitFor({ timeout: 60_000 });
    await page.waitForFunction(() => /21 of 21 environments audited/.test(document.querySelector('[data-testid=audit-dashboard]')?.textContent ?? ''), undefined, { timeout: 60_000 });
    await dash.locator('g[data-check="reset-leak"]').click();
    await dash.getByRole('button', { name: 'MentalArithmeticEnv' }).waitFor();
    await screenshot(page, 'audit-dashboard');

    // "show in library" filters the library on the stored results: the one leaking game.
    await dash.getByTestId('audit-show-in-library').click();
    await page.getByTestId('library-filter-audit').waitFor();
    expect(await page.getByTestId('library-filter-audit').textContent()).toBe('audit: reset-leak fail ×');
    await page.waitForFunction(() => document.querySelector('[data-testid=library-count]')?.textContent?.startsWith('1 environment'));
    expect(await page.locator('[data-testid=library-row]').textContent()).toContain('MentalArithmeticEnv');
    await screenshot(page, 'audit-in-library');
    await page.getByTestId('library-filter-audit').click();
    await page.waitForFunction(() => Number(document.querySelector('[data-testid=library-count]')?.textContent?.split(' ')[0]) === 21);

    await dash.getByRole('button', { name: 'MentalArithmeticEnv' }).click();
    const view = page.getByTestId('audit-view');
    await view.waitFor();
    // Audits run in the sandbox by default (this game needs nothing Pyodide lacks).
    expect(await view.getByTestId('audit-runtime').textContent()).toContain('the Pyodide sandbox');
    const leak = view.locator('li[data-check="reset-leak"]');
    await leak.waitFor();
    expect(await leak.getAttribute('class')).toContain('fail');
    expect(await leak.textContent()).toContain('self.asked');
    expect(await view.locator('.audit-line.fail').count()).toBeGreaterThan(0);
    await screenshot(page, 'audit-environment');

    await leak.getByRole('button', { name: 'Replay' }).click();
    await page.getByTestId('episode-view').waitFor({ timeout: 60_000 });
    // It opens at the failing step: the second reset, where the leaked state shows.
    const view2 = page.locator('.tab-pane:not([hidden]) [data-testid=episode-view]');
    // ...compared with a fresh instance's reset of the same seed, naming the attribute that leaked.
    const leakChanges = view2.getByTestId('leak-changes');
    await leakChanges.waitFor();
    expect(await leakChanges.textContent()).toContain("This reset did not restore the state of a fresh instance's reset");
    expect(await leakChanges.locator('code').allTextContents()).toContain('asked');
    const rows = view2.locator('[data-testid=step-list] li');
    expect(await rows.last().getAttribute('class')).toContain('sel');
    await screenshot(page, 'audit-replay');
    expect(ctx.errors).toEqual([]);
  });
});
