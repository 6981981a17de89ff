import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import type { Backend } from '../../core/api';
import { createHandlers } from '../../core/handlers';
import { importPaths } from '../../core/memory/importer';
import { listVersions } from '../../core/memory/repository';
import { createDispatcher } from '../../core/server/dispatcher';
import { createInProcessBackend } from '../../core/server/inProcess';
import { Services } from '../../core/services/services';
import { openWorkbench, recordSocketFrames, screenshot, sentCalls, type E2EContext } from '../helpers/browser';
import { tempDir } from '../helpers/tmp';

const GAME2 = readFileSync('resources/seed-pack/games/game_00000_002_logical_deduction.py', 'utf8');

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

/** A fresh data directory imports the seed pack on first start; the tests edit those environments. */
async function start(): Promise<{ ctx: E2EContext; api: Backend }> {
  ctx = await openWorkbench({ init: recordSocketFrames });
  api = createInProcessBackend(createDispatcher(createHandlers(ctx.app.services)), ctx.app.services.events);
  for (;;) {
    const st = await api.call('memory.importStatus', { jobId: 'seed-pack' }).catch(() => null);
    if (!st || st.phase === 'done' || st.phase === 'failed') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return { ctx, api };
}

async function envByName(api: Backend, name: string): Promise<{ envId: number; hash: string }> {
  const { rows } = await api.call('memory.search', { query: name, limit: 5 });
  const row = rows.find((r) => r.name === name);
  if (!row) throw new Error(`seed pack environment ${name} not found`);
  return { envId: row.id, hash: row.hash };
}

async function quickOpen(page: Page, text: string): Promise<void> {
  await page.keyboard.press('Control+P');
  // fill, not type: the palette focuses its input a tick after opening, and typed keys could land elsewhere.
  await page.getByRole('dialog').locator('input').fill(text);
  const item = page.locator('.palette-list [role=option]', { hasText: 'edit in the editor' }).first();
  await item.waitFor({ timeout: 10_000 }).catch(async (e: unknown) => {
    await screenshot(page, `editor-quickopen-failed-${text}`);
    throw e;
  });
  await item.click();
}

async function typeAtEnd(page: Page, text: string): Promise<void> {
  await page.locator('[data-testid=env-editor]:visible .env-code .monaco-editor').first().click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(text);
}

const codeText = (page: Page) =>
  page.evaluate(() => (document.querySelector('.tab-pane:not([hidden]) .env-code .view-lines')?.textContent ?? '').replace(/\u00a0/g, ' '));

describe('editor in Chromium', () => {
  it('types, saves a new version, shows the diff and a syntax-error marker', async () => {
    const { ctx, api } = await start();
    const { page } = ctx;
    const { envId, hash } = await envByName(api, 'SequencePatternEnv');
    await sentCalls(page, 'memory.get', true);
    await quickOpen(page, 'SequencePattern');
    await page.waitForSelector('[data-testid=env-editor] .env-code [data-testid=code-editor][data-ready=true]');
    await page.getByTestId('curation').waitFor();
    // The environment (its source with it) crosses the socket once: editor.open, not memory.get after it as well.
    expect({ open: (await sentCalls(page, 'editor.open')).length, get: (await sentCalls(page, 'memory.get')).length }).toEqual({ open: 1, get: 0 });
    await typeAtEnd(page, '\n# tuned by hand');
    await page.locator('.tab.active .dirty-dot').waitFor();
    await page.keyboard.press('Control+S');
    await page.locator('[data-testid=version-list] .versions li').nth(1).waitFor();
    await page.locator('.tab.active .dirty-dot').waitFor({ state: 'detached' });
    const versions = listVersions(ctx.app.services.db, envId);
    expect(versions).toHaveLength(2);
    expect(versions[1]!.parentHash).toBe(hash);
    expect(await page.getByTestId('head-hash').textContent()).toBe(versions[1]!.hash.slice(0, 12));
    await screenshot(page, 'editor-saved-version');

    // Compare the first version with the new head in Monaco's diff editor.
    await page.locator(`[data-testid=version-list] li[data-hash="${hash}"] button:has-text("diff")`).click();
    await page.waitForSelector('[data-testid=diff-editor][data-ready=true]');
    await page.waitForFunction(() => Number(document.querySelector('[data-testid=diff-editor]')?.getAttribute('data-changes') || 0) >= 1);
    await page.waitForFunction(() =>
      [...document.querySelectorAll('.tab-pane:not([hidden]) .monaco-diff-editor .editor.modified .view-lines')].some((el) => (el.textContent ?? '').replace(/\u00a0/g, ' ').includes('# tuned by hand')),
    );
    expect(await page.locator('.tab-pane:not([hidden]) .monaco-diff-editor .editor.original .view-lines').textContent()).not.toContain('tuned by hand');
    await screenshot(page, 'editor-diff');

    // A syntax error becomes a Monaco marker and a Problems entry.
    await page.getByRole('tab', { name: 'SequencePatternEnv', exact: true }).click();
    await typeAtEnd(page, '\ndef broken(:');
    await page.waitForSelector('.tab-pane:not([hidden]) .env-code .squiggly-error');
    await page.locator('[data-testid=bottom-problems]').getByText(/SyntaxError/).first().waitFor();
    await screenshot(page, 'editor-syntax-marker');

    // Clicking the Problems entry moves the cursor to the offending line.
    const entry = page.locator('[data-testid=bottom-problems] li').filter({ hasText: 'SyntaxError' }).first();
    const line = Number((await entry.textContent())?.match(/:(\d+):\d+ /)?.[1]);
    expect(line).toBeGreaterThan(1);
    await page.locator('.tab-pane:not([hidden]) .env-code .monaco-editor').first().click();
    await page.keyboard.press('Control+Home');
    await page.waitForFunction(() => document.querySelector('.tab-pane:not([hidden]) .env-code .active-line-number')?.textContent?.trim() === '1');
    await entry.click();
    await page.waitForFunction((l) => document.querySelector('.tab-pane:not([hidden]) .env-code .active-line-number')?.textContent?.trim() === String(l), line);
    expect(ctx.errors).toEqual([]);
  });

  it('says a save the engine refuses in the status bar notice (it was only logged), and keeps the buffer unsaved', async () => {
    const { ctx } = await start();
    const { page } = ctx;
    await quickOpen(page, 'SequencePattern');
    await page.waitForSelector('[data-testid=env-editor] .env-code [data-testid=code-editor][data-ready=true]');
    await typeAtEnd(page, '\n# kept while the save is refused');
    await page.locator('.tab.active .dirty-dot').waitFor();
    // The contract takes a version message of at most 2000 characters: the engine refuses this save.
    await page.getByTestId('version-message').fill('m'.repeat(2001));
    await page.locator('.tab-pane:not([hidden]) .env-editor-bar').getByRole('button', { name: 'Save', exact: true }).click();
    const notice = page.getByTestId('error-notice');
    await notice.waitFor();
    const said = (await notice.textContent()) ?? '';
    expect(said).toMatch(/^⚠ Save failed: The message is limited to 2,000 characters/);
    expect(said).not.toMatch(/Too big|invalid_input/);
    await page.locator('.tab.active .dirty-dot').waitFor();
    expect(await codeText(page)).toContain('kept while the save is refused');
    await screenshot(page, 'editor-save-refused-notice');
    expect(ctx.errors).toEqual([]);
  });

  it('restores an unsaved draft after a page reload, marked unsaved', async () => {
    const { ctx, api } = await start();
    const { page } = ctx;
    const { envId } = await api.call('editor.create', { source: `${GAME2}\n# a copy to edit\n`, origin: 'paste', name: 'DraftCopyEnv' });
    await quickOpen(page, 'DraftCopy');
    await page.waitForSelector('[data-testid=env-editor] .env-code [data-testid=code-editor][data-ready=true]');
    await typeAtEnd(page, '\n# draft that must survive');
    await page.locator('.tab.active .dirty-dot').waitFor();
    // Reload straight away: the page writes what is pending as it goes.
    await page.reload();
    await page.waitForSelector('[data-testid=backend-status]:has-text("connected")');
    await page.getByRole('tab', { name: /DraftCopyEnv/ }).waitFor();
    await page.getByRole('tab', { name: /DraftCopyEnv/ }).click();
    await page.locator('.tab.active .dirty-dot').waitFor();
    await page.waitForSelector('.tab-pane:not([hidden]) [data-testid=unsaved]');
    await page.waitForSelector('.tab-pane:not([hidden]) .env-code [data-testid=code-editor][data-ready=true]');
    await page.locator('.tab-pane:not([hidden]) .env-code .monaco-editor').click();
    await page.keyboard.press('Control+End');
    await page.waitForFunction(() => (document.querySelector('.tab-pane:not([hidden]) .env-code .view-lines')?.textContent ?? '').replace(/\u00a0/g, ' ').includes('draft that must survive'));
    expect(await codeText(page)).toContain('draft that must survive');
    const draft = (await api.call('editor.open', { envId })).draft;
    expect(draft?.source).toContain('# draft that must survive');
    expect(listVersions(ctx.app.services.db, envId)).toHaveLength(1);
    await screenshot(page, 'editor-draft-restored');
  });

  it('sets the seed flag and tags, exports the seed set, and the export re-imports to the same versions', async () => {
    const { ctx, api } = await start();
    const { page } = ctx;
    const a = await envByName(api, 'SequencePatternEnv');
    expect((await api.call('memory.search', { query: '', filters: { seed: true } })).total).toBe(0);
    await quickOpen(page, 'SequencePattern');
    await page.waitForSelector('[data-testid=curation]');
    await page.getByTestId('curation').getByRole('checkbox', { name: 'Seed' }).click();
    await page.getByTestId('curation').getByLabel('Add tags').fill('curated sequences');
    await page.getByTestId('curation').getByLabel('Add tags').press('Enter');
    await page.locator('[data-testid=tags] .tag-chip', { hasText: 'sequences' }).waitFor();
    await page.waitForFunction(() => (document.querySelector('input[aria-label=Seed]') as HTMLInputElement | null)?.checked === true);
    const env = (await api.call('editor.open', { envId: a.envId })).env;
    expect(env.seed).toBe(true);
    // The seed pack tags its environments `seed` (resources/seed-pack/README.md).
    expect(env.tags).toEqual(['curated', 'seed', 'sequences']);
    await screenshot(page, 'editor-curation');

    const out = tempDir('spade-e2e-export-');
    cleanups.push(out.cleanup);
    const outDir = join(out.dir, 'seeds');
    await page.keyboard.press('Control+Shift+P');
    await page.keyboard.type('Export Seed Set');
    await page.keyboard.press('Enter');
    await page.getByLabel('Export folder').fill(outDir);
    await page.getByRole('button', { name: 'Export', exact: true }).click();
    await page.getByTestId('export-result').waitFor();
    expect(await page.getByTestId('export-result').textContent()).toContain('Wrote 1 environment');
    await screenshot(page, 'editor-export');

    const fresh = tempDir('spade-e2e-reimport-');
    cleanups.push(fresh.cleanup);
    const other = new Services({ dataDir: fresh.dir, shell: 'in-process' });
    try {
      const summary = await importPaths(other.db, [outDir]);
      expect(summary.imported).toBe(1);
      const hashes = (other.db.prepare('SELECT hash FROM versions').all() as { hash: string }[]).map((r) => r.hash);
      expect(hashes).toEqual([env.hash]);
    } finally {
      await other.close();
    }
  });

  it('creates an environment from the game snippet and forks it', async () => {
    const { ctx, api } = await start();
    const { page } = ctx;
    await page.keyboard.press('Control+Shift+P');
    await page.keyboard.type('Cognitive Game Snippet');
    await page.keyboard.press('Enter');
    await page.getByTestId('new-env').waitFor();
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('tab', { name: /NewPuzzleEnv/ }).waitFor();
    await page.waitForSelector('.tab-pane:not([hidden]) [data-testid=env-editor] .env-code [data-testid=code-editor][data-ready=true]');
    await page.getByRole('button', { name: 'Fork as new environment' }).click();
    await page.getByRole('tab', { name: /fork/ }).waitFor();
    const { rows } = await api.call('memory.search', { query: 'NewPuzzleEnv', limit: 10 });
    expect(rows).toHaveLength(2);
    const sources = await Promise.all(rows.map(async (r) => (await api.call('editor.open', { envId: r.id })).env.source));
    expect(sources.filter((src) => src.includes('# forked from NewPuzzleEnv'))).toHaveLength(1);
    await screenshot(page, 'editor-new-and-fork');
    expect(ctx.errors).toEqual([]);
  });
});
