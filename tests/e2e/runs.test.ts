import { afterEach, describe, expect, it } from 'vitest';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { startStandIn, type StandIn } from '../helpers/standInOpenAi';
import { endpointSchema } from '../../core/api/calls/models';
import { GUESS_GAME } from '../integration/models/guessGame';

let ctx: E2EContext | null = null;
let server: StandIn | null = null;
afterEach(async () => {
  await ctx?.close();
  ctx = null;
  await server?.close();
  server = null;
});

const first = (b: Record<string, unknown>) => String((b.messages as { content: string }[])[0]!.content);

describe('model runs in Chromium (stand-in model server)', () => {
  it('shows measured regret in the library and on the environment page, and compares two runs side by side', async () => {
    // Model "a" wins only with the hint; model "b" also wins Alpha without it.
    server = await startStandIn((b) => {
      const wins = first(b).includes('HINT: ') || (b.model === 'b' && first(b).includes('Alpha'));
      return { content: wins ? 'so \\boxed{7}' : 'I guess \\boxed{3}' };
    });
    ctx = await openWorkbench();
    const { page } = ctx;
    const s = ctx.app.services;
    const hashes: string[] = [];
    for (const name of ['Alpha', 'Beta']) {
      const hash = s.episodes.ctx.d.catalog.add(GUESS_GAME.replace('Guess my number', `${name}: guess my number`).replace('class GuessEnv', `# zebrafish\nclass ${name}Env`), null, `${name}.py`);
      s.library.update(s.library.get({ hash }).id, { hint: 'pick 7' });
      hashes.push(hash);
    }
    const play = (model: string, runId: string) => s.models.play({ hashes, endpoint: endpointSchema.parse({ baseUrl: server!.url, model, retries: 0, concurrency: 2 }), seeds: 2, seedStart: 0, arms: ['hint', 'nohint'], runtime: 'pyodide', runId, selection: 'guess', estimator: 'paired' });
    const a = await play('a', 'run-a');
    const b = await play('b', 'run-b');
    expect(a.envs.map((e) => e.regret)).toEqual([1, 1]);
    expect(b.envs.find((e) => e.name === 'AlphaEnv')).toMatchObject({ regret: 0, winRate: 1 });

    // The library: measured Regret / Win / Model columns (newest: model b), the recorded one apart.
    // A word only these two games hold (the seed pack has guessing games of its own).
    await page.getByTestId('library-search').fill('zebrafish');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=library-row]').length === 2);
    // The Model column gives way in a narrow side panel (its model is in the Regret cell's tooltip): attached, not necessarily shown.
    await page.waitForSelector('[data-testid=library-model]:has-text("b")', { state: 'attached' });
    const alphaRow = page.locator('[data-testid=library-row]', { hasText: 'AlphaEnv' });
    expect(await alphaRow.getByTestId('library-regret').textContent()).toBe('0.00');
    // Measured with paired seeds: the row says so (SPADE's estimator is the unmarked default).
    expect(await alphaRow.getByTestId('library-regret').getAttribute('data-estimator')).toBe('paired');
    expect(await alphaRow.getByTestId('library-regret').getAttribute('title')).toContain('paired-seed regret (workbench)');
    expect(await alphaRow.getByTestId('library-winrate').textContent()).toBe('1.00');
    expect(await alphaRow.getByTestId('library-model').textContent()).toBe('b');
    // Choosing model a shows a's numbers; its frontier facet keeps nothing (win rate 0 is outside 0.15-0.85).
    await page.getByTestId('facet-model').selectOption('a');
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=library-model]')].every((e) => e.textContent === 'a'));
    expect(await alphaRow.getByTestId('library-regret').textContent()).toBe('1.00');
    await screenshot(page, 'runs-library-columns');
    await page.getByTestId('facet-frontier').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=library-row]').length === 0);
    await page.getByTestId('facet-frontier').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=library-row]').length === 2);

    // The environment page: per model and version, with seeds and the run.
    await alphaRow.click();
    await page.getByTestId('env-measured').waitFor();
    expect(await page.getByTestId('env-measured-row').count()).toBe(2);
    expect(await page.getByTestId('env-measured-regret').allTextContents()).toEqual(['0.00', '1.00']);
    await screenshot(page, 'runs-environment-measured');

    // The Runs page from the environment page's run link; pick B and compare.
    await page.locator('[data-testid=env-measured] button', { hasText: 'run-a' }).click();
    await page.getByTestId('runs-view').waitFor();
    await page.getByTestId('runs-detail').waitFor();
    await page.locator('[data-testid=runs-row][data-run=run-b] [data-testid=runs-pick-b]').check();
    await page.getByTestId('runs-compare').waitFor();
    await page.waitForSelector('[data-testid=runs-scatter][data-points="2"]');
    const deltas = await page.getByTestId('runs-delta-regret').allTextContents();
    expect(deltas).toEqual(['-1', '0']);
    expect(await page.getByTestId('runs-disagree').textContent()).toContain('AlphaEnv');
    await screenshot(page, 'runs-compare');

    // One episode of each run, side by side.
    await page.getByTestId('runs-open-pair').first().click();
    await page.locator('[data-testid=pair-view][data-mode=models]').waitFor();
    await screenshot(page, 'runs-pair');

    // A version without a hint (SPADE: a failed hint generation) plays only its unhinted arm: the
    // run's count is what will be played, and its regret is not measured (null), said as "no hint arm".
    const hintless = s.episodes.ctx.d.catalog.add(GUESS_GAME.replace('Guess my number', 'Gamma: guess my number').replace('class GuessEnv', 'class GammaEnv'), null, 'Gamma.py');
    const c = await s.models.play({ hashes: [hashes[0]!, hintless], endpoint: endpointSchema.parse({ baseUrl: server.url, model: 'a', retries: 0, concurrency: 2 }), seeds: 2, seedStart: 0, arms: ['hint', 'nohint'], runtime: 'pyodide', runId: 'run-hintless', selection: 'hintless', estimator: 'paired' });
    expect(c.envs.map((e) => e.regret)).toEqual([1, null]);
    await page.getByRole('tab', { name: /Runs/ }).click();
    const row = page.locator('[data-testid=runs-row][data-run=run-hintless]');
    // Two seeds of two arms for Alpha, two unhinted for Gamma: 6 of 6, not 6 of 8.
    expect((await row.locator('td').nth(9).textContent())?.trim()).toBe('6/6');
    // Compared with run-b, Gamma's side says it has no hint arm.
    await row.getByTestId('runs-pick-a').check();
    await page.locator('[data-testid=runs-compare-row]', { hasText: 'GammaEnv' }).waitFor();
    expect((await page.locator('[data-testid=runs-compare-row]', { hasText: 'GammaEnv' }).locator('td').nth(1).textContent())?.trim()).toBe('no hint arm');
    // Alone, from Gamma's environment page: the run's detail.
    await page.getByTestId('library-search').fill('Gamma');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=library-row]').length === 1);
    await page.locator('[data-testid=library-row]', { hasText: 'GammaEnv' }).click();
    await page.locator('[data-testid=env-measured] button', { hasText: 'run-hintless' }).filter({ visible: true }).click();
    await page.locator('[data-testid=runs-detail] h3', { hasText: 'run-hintless' }).waitFor();
    expect(await page.getByTestId('runs-env-regret').allTextContents()).toEqual(['1', 'no hint arm']);
    await screenshot(page, 'runs-hintless');
    expect(ctx.errors).toEqual([]);
  }, 600_000);
});
