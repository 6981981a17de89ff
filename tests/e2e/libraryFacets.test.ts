import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { saveAudit } from '../../core/audit/auditStore';
import type { CheckResult } from '../../core/audit/types';
import { updateEnvironment } from '../../core/memory/repository';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { tempDir } from '../helpers/tmp';
import { gameSource, write } from '../integration/memory/fixtures';

beforeAll(() => {
  if (!existsSync(join(process.cwd(), 'dist', 'renderer', 'index.html'))) execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
});

const check = (id: string, status: CheckResult['status']): CheckResult => ({ id, status, message: '', evidence: {} });

describe('library facets and the rating column (Chromium)', () => {
  let ctx: E2EContext;
  let tmp: ReturnType<typeof tempDir>;
  beforeAll(async () => {
    tmp = tempDir('spade-e2e-facets-');
    ctx = await openWorkbench();
  });
  afterAll(async () => {
    await ctx?.close();
    tmp?.cleanup();
  });

  it('lists every skill, filters by audit verdict and failing check, names runs by job, sorts by rating; at 1024 and 1440 px', async () => {
    const { page, app } = ctx;
    const db = app.services.db;
    await page.waitForSelector('[data-testid=library-row]');
    await page.waitForFunction(() => Number(document.querySelector('[data-testid=library-count]')?.textContent?.replace(/[^\d].*$/, '')) >= 21);

    // A job's run, imported the way a job's results come back (filed under the job id).
    const now = new Date().toISOString();
    db.prepare("INSERT INTO jobs (id, name, backend, spec, state, created_at, updated_at) VALUES ('job-5c1e9a', 'qwen3-8b nightly', 'local', '{}', 'done', ?, ?)").run(now, now);
    const run = join(tmp.dir, 'run');
    write(run, 'games/game_00004_000_memory_recall.py', gameSource(40, 'RecallRunEnv'));
    write(run, 'games/game_00004_001_optimization.py', gameSource(41, 'PackRunEnv'));
    await app.services.memory.startImport([run], { jobId: 'job-5c1e9a', runId: 'job-5c1e9a' }).done;

    // Stored audits of three head versions, and ratings on three environments.
    const heads = db.prepare('SELECT id, name, head_hash FROM environments ORDER BY id').all() as { id: number; name: string; head_hash: string }[];
    const audit = (i: number, checks: CheckResult[]) => saveAudit(db, heads[i]!.head_hash, { className: heads[i]!.name, toolUse: false, checks, elapsedMs: 1 }, { toolVersion: 'e2e' });
    audit(0, [check('spade.load', 'pass'), check('determinism', 'pass')]);
    audit(1, [check('spade.load', 'pass'), check('reset-leak', 'fail')]);
    audit(2, [check('spade.load', 'pass'), check('reset-leak', 'fail'), check('determinism', 'fail')]);
    updateEnvironment(db, heads[3]!.id, { rating: 5 });
    updateEnvironment(db, heads[4]!.id, { rating: 2 });
    updateEnvironment(db, heads[5]!.id, { rating: 4 });
    await page.reload();
    await page.waitForSelector('[data-testid=facet-failing]');

    // Every skill the library holds is listed (the seed pack alone has 14).
    const skills = (db.prepare('SELECT count(DISTINCT skill) AS n FROM environments WHERE skill IS NOT NULL').get() as { n: number }).n;
    expect(skills).toBeGreaterThanOrEqual(14);
    expect(await page.locator('[data-testid=facet-skill] .lib-facet-item').count()).toBe(skills);

    // The run reads as the job's name; the id is in its tooltip.
    const runItem = page.locator('[data-testid=facet-run] .lib-facet-item', { hasText: 'qwen3-8b nightly' });
    expect(await runItem.getAttribute('title')).toContain('job-5c1e9a');
    expect(await page.locator('[data-testid=facet-run]').textContent()).not.toContain('job-5c1e9a');

    await page.setViewportSize({ width: 1440, height: 900 });
    await screenshot(page, 'library-facets-1440');

    // Audit verdict: failing -> the two that fail; then a failing check.
    await page.locator('[data-testid=facet-audit] .lib-facet-item', { hasText: 'failing' }).locator('input').check();
    await page.waitForFunction(() => document.querySelector('[data-testid=library-count]')?.textContent?.startsWith('2 environments'));
    await page.locator('[data-testid=facet-failing] .lib-facet-item', { hasText: 'determinism' }).locator('input').check();
    await page.waitForFunction(() => document.querySelector('[data-testid=library-count]')?.textContent?.startsWith('1 environment'));
    expect(await page.locator('[data-testid=library-row]').first().getAttribute('title')).toContain(heads[2]!.name);
    expect(await page.locator('[data-testid=facet-audit] input:checked').count()).toBe(0);
    await screenshot(page, 'library-facets-failing-check');
    await page.click('[data-testid=library-clear-filters]');
    await page.waitForFunction((n) => Number(document.querySelector('[data-testid=library-count]')?.textContent?.replace(/[^\d].*$/, '')) === n, heads.length);

    // The run facet filters by the job.
    await page.setViewportSize({ width: 1024, height: 768 });
    await runItem.scrollIntoViewIfNeeded();
    await screenshot(page, 'library-run-facet-1024');
    await runItem.locator('input').check();
    await page.waitForFunction(() => document.querySelector('[data-testid=library-count]')?.textContent?.startsWith('2 environments'));
    await page.click('[data-testid=library-clear-filters]');

    // Rating sorts: highest first, then lowest first; unrated stay last.
    await page.click('.lib-header button[title="Sort by rating"]');
    await page.waitForFunction(() => document.querySelector('[data-testid=library-rating]')?.textContent === '5');
    expect(await page.locator('[data-testid=library-rating]').evaluateAll((els) => els.slice(0, 4).map((e) => e.textContent))).toEqual(['5', '4', '2', '–']);
    await screenshot(page, 'library-rating-1024');
    await page.click('.lib-header button[title="Sort by rating"]');
    await page.waitForFunction(() => document.querySelector('[data-testid=library-rating]')?.textContent === '2');
    expect(await page.locator('[data-testid=library-rating]').evaluateAll((els) => els.slice(0, 4).map((e) => e.textContent))).toEqual(['2', '4', '5', '–']);
    expect(ctx.errors).toEqual([]);
  });
});
