import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../../core/memory/db';
import { ingest } from '../../core/memory/repository';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { tempDir } from '../helpers/tmp';
import { gameSource, write } from '../integration/memory/fixtures';

beforeAll(() => {
  if (!existsSync(join(process.cwd(), 'dist', 'renderer', 'index.html'))) execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
});

describe('library (Chromium)', () => {
  let ctx: E2EContext;
  let tmp: ReturnType<typeof tempDir>;
  beforeAll(async () => {
    tmp = tempDir('spade-e2e-lib-');
    ctx = await openWorkbench();
  });
  afterAll(async () => {
    await ctx?.close();
    tmp?.cleanup();
  });

  it('shows the seed pack on first start, searches as you type, opens an environment tab', async () => {
    const { page } = ctx;
    await page.waitForSelector('[data-testid=library-row]');
    const count = await page.textContent('[data-testid=library-count]');
    expect(Number(count!.replace(/[^\d]/g, ''))).toBeGreaterThanOrEqual(14);
    await page.fill('[data-testid=library-search]', 'invent');
    await page.waitForFunction(() => document.querySelector('[data-testid=library-count]')?.textContent?.startsWith('1 environment'));
    await page.click('[data-testid=library-row]');
    await page.waitForSelector('[data-testid=environment-view] [data-testid=code-editor][data-ready=true]');
    expect(await page.textContent('[data-testid=env-name]')).toBe('InventoryValueEnv');
    expect(await page.textContent('[data-testid=env-hint]')).toMatch(/List the products/);
    await page.waitForSelector('.env-source .view-lines');
    await screenshot(page, 'library-detail');
    await page.fill('[data-testid=library-search]', '');
    await page.waitForFunction(() => Number(document.querySelector('[data-testid=library-count]')?.textContent?.replace(/[^\d]/g, '')) >= 14);
    expect(ctx.errors).toEqual([]);
  });

  it('bulk tags and seeds, and facets follow', async () => {
    const { page } = ctx;
    const boxes = page.locator('[data-testid=library-row] input[type=checkbox]');
    await boxes.nth(0).check();
    await boxes.nth(1).check();
    await page.waitForSelector('[data-testid=library-bulk]');
    await page.fill('[data-testid=library-bulk-tag]', 'picked');
    await page.click('[data-testid=library-bulk] button:has-text("+ Tag")');
    await page.click('[data-testid=library-bulk] button:has-text("★ Seed")');
    await page.waitForSelector('[data-testid=facet-tag] :text("picked")');
    await page.click('[data-testid=library-filter-seeds]');
    await page.waitForFunction(() => document.querySelector('[data-testid=library-count]')?.textContent?.startsWith('2 environments'));
    // A changed search ends the selection (it would otherwise act, unseen, on rows no longer shown).
    await page.click('[data-testid=library-clear-filters]');
    await page.waitForSelector('[data-testid=library-bulk]', { state: 'detached' });

    // Select all matching: every row of a search, not only the rows the table has loaded.
    const chip = page.locator('.lib-chips button:has-text("tool-use")');
    // Facets arrive apart from the rows: wait until the chip counts the whole library again, not the seeds.
    const toolUse = (ctx.app.services.db.prepare("SELECT count(*) AS n FROM environments WHERE kind = 'tool-use'").get() as { n: number }).n;
    await page.waitForFunction((n) => [...document.querySelectorAll('.lib-chips button')].some((b) => b.textContent === `tool-use ${n.toLocaleString()}`), toolUse);
    const matching = Number((await chip.textContent())!.replace(/[^\d]/g, ''));
    expect(matching).toBeGreaterThanOrEqual(5);
    await chip.click();
    await page.waitForFunction((n) => document.querySelector('[data-testid=library-count]')?.textContent?.startsWith(`${n} environments · select all`), matching);
    await page.click('[data-testid=library-select-all]');
    await page.waitForFunction((n) => document.querySelector('[data-testid=library-bulk]')?.textContent?.startsWith(`${n} selected`), matching);
    expect(await page.locator('[data-testid=library-select-all]').count()).toBe(0);
    await page.fill('[data-testid=library-bulk-tag]', 'all-tools');
    await page.click('[data-testid=library-bulk] button:has-text("+ Tag")');
    await page.waitForSelector(`[data-testid=facet-tag] :text("all-tools")`);
    await screenshot(page, 'library-select-all');
    await page.click('[data-testid=library-clear-filters]');
    await page.waitForSelector('[data-testid=library-bulk]', { state: 'detached' });
    const tagged = await ctx.app.services.db.prepare("SELECT count(*) AS n FROM tags WHERE tag = 'all-tools'").get() as { n: number };
    expect(tagged.n).toBe(matching);
  });

  it('imports through the dialog with progress and the skipped-files summary', async () => {
    const { page } = ctx;
    const src = join(tmp.dir, 'run');
    for (let i = 0; i < 5; i++) write(src, `spade_games_cache/step_00003/game_00003_00${i}_optimization.py`, gameSource(i, `Dialog${i}Env`));
    write(src, 'spade_games_cache/step_00003/game_00003_009_optimization.py', Buffer.from([0xc3, 0x28, 0x0a]));
    write(src, 'notes.txt', 'not an environment');
    await page.click('[data-testid=library-import-open]');
    await page.fill('[data-testid=import-paths]', src);
    await page.click('[data-testid=import-start]');
    await page.waitForSelector('[data-testid=import-summary]');
    const summary = await page.textContent('[data-testid=import-summary]');
    expect(summary).toMatch(/5 imported/);
    expect(await page.textContent('[data-testid=import-skipped]')).toMatch(/game_00003_009_optimization\.py — not valid UTF-8/);
    expect(await page.textContent('[data-testid=import-skipped]')).toMatch(/notes\.txt — not an environment file/);
    await screenshot(page, 'library-import');
    await page.click('[data-testid=import-dialog] button:has-text("Close")');
    await page.fill('[data-testid=library-search]', 'Dialog3');
    await page.waitForFunction(() => document.querySelector('[data-testid=library-count]')?.textContent?.startsWith('1 environment'));
    await page.fill('[data-testid=library-search]', '');
  });

  it('finds environments by name from quick open', async () => {
    const { page } = ctx;
    await page.keyboard.press('Control+p');
    await page.waitForSelector('[role=dialog][aria-label="Quick open"] input');
    await page.fill('[role=dialog][aria-label="Quick open"] input', 'Dialog2');
    await page.click('.palette-list li:has-text("Dialog2Env")');
    await page.waitForFunction(() => document.querySelector('[role=tab][aria-selected=true]')?.textContent?.includes('Dialog2Env'));
  });

  it('a seed flag set in one view shows at once in every other (one store of environments, no reload)', async () => {
    const { page } = ctx;
    await page.setViewportSize({ width: 1024, height: 768 });
    const curationSeed = page.getByTestId('curation').getByRole('checkbox', { name: 'Seed' });
    const row = page.locator('[data-testid=library-row]', { hasText: 'Dialog4Env' });
    // Earlier tests left other environment tabs open (hidden): only the one shown counts.
    const detailSeed = page.locator('.tab-pane:not([hidden]) [data-testid=environment-view] [data-testid=env-seed]');
    try {
      await page.fill('[data-testid=library-search]', 'Dialog4');
      await page.waitForFunction(() => document.querySelector('[data-testid=library-count]')?.textContent?.startsWith('1 environment'));
      await row.click();
      await detailSeed.filter({ hasText: 'Make seed' }).waitFor();
      await page.click('.tab-pane:not([hidden]) [data-testid=environment-view] [data-testid=env-action-edit]');
      await curationSeed.waitFor();
      expect(await curationSeed.isChecked()).toBe(false);

      // Seeded from the library's bulk bar while the editor shows: its Curation box follows.
      await row.locator('input[type=checkbox]').check();
      await page.click('[data-testid=library-bulk] button:has-text("★ Seed")');
      await page.waitForFunction(() => (document.querySelector('[data-testid=curation] input[aria-label=Seed]') as HTMLInputElement | null)?.checked === true);
      await row.locator('.lib-seed').waitFor();
      await page.click('[data-testid=library-bulk] button:has-text("clear")');
      await screenshot(page, 'one-store-seed-1024');

      // A change core refuses shows once, as the engine's sentence (not the schema's text), and keeps what was typed.
      const skill = page.getByTestId('curation').getByLabel('Skill');
      const skillBefore = await skill.inputValue();
      await skill.fill('x'.repeat(101));
      await skill.blur();
      const notice = page.getByTestId('error-notice');
      await notice.waitFor();
      const said = (await notice.textContent()) ?? '';
      expect(said).toMatch(/^⚠ Update: .*100/);
      expect(said).not.toMatch(/expected|Too big|invalid_input/);
      expect(await skill.inputValue()).toBe('x'.repeat(101));
      await screenshot(page, 'one-store-error-notice-1024');
      await notice.getByRole('button', { name: 'Dismiss the error' }).click();
      await notice.waitFor({ state: 'detached' });
      await skill.fill(skillBefore);

      // Unseeded in the editor: the list and the detail tab follow.
      await curationSeed.uncheck();
      await row.locator('.lib-seed').waitFor({ state: 'detached' });
      await page.locator('[role=tab]', { hasText: 'Dialog4Env' }).first().click();
      await detailSeed.filter({ hasText: 'Make seed' }).waitFor();
      const stored = ctx.app.services.db.prepare("SELECT seed FROM environments WHERE name = 'Dialog4Env'").get() as { seed: number };
      expect(stored.seed).toBe(0);
      expect(ctx.errors).toEqual([]);
    } finally {
      await page.fill('[data-testid=library-search]', '');
      await page.setViewportSize({ width: 1400, height: 860 });
    }
  });
});

describe('library at 100,000 environments (Chromium)', () => {
  it('pages through the API while scrolling a virtual table', async () => {
    const tmp = tempDir('spade-e2e-lib100k-');
    const db = openDatabase(join(tmp.dir, 'workbench.sqlite'));
    const now = new Date().toISOString();
    const N = 100_000;
    for (let start = 0; start < N; start += 5000) {
      db.transaction(() => {
        for (let i = start; i < start + 5000; i++) ingest(db, { source: `class Bulk${i}Env:\n    pass\n`, path: `bulk/${i}.py`, skill: 'Optimization' }, now);
      })();
    }
    db.prepare("INSERT INTO settings (key, value) VALUES ('memory.seedPackImported', '\"test\"')").run();
    db.close();
    const ctx = await openWorkbench({ dataDir: tmp.dir });
    try {
      const { page } = ctx;
      await page.waitForSelector('[data-testid=library-row]');
      expect(await page.textContent('[data-testid=library-count]')).toMatch(/^100,000 environments/);
      // Far fewer rows in the DOM than in the library: the table is virtual.
      expect(await page.locator('[data-testid=library-row]').count()).toBeLessThan(200);
      await page.$eval('[data-testid=library-scroll]', (el) => (el.scrollTop = el.scrollHeight));
      await page.waitForSelector('[data-testid=library-row][aria-rowindex="100000"]');
      expect(await page.textContent('[data-testid=library-row][aria-rowindex="100000"]')).toMatch(/Bulk0Env/);
      await page.$eval('[data-testid=library-scroll]', (el) => (el.scrollTop = el.scrollHeight / 2));
      await page.waitForSelector('[data-testid=library-row][aria-rowindex="50001"]');
      await screenshot(page, 'library-100k');
      // All 100,000, though the table has loaded only the pages scrolled through.
      await page.click('[data-testid=library-select-all]');
      await page.waitForFunction(() => document.querySelector('[data-testid=library-bulk]')?.textContent?.startsWith('100,000 selected'));
      await page.click('[data-testid=library-bulk] button:has-text("clear")');
      await page.waitForSelector('[data-testid=library-select-all]');
      expect(ctx.errors).toEqual([]);
    } finally {
      await ctx.close();
      tmp.cleanup();
    }
  });
});
