// The Design page with SPADE's prompts (issue 44), in Chromium against the web host: the SPADE
// checkout set in Settings (SPADE_SRC: its texts are read at run time, never copied here), a corpus
// file in SPADE's format, a scripted designer (the stand-in server), the real audit. The page says
// the prompts are SPADE's, from that checkout, and shows each attempt's grounding document beside
// the game it grounded, at 1440 and 1024 px.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { startStandIn, type StandIn } from '../helpers/standInOpenAi';
import { tempDir } from '../helpers/tmp';
import { luckySevenGame } from '../helpers/designGames';

type Msg = { role: string; content: string };
const msgs = (b: Record<string, unknown>) => b.messages as Msg[];

const spadeSrc = process.env.SPADE_SRC ?? '';
const haveSpade = !!spadeSrc && existsSync(join(spadeSrc, 'spade/core/prompts/template.py'));
if (!haveSpade) console.warn('[Design page with SPADE prompts skipped] set SPADE_SRC to a SPADE checkout');

let ctx: E2EContext | null = null;
let server: StandIn | null = null;
const dir = tempDir('spade-e2e-design-spade-');
afterEach(async () => {
  await ctx?.close();
  ctx = null;
  await server?.close();
  server = null;
});
afterAll(() => dir.cleanup());

describe.skipIf(!haveSpade)('the Design page with a SPADE checkout and a corpus (SPADE_SRC)', () => {
  it("says the prompts are SPADE's from the checkout and shows the grounding document beside each game", async () => {
    const corpus = join(dir.dir, 'corpus.jsonl');
    writeFileSync(
      corpus,
      [
        { orig_doc: 'Binary search keeps an interval that must hold the target and halves it after every comparison: compare with the middle element, then keep the half that can still contain it.' },
        { text: 'A double-entry ledger records every transaction twice, as a debit in one account and a credit in another, so the books balance.' },
      ]
        .map((o) => JSON.stringify(o))
        .join('\n'),
    );
    let designs = 0;
    server = await startStandIn((b) => {
      const m = msgs(b);
      // The designer's requests open with SPADE's system prompt; the hint's with its hint prompt.
      if (m.length === 2 && m[1]!.content.startsWith('Environment code:')) return { content: 'Think of lucky numbers.' };
      designs++;
      return { content: designs === 1 ? 'I forgot the code.' : `\`\`\`python\n${luckySevenGame('LuckySevenEnv')}\`\`\`` };
    });
    ctx = await openWorkbench({ dataDir: dir.dir, viewport: { width: 1440, height: 900 } });
    ctx.app.services.settings.update({ auditRuntime: 'cpython', defaultRuntime: 'cpython', spadeSrc });
    const { page } = ctx;
    await page.keyboard.press('Control+Shift+P');
    await page.getByRole('dialog', { name: 'Command palette' }).waitFor();
    await page.keyboard.type('Design Environments');
    await page.keyboard.press('Enter');
    await page.getByTestId('design-view').waitFor();
    await page.getByTestId('design-designer-url').fill(server.url);
    await page.getByTestId('design-designer-model').fill('designer');
    await page.getByTestId('design-play').uncheck();
    await page.getByTestId('design-count').fill('1');
    await page.getByTestId('design-attempts').fill('2');
    await page.getByTestId('design-corpus').fill(corpus);

    await page.getByTestId('design-preview').click();
    await page.getByTestId('design-prompt').waitFor();
    expect(await page.getByTestId('design-preview-builder').textContent()).toMatch(/^SPADE's prompt, built by spade\/core\/prompts\/corpus_template\.py:generate_corpus_grounded_prompt from the checkout in Settings, after SPADE’s system message · grounded on document #[01]$/);
    expect(await page.getByTestId('design-prompt').textContent()).toContain('<REFERENCE_DOCUMENT>');

    await page.getByTestId('design-start').click();
    await page.waitForSelector('[data-testid=design-round][data-status=done]', { timeout: 60_000 });
    const from = page.getByTestId('design-prompts-from');
    expect(await from.getAttribute('data-kind')).toBe('spade');
    expect(await from.textContent()).toContain(`read at run time from the checkout ${spadeSrc}`);
    expect(await from.textContent()).toContain(`grounded on the corpus ${corpus}`);
    await page.getByTestId('design-attempt').nth(1).click();
    await page.getByTestId('design-verdicts').waitFor();
    await page.locator('[data-testid=design-attempt-detail] .view-lines', { hasText: 'class LuckySevenEnv' }).waitFor();
    const grounding = page.getByTestId('design-grounding');
    const docText = (await grounding.locator('pre').textContent())!;
    expect(['Binary search', 'A double-entry ledger'].some((s) => docText.startsWith(s))).toBe(true);
    // The document shown is the one the prompt sent carried, beside the game it grounded.
    const sent = msgs(server.requests.filter((b) => msgs(b)[0]!.role === 'system' && !msgs(b)[1]!.content.startsWith('Environment code:'))[1]!);
    expect(sent[1]!.content).toContain(`<REFERENCE_DOCUMENT>\n${docText}\n</REFERENCE_DOCUMENT>`);
    const box = await grounding.boundingBox();
    const code = await page.locator('[data-testid=design-attempt-detail] .design-code').boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(code!.x + 1);
    expect(Math.abs(box!.y - code!.y)).toBeLessThan(4);
    await page.getByTestId('design-attempt-detail').scrollIntoViewIfNeeded();
    await screenshot(page, 'design-spade-grounding-1440');

    await page.setViewportSize({ width: 1024, height: 768 });
    await page.getByTestId('design-attempt-detail').scrollIntoViewIfNeeded();
    const box2 = await grounding.boundingBox();
    const code2 = await page.locator('[data-testid=design-attempt-detail] .design-code').boundingBox();
    expect(box2!.x + box2!.width).toBeLessThanOrEqual(code2!.x + 1);
    await screenshot(page, 'design-spade-grounding-1024');
    await page.getByTestId('design-prompts-from').scrollIntoViewIfNeeded();
    await screenshot(page, 'design-spade-round-1024');
    expect(ctx.errors).toEqual([]);
  }, 120_000);
});
