import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import type { Backend } from '../../core/api';
import { createHandlers } from '../../core/handlers';
import { createDispatcher } from '../../core/server/dispatcher';
import { createInProcessBackend } from '../../core/server/inProcess';
import { openFromLibrary, openWorkbench, screenshot, type E2EContext } from '../helpers/browser';

// Issue 31 as a person sees it: the audit of a game with a syntax error shows SPADE's load failure
// and a clean sandbox; the audit of a game that prints 50 MB shows output-flood with the byte count.
let ctx: E2EContext | null = null;
let api: Backend | null = null;
afterEach(async () => {
  api?.close();
  api = null;
  await ctx?.close();
  ctx = null;
});

const BROKEN = 'class BrokenSyntaxEnv:\n    def reset(self, seed=None)\n        return "x", {}\n';
const NOISY = String.raw`import sys

class FloodingEnv:
    def reset(self, seed=None):
        self.turn = 0
        if seed == 42:
            for _ in range(25):
                print("x" * (1 << 20))
                print("y" * (1 << 20), file=sys.stderr)
        return "Say done", {}

    def step(self, action):
        self.turn += 1
        if action == "\\boxed{done}":
            return "right", 1.0, True, False, {}
        return "no", 0.0, False, self.turn >= 5, {}

    def solution(self):
        return "done"
`;

async function auditOf(page: Page, name: string): Promise<ReturnType<Page['locator']>> {
  await openFromLibrary(page, name);
  await page.locator('.tab-pane:not([hidden]) [data-testid=environment-view] [data-testid=env-action-audit]').click();
  const view = page.locator('.tab-pane:not([hidden]) [data-testid=audit-view]');
  await view.waitFor();
  await view.getByRole('button', { name: 'Run audit' }).click();
  await view.locator('li[data-check="sandbox"]').waitFor({ timeout: 120_000 });
  return view;
}

describe('issue 31 in Chromium', () => {
  it('a syntax error fails spade.exec alone; a 50 MB flood shows output-flood with its byte count', async () => {
    ctx = await openWorkbench();
    api = createInProcessBackend(createDispatcher(createHandlers(ctx.app.services)), ctx.app.services.events);
    for (;;) {
      const st = await api.call('memory.importStatus', { jobId: 'seed-pack' }).catch(() => null);
      if (!st || st.phase === 'done' || st.phase === 'failed') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await api.call('editor.create', { source: BROKEN, origin: 'paste', name: 'BrokenSyntaxEnv' });
    await api.call('editor.create', { source: NOISY, origin: 'paste', name: 'FloodingEnv' });
    const { page } = ctx;

    const broken = await auditOf(page, 'BrokenSyntaxEnv');
    const exec = broken.locator('li[data-check="spade.exec"]');
    expect(await exec.getAttribute('class')).toContain('fail');
    expect(await exec.textContent()).toContain('Syntax error in generated game code');
    expect(await broken.locator('li[data-check="sandbox"]').getAttribute('class')).toContain('pass');
    expect(await broken.locator('li[data-check].fail').count()).toBe(1);
    await screenshot(page, 'audit-syntax-error');
    await broken.locator('li[data-check="sandbox"]').scrollIntoViewIfNeeded();
    await screenshot(page, 'audit-syntax-error-sandbox');

    const noisy = await auditOf(page, 'FloodingEnv');
    const flood = noisy.locator('li[data-check="output-flood"]');
    expect(await flood.getAttribute('class')).toContain('warn');
    expect(await flood.textContent()).toMatch(/wrote \d+ bytes \(\d+\.\d MiB\) to stdout and stderr/);
    await flood.scrollIntoViewIfNeeded();
    await screenshot(page, 'audit-output-flood');
    expect(await noisy.locator('li[data-check].fail').allTextContents()).toEqual([]);
    expect(ctx.errors).toEqual([]);
  });
});
