import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../core/api';
import { endpointSchema } from '../../core/api/calls/models';
import { createHandlers } from '../../core/handlers';
import { createDispatcher } from '../../core/server/dispatcher';
import { createInProcessBackend } from '../../core/server/inProcess';
import { openFromLibrary, openWorkbench, runCommand, screenshot, waitForPack, type E2EContext } from '../helpers/browser';
import { startStandIn, type StandIn } from '../helpers/standInOpenAi';
import { GUESS_GAME } from '../integration/models/guessGame';

// Issue 46, what a new user saw at 1024 and 1440 px, in Chromium against the web host: two games
// with one class name that looked the same in run results; a right-to-left override in a hint that
// reversed the text shown; an episode list that said "return 0" for a won episode reset again and a
// budget box that said 25 where episodes play 30; a Pool audit header stale after a fix; and the
// polish items (cut library headers, a FAIL badge that did not open, an unlabelled tag box, a filter
// chip that looked like an action, negative seed counts turned into 1, sideways scrolling).

const RLO = '\u202E';
const WIDTHS = [1440, 1024] as const;
let ctx: E2EContext;
let api: Backend;
let server: StandIn;
const twins: string[] = [];
let crashHash = '';

/** A game that crashes on its first step: the audit fails it. */
const CRASH = `class CrashEnv:
    def reset(self, seed=None):
        return "Say anything.", {}

    def step(self, action):
        raise RuntimeError("boom")
`;
/** The same game, fixed. */
const FIXED = `class CrashEnv:
    def reset(self, seed=None):
        return "Say \\\\boxed{7}.", {}

    def step(self, action):
        ok = "7" in action
        return ("Right." if ok else "Wrong."), (1.0 if ok else 0.0), True, False, {}

    def solution(self):
        return "7"
`;

/** A game won at the first step, whose observation carries a right-to-left override. */
const WIN_ONCE = `class WinOnceEnv:
    def reset(self, seed=None):
        return "Start ${RLO}txet desrever", {}

    def step(self, action):
        return "You won.", 1.0, True, False, {}
`;

async function sized(page: Page, w: number): Promise<void> {
  await page.setViewportSize({ width: w, height: w === 1440 ? 900 : 768 });
}

/** Elements (by selector) whose content is wider than their box and which scroll or cut it. */
async function overflowing(page: Page, selector: string): Promise<string[]> {
  return page.evaluate(
    (sel) =>
      [...document.querySelectorAll(sel)]
        .filter((e) => getComputedStyle(e).display !== 'none' && e.scrollWidth > e.clientWidth + 1)
        .map((e) => `${e.className}: "${e.textContent}" ${e.scrollWidth}/${e.clientWidth}`),
    selector,
  );
}

beforeAll(async () => {
  server = await startStandIn(() => ({ content: 'so \\boxed{7}' }));
  ctx = await openWorkbench({ viewport: { width: 1440, height: 900 } });
  api = createInProcessBackend(createDispatcher(createHandlers(ctx.app.services)), ctx.app.services.events);
  const s = ctx.app.services;
  await waitForPack(s, 21);
  for (const [i, tag] of ['Alpha', 'Beta'].entries()) {
    const hash = s.episodes.ctx.d.catalog.add(GUESS_GAME.replace('Guess my number', `${tag}: guess my number`).replace('class GuessEnv', '# zebrafish\nclass TwinEnv'), null, `${tag}.py`);
    s.library.update(s.library.get({ hash }).id, { hint: i === 0 ? `pick ${RLO}7 then 8` : 'pick 7', rating: 4 });
    twins.push(hash);
  }
  // Two model runs over the twins: measured columns in the library, and a comparison of two runs.
  // Long model names, as served models have: the Runs page must still fit a 1024 px window.
  for (const [model, runId] of [['a-served-model-with-a-long-name', 'run-a'], ['b-served-model-with-a-long-name', 'run-b']] as const) {
    await s.models.play({ hashes: twins, endpoint: endpointSchema.parse({ baseUrl: server.url, model, retries: 0, concurrency: 2 }), seeds: 1, seedStart: 0, arms: ['hint', 'nohint'], runtime: 'cpython', runId, selection: 'zebrafish', estimator: 'paired' });
  }
  crashHash = s.episodes.ctx.d.catalog.add(CRASH, null, 'crash_env.py');
  s.episodes.ctx.d.catalog.add(WIN_ONCE, null, 'win_once.py');
}, 120_000);

afterAll(async () => {
  api?.close();
  await ctx?.close();
  await server?.close();
});

describe('issue 46 in Chromium at 1440 and 1024 px', () => {
  it('library headers fit and cells sit under them; the seeds chip is a filter; the tag box is labelled', async () => {
    const { page } = ctx;
    await page.getByTestId('library-search').fill('zebrafish');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=library-row]').length === 2);
    await page.waitForSelector('[data-testid=library-model]:has-text("b-served")', { state: 'attached' });
    for (const w of WIDTHS) {
      await sized(page, w);
      // No header is cut ("Win M…"), with a sort arrow on too.
      await page.locator('.lib-header .lib-th', { hasText: 'Regret' }).click();
      await page.locator('.lib-header .lib-th.active', { hasText: 'Regret' }).waitFor();
      // A new sort reloads the rows: wait until both are back before measuring them (on a loaded
      // machine the table was caught empty: "Cannot read properties of null").
      await page.waitForFunction(() => document.querySelectorAll('[data-testid=library-row]').length === 2);
      expect.soft(await overflowing(page, '.lib-header .lib-th'), `headers at ${w}`).toEqual([]);
      // Every visible cell of a row lies under the header of its column (the rating sat under Model).
      const misplaced = await page.evaluate(() => {
        const shown = (p: Element) => [...p.children].filter((c) => getComputedStyle(c).display !== 'none');
        const head = shown(document.querySelector('.lib-header')!);
        const row = shown(document.querySelector('[data-testid=library-row]')!);
        if (head.length !== row.length) return [`${head.length} headers, ${row.length} cells`];
        return row.flatMap((c, i) => {
          const r = c.getBoundingClientRect();
          const h = head[i]!.getBoundingClientRect();
          const mid = (r.left + r.right) / 2;
          return mid >= h.left - 1 && mid <= h.right + 1 ? [] : [`cell ${i} "${c.textContent}" at ${Math.round(mid)} not under "${head[i]!.textContent}" ${Math.round(h.left)}-${Math.round(h.right)}`];
        });
      });
      expect.soft(misplaced, `columns at ${w}`).toEqual([]);
      expect(await page.locator('[data-testid=library-row]').first().getByTestId('library-rating').textContent()).toBe('4');

      // The seeds filter is drawn and worded as a filter, not as the ★ Seed action.
      const chip = page.getByTestId('library-filter-seeds');
      expect.soft(await chip.textContent()).toMatch(/^☐ seeds only \(\d+\)$/);
      expect.soft(await chip.getAttribute('aria-pressed')).toBe('false');

      // The bulk bar's tag box has a visible label, and a disabled + Tag says what it waits for.
      await page.locator('[data-testid=library-row] input[type=checkbox]').first().check();
      const bulk = page.getByTestId('library-bulk');
      expect((await bulk.locator('label', { has: page.getByTestId('library-bulk-tag') }).textContent())?.trim()).toBe('Tag');
      const add = bulk.getByTestId('library-bulk-tag-add');
      await bulk.getByTestId('library-bulk-tag').fill('');
      expect(await add.isDisabled()).toBe(true);
      expect(await add.getAttribute('title')).toContain('Type a tag name in the Tag box first');
      await bulk.getByTestId('library-bulk-tag').fill('twins');
      expect(await add.isEnabled()).toBe(true);
      await screenshot(page, `issue46-library-${w}`);
      await bulk.locator('button', { hasText: 'clear' }).click();
      await page.locator('.lib-header .lib-th', { hasText: 'Regret' }).click();
      await page.locator('.lib-header .lib-th', { hasText: 'Regret' }).click();
    }
    expect(ctx.errors).toEqual([]);
  }, 60_000);

  it('shows a hint with a right-to-left override visibly, and the FAIL badge opens the audit', async () => {
    const { page } = ctx;
    await sized(page, 1440);
    const s = ctx.app.services;
    await page.locator('[data-testid=library-row]', { hasText: 'TwinEnv' }).first().waitFor();
    // The twin with the override: its page shows the hint as stored, the override as a token.
    const rlo = s.library.get({ hash: twins[0]! });
    await page.getByTestId('library-search').fill('zebrafish');
    // The row of that version (its tooltip names the hash).
    await page.locator(`[data-testid=library-row][title*="${twins[0]!.slice(0, 12)}"]`).click();
    const hint = page.locator('.tab-pane:not([hidden]) [data-testid=env-hint]');
    await page.waitForFunction(() => document.querySelector('.tab-pane:not([hidden]) [data-testid=env-hint]')?.textContent?.includes('then 8'));
    const text = (await hint.textContent())!;
    expect(rlo.hint).toContain(RLO);
    expect.soft(text).not.toContain(RLO);
    expect.soft(text.replace(/\s+/g, ' ').trim()).toBe('pick ⟦RLO⟧7 then 8');
    expect.soft((await hint.getByTestId('control-char').count()) ? await hint.getByTestId('control-char').getAttribute('title') : '(no token)').toContain('U+202E');
    await screenshot(page, 'issue46-hint-rlo-1440');

    // A failing audit: its badge is a button that opens the audit with its checks.
    await api.call('audit.run', { hash: crashHash });
    await openFromLibrary(page, 'CrashEnv');
    for (const w of WIDTHS) {
      await sized(page, w);
      const badge = page.locator('.tab-pane:not([hidden]) [data-testid=env-verdict-open]');
      await badge.waitFor();
      expect((await badge.textContent())?.toLowerCase()).toBe('fail');
      await screenshot(page, `issue46-env-fail-${w}`);
      await badge.click();
      await page.locator('.tab.active', { hasText: 'Audit: CrashEnv' }).waitFor();
      await page.locator('.tab', { hasText: /^CrashEnv/ }).click();
    }
    expect(ctx.errors).toEqual([]);
  }, 90_000);

  it('tells twins apart by hash in run results and comparisons; no sideways scrolling at 1024; refuses a negative seed count', async () => {
    const { page } = ctx;
    await sized(page, 1440);
    await runCommand(page, 'Show Model Runs');
    const view = page.locator('.tab-pane:not([hidden]) [data-testid=runs-view]');
    await view.waitFor();
    await view.locator('[data-testid=runs-row][data-run="run-a"]').waitFor();
    await view.locator('[data-testid=runs-row][data-run="run-a"] [data-testid=runs-pick-a]').check();
    await view.locator('[data-testid=runs-row][data-run="run-b"] [data-testid=runs-pick-b]').check();
    const rows = view.getByTestId('runs-compare-row');
    await rows.nth(1).waitFor();
    // Both rows are named TwinEnv, and each says which version it is.
    const shown = await rows.evaluateAll((rs) => rs.map((r) => ({ text: r.querySelector('td')!.textContent, hash: r.querySelector('[data-testid=env-version]')?.getAttribute('data-hash') ?? null })));
    expect.soft(shown.map((x) => x.hash).sort()).toEqual([...twins].sort());
    for (const x of shown) expect.soft(x.text).toBe(`TwinEnv ${x.hash?.slice(0, 8)}`);
    if (shown.every((x) => x.hash)) {
      // The hash opens the environment holding that version.
      await rows.first().getByTestId('env-version').click();
      await page.locator('.tab.active', { hasText: 'TwinEnv' }).waitFor();
      const opened = await page.locator('.tab-pane:not([hidden]) [data-testid=environment-view]').getByTestId('env-name').textContent();
      expect(opened).toBe('TwinEnv');
      await page.locator('.tab', { hasText: 'Runs' }).click();
    }

    for (const w of WIDTHS) {
      await sized(page, w);
      await view.getByTestId('runs-compare').waitFor();
      expect.soft(await overflowing(page, '.tab-pane:not([hidden]) .runs-view'), `runs page at ${w}`).toEqual([]);
      await screenshot(page, `issue46-runs-compare-${w}`);
    }

    // A negative seed count is refused in words; nothing is started.
    const sweeps = view.getByTestId('regret-sweeps');
    const before = await sweeps.getByTestId('regret-sweep').count();
    await sweeps.getByTestId('regret-query').fill('zebrafish');
    // Paired seeds, the labelled option (SPADE's estimator, the default, has its own counts).
    await sweeps.getByTestId('regret-estimator').selectOption('paired');
    await sweeps.getByTestId('regret-seeds').fill('-3');
    await sweeps.getByTestId('regret-start').click();
    await page.waitForTimeout(300);
    expect.soft(await sweeps.getByTestId('regret-sweep').count(), 'no sweep started').toBe(before);
    expect.soft(await sweeps.getByTestId('regret-seeds').inputValue()).toBe('-3');
    expect.soft((await sweeps.getByTestId('regret-error').count()) ? await sweeps.getByTestId('regret-error').textContent() : '(no error shown)').toContain('Seeds must be a whole number of at least 1 (not "-3")');
    expect.soft(await sweeps.locator('label', { hasText: 'Budget' }).locator('input').getAttribute('placeholder')).toBe(String(ctx.app.services.settings.get().maxTurns));
    await screenshot(page, 'issue46-runs-negative-seeds-1024');

    // The tab strip: seven tabs fit at 1024 without scrolling sideways (titles narrow instead).
    while ((await page.locator('.tab').count()) > 0) await page.locator('.tab-close').first().click({ force: true });
    for (const name of ['GridWalkEnv', 'MentalArithmeticEnv', 'TargetArithmeticEnv', 'WordUnscrambleEnv', 'SequencePatternEnv', 'RemainderRiddleEnv']) {
      await openFromLibrary(page, name);
    }
    await runCommand(page, 'Show Model Runs');
    expect(await page.locator('.tab').count()).toBe(7);
    for (const w of WIDTHS) {
      await sized(page, w);
      expect.soft(await overflowing(page, '.tab-bar'), `tab strip at ${w}`).toEqual([]);
      await screenshot(page, `issue46-tabs-${w}`);
    }
    expect(ctx.errors).toEqual([]);
  }, 90_000);

  it('says what an episode reset after a win returned before, shows the budget episodes get, and shows controls in observations', async () => {
    const { page } = ctx;
    const hash = ctx.app.services.library.get({ id: ctx.app.services.library.search({ query: 'WinOnceEnv', limit: 1, filters: {} }).rows[0]!.id }).hash;
    const opened = await api.call('episodes.open', { hash, seed: 0, runtime: 'cpython' });
    const id = opened.episode.id;
    await api.call('episodes.act', { id, action: 'go' });
    const again = await api.call('episodes.resetAgain', { id, seed: 0 });
    expect(again.episode.totalReturn).toBe(0);
    await page.locator('.activity-bar').getByRole('button', { name: 'Episodes', exact: true }).click();
    const panel = page.getByTestId('episodes-panel');
    await panel.waitFor();
    // The budget box shows what an episode gets when it is left empty: the Settings value.
    expect.soft(await panel.locator('label', { hasText: 'budget' }).locator('input').getAttribute('placeholder')).toBe(String(ctx.app.services.settings.get().maxTurns));
    const item = panel.locator(`[data-testid=ep-item][data-id="${id}"]`);
    await item.waitFor();
    for (const w of WIDTHS) {
      await sized(page, w);
      await page.waitForFunction((i) => document.querySelector(`[data-testid=ep-item][data-id="${i}"]`)?.textContent?.includes('3 steps'), id);
      expect.soft((await item.textContent())?.replace(/\s+/g, ' ')).toContain('3 steps · return 0 (since reset 2; before: 1) ·');
      await screenshot(page, `issue46-episodes-${w}`);
    }
    await item.click();
    const ep = page.locator('.tab-pane:not([hidden]) [data-testid=episode-view]');
    await ep.waitFor();
    expect.soft((await ep.locator('.ep-header').textContent())?.replace(/\s+/g, ' ')).toContain('return 0 (since reset 2; before: 1)');
    const obs = (await ep.getByTestId('step-observation').textContent())!;
    expect.soft(obs).not.toContain(RLO);
    expect.soft(obs).toContain('Start ⟦RLO⟧txet desrever');
    await screenshot(page, 'issue46-episode-1024');
    expect(ctx.errors).toEqual([]);
  }, 90_000);

  it('moves the Pool audit header when a failing environment is fixed and audited again, without a reload', async () => {
    const { page } = ctx;
    await sized(page, 1440);
    // CrashEnv fails its audit (audited again here, so that this test stands alone).
    await api.call('audit.run', { hash: crashHash });
    await runCommand(page, 'Show Pool Audit Dashboard');
    const head = page.locator('.tab-pane:not([hidden]) .audit-head');
    await head.locator('.muted').waitFor();
    const counts = async () => (await head.locator('.muted').textContent()) ?? '';
    const before = ctx.app.services.audit.summary();
    expect(before.verdicts.fail).toBeGreaterThanOrEqual(1);
    expect(await counts()).toContain(`${before.verdicts.fail} fail · ${before.verdicts.warn} warn · ${before.verdicts.pass} pass`);
    // The fix: a new version of CrashEnv that plays, saved and audited as the editor does.
    const env = ctx.app.services.library.get({ hash: crashHash });
    const saved = await api.call('editor.save', { envId: env.id, parentHash: crashHash, source: FIXED, hint: null, message: 'fix the crash', check: false });
    const fixed = await api.call('audit.run', { hash: saved.hash });
    expect(fixed.checks.filter((c) => c.status === 'fail')).toEqual([]);
    const after = ctx.app.services.audit.summary();
    expect(after.verdicts.fail).toBe(before.verdicts.fail - 1);
    const want = `${after.audited} of ${after.environments} environments audited · ${after.verdicts.fail} fail · ${after.verdicts.warn} warn · ${after.verdicts.pass} pass`;
    await page.waitForFunction(([w]) => document.querySelector('.tab-pane:not([hidden]) .audit-head .muted')?.textContent?.includes(w!), [want], { timeout: 10_000 });
    for (const w of WIDTHS) {
      await sized(page, w);
      await screenshot(page, `issue46-pool-audit-${w}`);
    }
    expect(ctx.errors).toEqual([]);
  }, 90_000);
});
