import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openWorkbench, runCommand, screenshot, waitForPack, type E2EContext } from '../helpers/browser';

// Chromium against the web host: a curated set (a tag) swept from the Runs page. The Environments
// field takes the library's query language (core/memory/query.ts), says how many environments the
// query picks before Start, says why a query it cannot read picks none, and the sweep plays exactly
// the tagged set. Before, the field was full text only: `tag:audit-clean` matched nothing.

let ctx: E2EContext;

const game = (cls: string) => `# curatedpool: a game of the selection e2e test
class ${cls}:
    def reset(self, seed=None):
        return "Say \\\\boxed{7}", {}

    def solution(self):
        return "7"

    def step(self, action):
        return "done", 1.0 if "7" in action else 0.0, True, False, {}
`;

beforeAll(async () => {
  ctx = await openWorkbench({ viewport: { width: 1440, height: 900 } });
  const s = ctx.app.services;
  await waitForPack(s, 21);
  const dir = join(ctx.dataDir, 'curated');
  mkdirSync(dir, { recursive: true });
  for (const c of ['CuratedAEnv', 'CuratedBEnv', 'CuratedCEnv']) writeFileSync(join(dir, `${c}.py`), game(c));
  if (!(await s.memory.startImport([dir]).done)) throw new Error('the curated games were not imported');
  const rows = s.library.search({ query: 'curatedpool', limit: 10 }).rows;
  s.library.tag(rows.filter((r) => r.name !== 'CuratedCEnv').map((r) => r.id), ['audit-clean'], []);
  await runCommand(ctx.page, 'regret sweep over a pool');
  await ctx.page.getByTestId('regret-sweeps').waitFor();
}, 60_000);

afterAll(async () => {
  await ctx?.close();
});

it('sweeps a tagged set from the Runs page, counting it before Start, at 1440 and 1024 px', async () => {
  const { page } = ctx;
  const section = page.getByTestId('regret-sweeps');
  const matches = section.getByTestId('regret-query-matches');
  await section.getByTestId('regret-query').fill('tag:audit-clean');
  await page.waitForFunction(() => document.querySelector('[data-testid=regret-query-matches]')?.textContent === '2 environments match');
  await screenshot(page, 'selection-tag-1440');

  // A query it cannot read says why, in words, before anything starts.
  await section.getByTestId('regret-query').fill('tag:audit-clean verdict:maybe');
  await page.waitForFunction(() => /verdict: takes pass, warn or fail/.test(document.querySelector('[data-testid=regret-query-matches]')?.textContent ?? ''));
  expect(await matches.getAttribute('role')).toBe('alert');

  await section.getByTestId('regret-query').fill('tag:audit-clean');
  await page.waitForFunction(() => document.querySelector('[data-testid=regret-query-matches]')?.textContent === '2 environments match');
  // Paired seeds, the labelled option (SPADE's estimator, the default, has its own counts).
  await section.getByTestId('regret-estimator').selectOption('paired');
  await section.getByTestId('regret-seeds').fill('1');
  await section.getByTestId('regret-start').click();
  const sweep = section.locator('[data-testid=regret-sweep]', { hasText: 'tag:audit-clean' }).first();
  await sweep.waitFor();
  const id = (await sweep.getAttribute('data-sweep'))!;
  await page.waitForFunction((sid) => document.querySelector(`[data-testid=regret-sweep][data-sweep="${sid}"]`)?.getAttribute('data-state') === 'done', id, { timeout: 60_000 });
  const report = ctx.app.services.regretSweeps.report(id);
  expect(report.envs.map((e) => e.env).sort()).toEqual(['CuratedAEnv', 'CuratedBEnv']);
  expect(await sweep.textContent()).toContain('2 envs × 1 seed');

  await page.setViewportSize({ width: 1024, height: 768 });
  await section.getByTestId('regret-query').scrollIntoViewIfNeeded();
  await screenshot(page, 'selection-tag-1024');
  // The field and its count stay inside the page at 1024: nothing scrolls sideways.
  const box = (await matches.boundingBox())!;
  expect(box.x + box.width).toBeLessThanOrEqual(1024);
  expect(ctx.errors).toEqual([]);
}, 90_000);
