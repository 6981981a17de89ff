import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { tempDir } from '../helpers/tmp';
import { listVersions } from '../../core/memory/repository';

// The debugging loop of issue 16 as a researcher runs it, in Chromium against the web host with
// real SQLite, the real audit and real files: import a run folder holding a game whose reset leaks
// state through a class attribute, audit the pool, open the failing game, see the attribute named,
// fix it in Monaco, save with Ctrl+S and a message, re-audit the new version, see before/after,
// write the fix back to the run's file and import that folder again unchanged.
let ctx: E2EContext | null = null;
let run: ReturnType<typeof tempDir> | null = null;
afterEach(async () => {
  await ctx?.close();
  ctx = null;
  run?.cleanup();
  run = null;
});

const FILE = 'game_00003_000_working_memory.py';

/** Each step at the two sizes people use: a laptop and a small window. */
async function shots(page: Page, name: string): Promise<void> {
  await screenshot(page, `loop-${name}-1440x900`);
  await page.setViewportSize({ width: 1024, height: 700 });
  await page.waitForTimeout(250);
  await screenshot(page, `loop-${name}-1024x700`);
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.waitForTimeout(250);
}

async function importFolder(page: Page, folder: string): Promise<string> {
  await page.getByTestId('library-import-open').click();
  const dialog = page.getByTestId('import-dialog');
  await dialog.getByTestId('import-paths').fill(folder);
  await dialog.getByTestId('import-start').click();
  await dialog.getByTestId('import-summary').waitFor({ timeout: 60_000 });
  return (await dialog.getByTestId('import-summary').textContent()) ?? '';
}

describe('the debugging loop in Chromium', () => {
  it('finds the leaking state, fixes it, proves the fix and sends it back to the run', async () => {
    run = tempDir('spade-loop-run-');
    cpSync(join(process.cwd(), 'tests', 'e2e', 'fixtures', 'leaky-run'), run.dir, { recursive: true });
    const gameFile = join(run.dir, 'games', FILE);
    const original = readFileSync(gameFile, 'utf8');
    ctx = await openWorkbench();
    const { page } = ctx;
    await page.setViewportSize({ width: 1440, height: 900 });
    const db = ctx.app.services.db;
    for (let i = 0; i < 300 && (db.prepare('SELECT COUNT(*) AS n FROM environments').get() as { n: number }).n < 21; i++) await page.waitForTimeout(100);

    // 1. Import the run's folder.
    const imported = await importFolder(page, run.dir);
    expect(imported).toMatch(/^1 imported/);
    await shots(page, '01-import');
    await page.getByRole('dialog', { name: 'Import environments' }).getByRole('button', { name: 'Close' }).click();

    // 2. Audit the pool; the leaking game fails reset-leak.
    await page.keyboard.press('Control+Shift+P');
    await page.getByRole('dialog', { name: 'Command palette' }).locator('input').fill('pool audit dashboard');
    await page.keyboard.press('Enter');
    const dash = page.getByTestId('audit-dashboard');
    await dash.getByRole('button', { name: 'Audit all' }).click();
    // While it runs the dashboard says so (it said "No audits yet").
    await dash.getByTestId('audit-progress').waitFor();
    expect(await dash.textContent()).not.toContain('No audits yet');
    await page
      .waitForFunction(() => /22 of 22 environments audited/.test(document.querySelector('[data-testid=audit-dashboard]')?.textContent ?? ''), undefined, { timeout: 300_000 })
      .catch(async (e: unknown) => {
        await screenshot(page, 'loop-failed-pool-audit');
        throw e;
      });
    await dash.locator('g[data-check="reset-leak"]').click();
    await dash.getByRole('button', { name: 'DigitRecallEnv' }).waitFor();
    // Problems lists the failing environments (it said "No problems found").
    await page.getByTestId('bottom-problems').getByText(/DigitRecallEnv: audit fails reset-leak/).waitFor();
    await shots(page, '02-pool-audit');

    // 3. Open the failing environment: the leaking attribute is named in the evidence.
    await dash.getByRole('button', { name: 'DigitRecallEnv' }).click();
    const view = page.locator('.tab-pane:not([hidden]) [data-testid=audit-view]');
    await view.waitFor();
    const firstHash = (await view.getByTestId('audit-version').getAttribute('title'))!;
    const leak = view.locator('li[data-check="reset-leak"]');
    expect(await leak.getAttribute('class')).toContain('fail');
    expect(await leak.textContent()).toContain('DigitRecallEnv.history');
    // The attribute named, with its scope, and the line that grows it (not reset's def line).
    const appendLine = original.split('\n').findIndex((l) => l.includes('self.history.append')) + 1;
    expect(await leak.locator('[data-ev=attribute]').textContent()).toContain('DigitRecallEnv.history');
    expect(await leak.locator('[data-ev=scope]').textContent()).toContain('class');
    expect(await leak.locator('[data-ev=line]').textContent()).toContain(String(appendLine));
    expect(await leak.textContent()).toContain(`self.history.append(self.target) (line ${appendLine}, in reset) grows it`);
    expect(await view.locator(`.audit-line:has(.audit-lno:text-is("${appendLine}"))`).count()).toBe(1);
    await shots(page, '03-failing-environment');

    // ...and in the state tree of the replayed evidence: the class attribute, marked, compared with a
    // fresh instance's reset of the same seed (not with the episode's first reset of another seed).
    await leak.getByRole('button', { name: 'Replay' }).click();
    const episode = page.locator('.tab-pane:not([hidden]) [data-testid=episode-view]');
    await episode.waitFor({ timeout: 60_000 });
    await episode.getByTestId('state-tree').waitFor();
    const classFields = episode.getByTestId('state-class-fields');
    expect(await classFields.textContent()).toContain('history');
    expect(await classFields.locator('[data-path="DigitRecallEnv.history"]').getAttribute('data-changed')).toBe('true');
    const leakChanges = episode.getByTestId('leak-changes');
    expect(await leakChanges.textContent()).toContain("a fresh instance's reset");
    expect(await leakChanges.locator('code').allTextContents()).toEqual(expect.arrayContaining(['DigitRecallEnv.history']));
    expect(await leakChanges.locator('code').allTextContents()).not.toContain('target');
    await shots(page, '04-replay-state');

    // 4. Fix it in Monaco: reset starts a fresh history on the instance.
    await page.getByRole('tab', { name: 'Audit: DigitRecallEnv' }).click();
    await view.getByTestId('audit-edit').click();
    const editor = page.locator('.tab-pane:not([hidden]) [data-testid=env-editor]');
    await editor.locator('[data-testid=code-editor][data-ready=true]').first().waitFor();
    // The audit's squiggle is on the version being edited.
    await editor.locator('.env-code .squiggly-error').first().waitFor();
    await editor.locator('.env-code .monaco-editor').first().click();
    await page.keyboard.press('Control+Home');
    for (let i = 1; i < appendLine; i++) await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Home');
    await page.keyboard.type('self.history = []');
    await page.keyboard.press('Enter');
    await page.locator('.tab.active .dirty-dot').waitFor();

    // 5. Ctrl+S with the message typed in the toolbar.
    await editor.getByTestId('version-message').fill('reset starts a fresh history');
    await editor.locator('.env-code .monaco-editor').first().click();
    await page.keyboard.press('Control+S');
    // The save runs SPADE's loading checks in the sandbox first: slow on a loaded machine.
    await page
      .locator('.tab.active .dirty-dot')
      .waitFor({ state: 'detached', timeout: 180_000 })
      .catch(async (e: unknown) => {
        await screenshot(page, 'loop-failed-save');
        throw e;
      });
    const envId = Number(await editor.getAttribute('data-env-id'));
    const versions = listVersions(db, envId);
    expect(versions).toHaveLength(2);
    expect(versions[1]!.message).toBe('reset starts a fresh history');
    expect(versions[1]!.parentHash).toBe(firstHash);
    const fixedHash = versions[1]!.hash;
    const fixedSource = (db.prepare('SELECT source FROM versions WHERE hash = ?').get(fixedHash) as { source: string }).source;
    expect(fixedSource).toContain('        self.history = []\n        self.history.append(self.target)');
    // The new version is not audited: its squiggles are gone, not carried over from the old one.
    await editor.locator('.env-code .squiggly-error').first().waitFor({ state: 'detached' });
    expect(await editor.getByTestId('version-message').inputValue()).toBe('');
    await shots(page, '05-fixed-and-saved');

    // 6. Re-audit: the new version, named in the header; before/after of the failing check.
    await page.getByRole('tab', { name: 'Audit: DigitRecallEnv' }).click();
    await page.waitForFunction((h) => document.querySelector('.tab-pane:not([hidden]) [data-testid=audit-version]')?.getAttribute('title') === h, fixedHash);
    expect(await view.getByTestId('audit-version').textContent()).toContain(`${fixedHash.slice(0, 12)} “reset starts a fresh history”`);
    await view.getByRole('button', { name: /Run audit|Audit again/ }).click();
    await view.locator('.audit-badge').waitFor({ timeout: 60_000 });
    await page.waitForFunction(() => document.querySelector('.tab-pane:not([hidden]) li[data-check="reset-leak"]')?.className.includes('pass'), undefined, { timeout: 60_000 });
    const ba = view.getByTestId('audit-before-after');
    await ba.waitFor();
    expect(await ba.locator('tr[data-check="reset-leak"] [data-side=before]').textContent()).toContain('fail');
    expect(await ba.locator('tr[data-check="reset-leak"] [data-side=after]').textContent()).toContain('pass');
    // Everywhere else follows: Problems no longer lists it, the library shows the verdict.
    await page.getByTestId('bottom-problems').getByText(/DigitRecallEnv: audit fails/).waitFor({ state: 'detached' });
    await shots(page, '06-reaudit-before-after');

    // The failing evidence replayed on both versions, side by side: the leak before, none after.
    await ba.locator('tr[data-check="reset-leak"]').getByTestId('audit-replay-both').click();
    const pair = page.locator('.tab-pane:not([hidden]) [data-testid=pair-view][data-mode=versions]');
    await pair.waitFor({ timeout: 120_000 });
    const [beforeCol, afterCol] = [pair.locator('.ep-col').nth(0), pair.locator('.ep-col').nth(1)];
    await beforeCol.getByTestId('leak-changes').waitFor({ timeout: 60_000 });
    expect(await beforeCol.textContent()).toContain(`Before the fix (${firstHash.slice(0, 8)})`);
    expect(await afterCol.textContent()).toContain(`After the fix (${fixedHash.slice(0, 8)})`);
    expect(await beforeCol.getByTestId('leak-changes').textContent()).toContain('DigitRecallEnv.history');
    await afterCol.getByTestId('step-panel').waitFor();
    expect(await afterCol.getByTestId('leak-changes').count()).toBe(0);
    await shots(page, '06b-evidence-before-after');
    await page.getByRole('tab', { name: 'Audit: DigitRecallEnv' }).click();

    // 7. Write the fix back to the run's file: the diff first, the original kept.
    await page.getByRole('tab', { name: 'DigitRecallEnv', exact: true }).click();
    await editor.getByTestId('editor-write-back').click();
    const wb = page.locator('.tab-pane:not([hidden]) [data-testid=write-back-view]');
    await wb.locator('[data-testid=diff-editor][data-ready=true]').waitFor();
    expect(await wb.getByTestId('write-back-target').textContent()).toContain(gameFile);
    expect(await wb.getByTestId('write-back-state').textContent()).toContain('earlier version of this environment');
    expect(readFileSync(gameFile, 'utf8')).toBe(original);
    await shots(page, '07-write-back-diff');
    await wb.getByTestId('write-back-apply').click();
    await wb.getByTestId('write-back-done').waitFor();
    expect(await wb.getByTestId('write-back-done').textContent()).toContain(`${gameFile}.orig`);
    expect(readFileSync(gameFile, 'utf8')).toBe(fixedSource);
    expect(readFileSync(`${gameFile}.orig`, 'utf8')).toBe(original);
    await shots(page, '08-written-back');

    // 8. The run's folder imported again: nothing new, nothing updated (the .orig is not a game).
    const again = await importFolder(page, run.dir);
    expect(again).toMatch(/^0 imported, 0 updated, 1 already present/);
    expect(listVersions(db, envId)).toHaveLength(2);
    await shots(page, '09-reimport-unchanged');
    await page.getByRole('dialog', { name: 'Import environments' }).getByRole('button', { name: 'Close' }).click();

    // The library's page of the environment: the verdict of the audited head.
    await page.locator('[data-testid=library-row]', { hasText: 'DigitRecallEnv' }).click();
    const detail = page.locator('.tab-pane:not([hidden]) [data-testid=environment-view]');
    await detail.getByTestId('env-verdict').waitFor();
    expect(await detail.getByTestId('env-verdict').textContent()).toContain('pass');

    // The tabs survive a reload (they were all lost), the active one in view and unique in its title.
    const before = await page.locator('.tab-bar [role=tab]').evaluateAll((els) => els.map((e) => e.getAttribute('data-tab-id')));
    await page.reload();
    await page.waitForSelector('[data-testid=backend-status]:has-text("connected")');
    await page.locator('.tab.active').waitFor();
    expect(await page.locator('.tab-bar [role=tab]').evaluateAll((els) => els.map((e) => e.getAttribute('data-tab-id')))).toEqual(before);
    expect(await page.locator('.tab.active').getAttribute('data-tab-id')).toBe(`env:${envId}`);
    await page.locator('.tab-pane:not([hidden]) [data-testid=environment-view]').waitFor();
    // The library tab and the editor tab of one environment say which is which.
    expect(await page.locator(`[data-tab-id="editor:${envId}"] .tab-kind`).textContent()).toContain('editor');
    expect(await page.locator(`[data-tab-id="env:${envId}"] .tab-kind`).textContent()).toContain('library');
    await page.setViewportSize({ width: 1024, height: 700 });
    await page.waitForTimeout(300);
    const inView = await page.evaluate(() => {
      const bar = document.querySelector('.tab-bar')!.getBoundingClientRect();
      const tab = document.querySelector('.tab.active')!.getBoundingClientRect();
      return tab.left >= bar.left - 1 && tab.right <= bar.right + 1;
    });
    expect(inView).toBe(true);
    await screenshot(page, 'loop-10-after-reload-1024x700');
    expect(ctx.errors).toEqual([]);
  }, 900_000);
});
