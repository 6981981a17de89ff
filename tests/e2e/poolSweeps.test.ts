import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openWorkbench, screenshot, waitForPack, type E2EContext } from '../helpers/browser';
import type { Services } from '../../core/services/services';
import { ciRay } from '../integration/jobs/helpers';

// Chromium against the web host: pool audit sweeps started from the Audit page, on this machine
// (real CPython) and on the real Ray head of .ci/services.sh, with their progress, results and Cancel.
const ray = ciRay();
if (!ray) console.warn('[pool sweep e2e: the Ray part skipped] no Ray head: `.ci/services.sh start` (CI does)');

let ctx: E2EContext | null = null;
afterEach(async () => {
  await ctx?.close();
  ctx = null;
});

/** Games whose reset sleeps: a sweep of them is still running when Cancel is clicked. */
async function importSlowGames(s: Services, dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  for (let k = 0; k < 3; k++) {
    writeFileSync(
      join(dir, `slowpoke_${k}.py`),
      `import time\n\n\nclass Slowpoke${k}Env:\n    def reset(self, seed=None):\n        time.sleep(1.5)\n        return "Say \\\\boxed{${k}}", {}\n\n    def step(self, action):\n        return "ok", 1.0, True, False, {}\n`,
    );
  }
  const summary = await s.memory.startImport([dir]).done;
  if (!summary) throw new Error('the slow games were not imported');
}

describe('pool audit sweeps in Chromium', () => {
  it('starts a sweep here and on Ray, shows progress and results, opens a result, and cancels one', async () => {
    ctx = await openWorkbench({ viewport: { width: 1440, height: 900 } });
    const { page } = ctx;
    await waitForPack(ctx.app.services, 21);
    await importSlowGames(ctx.app.services, join(ctx.dataDir, 'slow'));
    await page.keyboard.press('Control+Shift+P');
    await page.getByRole('dialog', { name: 'Command palette' }).waitFor();
    await page.keyboard.type('pool audit dashboard');
    await page.keyboard.press('Enter');
    const section = page.getByTestId('pool-sweeps');
    await section.waitFor();
    expect(await section.getByTestId('sweep-on').inputValue()).toBe('local');

    // A query that matches nothing is refused in words, and no sweep appears.
    await section.getByTestId('sweep-query').fill('no-such-game-anywhere');
    await section.getByTestId('sweep-start').click();
    expect(await section.getByTestId('sweep-error').textContent()).toContain('No environment in the library matches "no-such-game-anywhere"');
    expect(await section.getByTestId('sweep').count()).toBe(0);

    // This machine (the default).
    await section.getByTestId('sweep-query').fill('arithmetic');
    await section.getByTestId('sweep-start').click();
    const first = section.getByTestId('sweep').first();
    await page.waitForFunction(() => document.querySelector('[data-testid=sweep]')?.getAttribute('data-state') === 'done', undefined, { timeout: 60_000 });
    expect(await first.textContent()).toContain('on this machine');
    const summary = (await first.getByTestId('sweep-summary').textContent()) ?? '';
    const [, done, total] = /(\d+) \/ (\d+) audited/.exec(summary) ?? [];
    expect(Number(total)).toBeGreaterThan(0);
    expect(done).toBe(total);
    // A finished sweep opens its results; each opens as the environment's audit.
    const results = first.getByTestId('sweep-results');
    await results.waitFor();
    expect(await results.locator('li').count()).toBe(Number(total));
    expect(await results.locator('.audit-badge').count()).toBe(Number(total));
    await screenshot(page, 'pool-sweep-local-1440');
    const name = (await results.locator('li button.audit-link').first().textContent()) ?? '';
    await results.locator('li button.audit-link').first().click();
    const view = page.getByTestId('audit-view');
    await view.waitFor();
    expect(await page.locator('[role=tab][aria-selected=true]').first().textContent()).toContain(name);
    await page.locator('[role=tab]', { hasText: 'Pool audit' }).first().click();
    await section.waitFor();

    if (ray) {
      await section.getByTestId('sweep-on').selectOption('ray');
      await section.getByTestId('sweep-ray-address').fill(new URL(ray.address).host);
      await section.getByTestId('sweep-ray-python').fill(join(ray.bin, 'python'));
      await section.getByTestId('sweep-start').click();
      const onRay = section.locator('[data-testid=sweep]', { hasText: 'on Ray at' }).first();
      await onRay.getByTestId('sweep-progress').waitFor();
      await screenshot(page, 'pool-sweep-ray-running-1440');
      await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=sweep]')].some((e) => e.textContent?.includes('on Ray at') && e.getAttribute('data-state') === 'done'), undefined, { timeout: 120_000 });
      expect(await onRay.getByTestId('sweep-summary').textContent()).toContain(`${total} / ${total} audited`);
      await onRay.getByTestId('sweep-results').waitFor();
    }

    // Cancel: the slow games, here; what arrived stays and the sweep can be resumed.
    await page.setViewportSize({ width: 1024, height: 768 });
    await section.getByTestId('sweep-on').selectOption('local');
    await section.getByTestId('sweep-query').fill('Slowpoke');
    await section.getByTestId('sweep-start').click();
    const slow = section.locator('[data-testid=sweep]', { hasText: 'Slowpoke' }).first();
    await slow.getByTestId('sweep-progress').waitFor();
    expect(await slow.getByTestId('sweep-progress').textContent()).toContain('/ 3');
    await screenshot(page, 'pool-sweep-running-1024');
    await slow.getByTestId('sweep-progress-cancel').click();
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=sweep]')].some((e) => e.textContent?.includes('Slowpoke') && e.getAttribute('data-state') === 'cancelled'), undefined, { timeout: 30_000 });
    await slow.getByRole('button', { name: /^Resume \(\d\/3\)$/ }).waitFor();
    await screenshot(page, 'pool-sweep-cancelled-1024');

    // The same pool audited from a terminal on this memory file (a real second process): running in
    // another process while it lives, with no Resume or Cancel here; interrupted once it is killed.
    const known = new Set((ctx.app.services.db.prepare('SELECT id FROM sweeps').all() as { id: string }[]).map((r) => r.id));
    const cli = spawn(process.execPath, [join(__dirname, '..', '..', 'bin', 'spade-workbench.mjs'), 'audit', '--pool', 'Slowpoke', '--workers', '1', '--data-dir', ctx.dataDir], { env: process.env, stdio: 'ignore' });
    try {
      let theirs: string | undefined;
      for (let i = 0; i < 600 && !theirs; i++) {
        theirs = (ctx.app.services.db.prepare("SELECT id FROM sweeps WHERE owner IS NOT NULL AND state = 'running'").all() as { id: string }[]).map((r) => r.id).find((id) => !known.has(id));
        if (!theirs) await new Promise((r) => setTimeout(r, 50));
      }
      expect(theirs, 'the command line started its sweep').toBeDefined();
      // The list is read as the page opens: open it again.
      await page.reload();
      await page.waitForSelector('[data-testid=backend-status]:has-text("connected")');
      await page.keyboard.press('Control+Shift+P');
      await page.getByRole('dialog', { name: 'Command palette' }).waitFor();
      await page.keyboard.type('pool audit dashboard');
      await page.keyboard.press('Enter');
      const card = page.locator(`[data-testid=sweep][data-sweep="${theirs}"]`);
      await card.waitFor();
      expect(await card.getAttribute('data-state')).toBe('elsewhere');
      expect(await card.locator('.sweep-state').textContent()).toBe('running in another process');
      expect(await card.getByRole('button', { name: /Resume|Cancel/ }).count()).toBe(0);
      await card.scrollIntoViewIfNeeded();
      await screenshot(page, 'pool-sweep-elsewhere-1024');
      cli.kill('SIGKILL');
      await new Promise((r) => cli.once('exit', r));
      await page.locator(`[data-testid=sweep][data-sweep="${theirs}"][data-state=interrupted]`).getByRole('button', { name: /^Resume \(\d\/3\)$/ }).waitFor();
    } finally {
      if (cli.exitCode === null) cli.kill('SIGKILL');
    }
    expect(ctx.errors).toEqual([]);
  }, 240_000);
});
