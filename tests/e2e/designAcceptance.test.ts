// The Design page says how a round decides (issue 44): SPADE mode by default, the preset and the
// recipe it follows, each attempt's verdict with SPADE's steps, and the random-guess test and the
// workbench's checks as advice beside it. A scripted designer (the stand-in server) writes a game
// that SPADE's random-guess test (legacy load) finds too easy: SPADE's trainer keeps it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { startStandIn, type StandIn } from '../helpers/standInOpenAi';
import { tempDir } from '../helpers/tmp';

const EASY = readFileSync(join(__dirname, '..', 'fixtures', 'spade-acceptance', 'a03_too_easy_only_in_legacy.py'), 'utf8');

let ctx: E2EContext | null = null;
let server: StandIn | null = null;
const dir = tempDir('spade-e2e-design-acceptance-');
afterEach(async () => {
  await ctx?.close();
  ctx = null;
  await server?.close();
  server = null;
});
afterAll(() => dir.cleanup());

async function command(page: Page, text: string): Promise<void> {
  await page.keyboard.press('Control+Shift+P');
  await page.getByRole('dialog', { name: 'Command palette' }).waitFor();
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

describe('SPADE mode on the Design page (Chromium)', () => {
  it('shows SPADE mode, the preset, the verdict and the advice at 1440 and 1024', async () => {
    server = await startStandIn((b) => {
      const m = b.messages as { role: string; content: string }[];
      if (m[0]!.role === 'system') return { content: '```json\n{"hint": "Small numbers win."}\n```' };
      return { content: `\`\`\`python\n${EASY}\`\`\`` };
    });
    ctx = await openWorkbench({ dataDir: dir.dir, viewport: { width: 1440, height: 900 } });
    ctx.app.services.settings.update({ auditRuntime: 'cpython', defaultRuntime: 'cpython' });
    const { page } = ctx;
    await command(page, 'Design Environments');
    await page.getByTestId('design-view').waitFor();

    // SPADE mode and SPADE's paper defaults for games, unless chosen otherwise.
    expect(await page.getByTestId('design-preset').inputValue()).toBe('spade-games');
    expect(await page.getByTestId('design-gate').inputValue()).toBe('spade');
    const mode = page.getByTestId('design-mode-text');
    expect(await mode.textContent()).toMatch(/^SPADE mode: a game is kept as SPADE's trainer keeps it — validate_game, following cmd\/games\/train_spade_8b\.sh\. The random-guess test \(legacy load, max_turns 1000\) and the workbench's checks are advice\./);
    expect(await mode.textContent()).toContain('25 turns, agent temperature 0.6, 8192 agent tokens, 5 attempts, re-sampling without feedback');
    expect(await page.getByTestId('design-attempts').inputValue()).toBe('5');

    await page.getByTestId('design-designer-url').fill(server.url);
    await page.getByTestId('design-designer-model').fill('designer');
    await page.getByTestId('design-play').uncheck();
    await page.getByTestId('design-count').fill('1');
    await page.getByTestId('design-start').click();
    await page.waitForSelector('[data-testid=design-round][data-status=done]', { timeout: 60_000 });
    expect(await page.getByTestId('design-round-mode').textContent()).toBe('SPADE mode · SPADE paper defaults — games');
    expect(await page.getByTestId('design-attempt').allTextContents()).toEqual(['attempt 1 ✓']);
    await page.getByTestId('design-attempt').first().click();
    const verdict = page.getByTestId('design-verdict');
    await verdict.waitFor();
    expect(await verdict.getByTestId('design-verdict-line').textContent()).toBe('Accepted');
    expect(await verdict.getByTestId('design-verdict-steps').locator('li').allTextContents()).toEqual(['validate_game pass', 'reset gate off — Off in this recipe', 'LLM validator off — Off in this recipe']);
    const advice = verdict.getByTestId('design-advice');
    expect(await advice.textContent()).toContain('random-guess (legacy load) fail');
    expect(await advice.textContent()).toContain('Random guesses win 6/20 episodes (30% > 15%)');
    await verdict.scrollIntoViewIfNeeded();
    await screenshot(page, 'design-acceptance-verdict-1440');
    await page.getByTestId('design-mode').scrollIntoViewIfNeeded();
    await screenshot(page, 'design-acceptance-mode-1440');

    // The tool-use preset: its recipe's reset gate and LLM validator; none is available here, and the verdict says so.
    await page.setViewportSize({ width: 1024, height: 768 });
    await page.getByTestId('design-preset').selectOption('spade-tool-use');
    expect(await mode.textContent()).toMatch(/validate_game, then the reset gate \(from rollout 1\), then the LLM environment validator, following cmd\/tool_use\/train_spade_8b\.sh/);
    expect(await mode.textContent()).toContain('each verdict says "LLM validator not run"');
    await screenshot(page, 'design-acceptance-mode-1024');
    await page.getByTestId('design-start').click();
    await page.waitForSelector('[data-testid=design-round][data-status=done] [data-testid=design-round-mode]:has-text("tool use")', { timeout: 60_000 });
    await page.getByTestId('design-attempt').first().click();
    await verdict.waitFor();
    expect(await verdict.getByTestId('design-verdict-incomplete').textContent()).toBe('LLM validator not run: the preset asks for it and no validator is available');
    expect(await verdict.getByTestId('design-verdict-steps').locator('li').allTextContents()).toEqual([
      'validate_game pass',
      'reset gate pass',
      'LLM validator not run — LLM validator not run: the preset asks for it and no validator is available',
    ]);
    await verdict.scrollIntoViewIfNeeded();
    await screenshot(page, 'design-acceptance-verdict-1024');

    // The stricter gate is a labelled option: the same game is refused on the advice.
    await page.getByTestId('design-preset').selectOption('spade-games');
    await page.getByTestId('design-gate').selectOption('workbench');
    expect(await mode.textContent()).toMatch(/^Workbench gate \(stricter than SPADE\)/);
    await page.getByTestId('design-attempts').fill('1');
    await page.getByTestId('design-start').click();
    await page.waitForSelector('[data-testid=design-round][data-status=done] [data-testid=design-round-mode]:has-text("Workbench gate")', { timeout: 60_000 });
    await page.getByTestId('design-attempt').first().click();
    await verdict.waitFor();
    expect(await verdict.getByTestId('design-verdict-line').textContent()).toBe('Rejected (too-easy): Random guesses win 6/20 episodes (30% > 15%)');
    expect(ctx.errors).toEqual([]);
  }, 170_000);
});
