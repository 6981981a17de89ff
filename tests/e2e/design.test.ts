// The Design page in Chromium against the web host: a scripted designer and agent (the stand-in
// OpenAI-compatible server), the real audit (native CPython in its sandbox), real play, a data
// directory a restarted web host reopens.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { heldHealthPoll, openWorkbench, pollHealth, screenshot, type E2EContext } from '../helpers/browser';
import { startStandIn, type StandIn } from '../helpers/standInOpenAi';
import { tempDir } from '../helpers/tmp';
import type { Services } from '../../core/services/services';
import { luckySevenGame } from '../helpers/designGames';

// The secret is 7 in every episode; the agent says 7 only when it sees the hint.
const GAME = luckySevenGame;

type Msg = { role: string; content: string };
const msgs = (b: Record<string, unknown>) => b.messages as Msg[];

let ctx: E2EContext | null = null;
let server: StandIn | null = null;
const dir = tempDir('spade-e2e-design-');
afterEach(async () => {
  await ctx?.close();
  ctx = null;
  await server?.close();
  server = null;
});
afterAll(() => dir.cleanup());

async function ready(s: Services): Promise<void> {
  // Audits and play in native CPython (its sandbox), as the CLI runs them; the seed pack is memory.
  s.settings.update({ auditRuntime: 'cpython', defaultRuntime: 'cpython' });
  for (let i = 0; i < 600 && (s.db.prepare('SELECT COUNT(*) AS n FROM environments').get() as { n: number }).n < 21; i++) await new Promise((r) => setTimeout(r, 50));
}

async function command(page: Page, text: string): Promise<void> {
  await page.keyboard.press('Control+Shift+P');
  await page.getByRole('dialog', { name: 'Command palette' }).waitFor();
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

describe('the Design page in Chromium (scripted designer and agent)', () => {
  it('previews, starts, shows progress, cancels one round, reopens after a restart, and puts the accepted game in the library with its parent', async () => {
    let slow = false;
    let designs = 0;
    server = await startStandIn((b) => {
      const m = msgs(b);
      if (m[0]!.role === 'system' && m[0]!.content.includes('short hint')) return { content: 'The number is lucky; answer as \\boxed{n}.' };
      if (String(b.model) === 'designer') {
        if (slow) return { content: 'too late', delayMs: 120_000 };
        designs++;
        // The first attempt has no code (rejected, its reason shown); the second is the game.
        return { content: designs % 2 === 1 ? 'I forgot the code.' : `\`\`\`python\n${GAME(`LuckySeven${designs}Env`)}\`\`\`` };
      }
      const first = m.find((x) => x.role === 'user')!.content;
      return { content: first.includes('HINT: ') ? '\\boxed{7}' : '\\boxed{3}' };
    });
    // The status bar's health poll fires only when the test says, so what it shows after a round is what events told it.
    ctx = await openWorkbench({ dataDir: dir.dir, viewport: { width: 1440, height: 900 }, init: heldHealthPoll });
    await ready(ctx.app.services);
    const { page } = ctx;
    const statusBar = page.getByTestId('status-bar');
    await command(page, 'Design Environments');
    const view = page.getByTestId('design-view');
    await view.waitFor();
    await page.getByTestId('design-designer-url').fill(server.url);
    await page.getByTestId('design-designer-model').fill('designer');
    await page.getByTestId('design-agent-url').fill(server.url);
    await page.getByTestId('design-agent-model').fill('agent');
    await page.getByTestId('design-count').fill('1');
    await page.getByTestId('design-attempts').fill('2');
    await page.getByTestId('design-pins').fill('1');

    // The preview: the exact prompt, with the pinned seed shown first.
    await page.getByTestId('design-preview').click();
    await page.getByTestId('design-prompt').waitFor();
    expect(await page.getByTestId('design-prompt').textContent()).toContain('Logical Deduction');
    expect(await page.getByTestId('design-preview-seeds').textContent()).toContain('(#1)');
    const previewed = (await page.getByTestId('design-prompt').textContent())!;
    await screenshot(page, 'design-preview-1440');

    // A round that waits on its designer: progress shows, then Cancel stops it.
    slow = true;
    await page.getByTestId('design-count').fill('3');
    await page.getByTestId('design-start').click();
    await page.waitForSelector('[data-testid=design-progress-text]:has-text("game 1 of 3")');
    // Its designer got the previewed prompt, word for word (the round draws with the previewed seed).
    expect(msgs(server.requests.findLast((b) => String(b.model) === 'designer')!)).toEqual([{ role: 'user', content: previewed }]);
    expect(await page.getByTestId('design-progress-text').textContent()).toMatch(/game 1 of 3 \(Logical Deduction\) · attempt 1 of 2 · designing/);
    await pollHealth(page);
    await statusBar.getByText('design: busy').waitFor();
    await screenshot(page, 'design-progress-1440');
    await page.getByTestId('design-cancel').click();
    await page.waitForSelector('[data-testid=design-round][data-status=cancelled]');
    expect(await page.getByTestId('design-progress').count()).toBe(0);
    // Once the round ended the bar says so without waiting for a poll (it said "design: busy" after a round was done).
    await statusBar.getByText('design: busy').waitFor({ state: 'detached' });

    // A round that finishes: rejected then accepted, played, on the chart in the frontier chart.
    slow = false;
    await page.getByTestId('design-count').fill('1');
    await page.getByTestId('design-start').click();
    await page.waitForSelector('[data-testid=design-round][data-status=done]', { timeout: 50_000 });
    await page.waitForSelector('[data-testid=design-chart][data-points="1"]');
    const game = page.getByTestId('design-game').first();
    expect(await game.getAttribute('data-accepted')).toBe('true');
    expect(await game.getByTestId('design-game-regret').textContent()).toBe('1.000');
    expect(await page.getByTestId('design-attempt').allTextContents()).toEqual(['attempt 1 ✗', 'attempt 2 ✓']);
    await page.getByTestId('design-attempt').first().click();
    await page.getByTestId('design-attempt-detail').waitFor();
    expect(await page.getByTestId('design-attempt-detail').textContent()).toMatch(/Rejected: validate_game: Game validation failed: /);
    await page.getByTestId('design-attempt').nth(1).click();
    await page.getByTestId('design-verdicts').waitFor();
    // Monaco shows the program of the attempt clicked (not the one shown before it).
    await page.locator('[data-testid=design-attempt-detail] .view-lines', { hasText: 'class LuckySeven2Env' }).waitFor();
    // The hint written after acceptance has its own leak check (it does not say 7).
    expect(await page.getByTestId('design-hint-leak').textContent()).toMatch(/^hint-leak pass: The hint does not contain the answer/);
    await statusBar.getByText('design: busy').waitFor({ state: 'detached' });
    await screenshot(page, 'design-results-1440');
    expect(ctx.errors).toEqual([]);

    // A restarted web host: both rounds listed with how they ended, the finished one reopens.
    await ctx.close();
    ctx = await openWorkbench({ dataDir: dir.dir, viewport: { width: 1024, height: 768 } });
    const p2 = ctx.page;
    await command(p2, 'Design Environments');
    await p2.getByTestId('design-rounds').waitFor();
    expect(await p2.getByTestId('design-round-status').allTextContents()).toEqual(['done', 'cancelled']);
    await p2.getByTestId('design-round-row').first().click();
    await p2.waitForSelector('[data-testid=design-chart][data-points="1"]');
    await screenshot(p2, 'design-reopened-1024');

    // The accepted game in the library, made by the round, from its parent (the pinned seed).
    await p2.getByTestId('design-game-env').first().click();
    await p2.getByTestId('env-made-by-round').waitFor();
    expect(await p2.getByTestId('env-made-by-round').textContent()).toContain('design round 2');
    expect(await p2.getByTestId('env-design-parent').count()).toBe(1);
    await p2.getByTestId('env-made-by-round').scrollIntoViewIfNeeded();
    await screenshot(p2, 'design-made-by-1024');

    // Make variants from an environment's page: the parent beside its variants' regret.
    await p2.getByTestId('env-design-parent').locator('button').click();
    // Two environment pages are open (the game's and its parent's): the visible one is the parent's.
    await p2.locator('[data-testid=env-action-variants]:visible').click();
    // The first Design tab stays mounted, hidden: work in the visible one.
    const v = p2.locator('[data-testid=design-view]:visible');
    await v.waitFor();
    expect(await v.locator('h2').textContent()).toMatch(/^Variants of /);
    await v.getByTestId('design-designer-url').fill(server.url);
    await v.getByTestId('design-designer-model').fill('designer');
    await v.getByTestId('design-agent-url').fill(server.url);
    await v.getByTestId('design-agent-model').fill('agent');
    await v.getByTestId('design-count').fill('1');
    await v.getByTestId('design-attempts').fill('2');
    await v.getByTestId('design-instruction').fill('make it harder');
    await v.getByTestId('design-preview').click();
    expect(await v.getByTestId('design-prompt').textContent()).toMatch(/Instruction from the researcher: make it harder$/);
    expect(await v.getByTestId('design-preview-seeds').textContent()).toMatch(/Shown as examples: \S+ \(#1\)/);
    await v.getByTestId('design-start').click();
    await v.locator('[data-testid=design-round][data-status=done]').waitFor({ timeout: 50_000 });
    await v.getByTestId('design-parent').waitFor();
    expect(await v.getByTestId('design-game-regret').textContent()).toBe('1.000');
    await screenshot(p2, 'design-variants-1024');
    expect(ctx.errors).toEqual([]);
  }, 170_000);
});
