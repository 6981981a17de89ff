import { afterEach, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startApp, type RunningApp } from '../../core/host/startApp';
import { launchChromium, screenshot } from '../helpers/browser';
import { makeDamagedLibrary } from '../helpers/damage';
import { tempDir } from '../helpers/tmp';

let app: RunningApp | null = null;
let browser: Browser | null = null;
const dirs: { cleanup(): void }[] = [];
afterEach(async () => {
  await browser?.close();
  await app?.close();
  browser = null;
  app = null;
  dirs.splice(0).forEach((d) => d.cleanup());
});

describe('a damaged database, as a person sees it', () => {
  it('shows a banner saying writes are paused, and lets the user check fully or keep writing', async () => {
    const tmp = tempDir('spade-e2e-damaged-');
    dirs.push(tmp);
    await makeDamagedLibrary(tmp.dir);
    // openWorkbench waits for "connected"; a damaged database says "database error" there instead.
    app = await startApp({ dataDir: tmp.dir, port: 0 });
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1400, height: 860 }, colorScheme: 'light' });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(app.host.url);
    await page.waitForSelector('[data-testid=backend-status]:has-text("database error")');
    const banner = page.getByTestId('database-banner');
    await banner.waitFor();
    expect(await banner.textContent()).toMatch(/damaged.*quick check found (at least )?\d+ problem.*Changes are paused/s);
    await screenshot(page, 'database-damaged');
    await banner.getByRole('button', { name: 'Check fully' }).click();
    await page.waitForFunction(() => document.querySelector('[data-testid=database-banner]')?.textContent?.includes('full check'));
    await banner.getByRole('button', { name: 'Keep writing anyway' }).click();
    await page.waitForFunction(() => document.querySelector('[data-testid=database-banner]')?.textContent?.includes('You chose to keep writing'));
    await screenshot(page, 'database-damaged-writing');
    expect(await banner.getByRole('button', { name: 'Keep writing anyway' }).count()).toBe(0);
    expect(errors).toEqual([]);
  });
});
