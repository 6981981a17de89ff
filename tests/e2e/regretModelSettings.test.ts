import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredRegretOptions } from '../../core/runs/regretSweep';
import { getSweep } from '../../core/sweeps/sweepStore';
import { openWorkbench, runCommand, screenshot, waitForPack, type E2EContext } from '../helpers/browser';
import { startStandIn, type StandIn } from '../helpers/standInOpenAi';

// Chromium against the web host: a regret sweep with a served model whose server wants an API key
// (the stand-in OpenAI server: no model runs here), the key held as the session's secret as Play
// with a model keeps it. The sweep is started with model settings other than SPADE's from the
// form's collapsed "Model settings"; they are recorded with the sweep, shown on its card, and a
// cancelled sweep resumed from the card plays with the same settings and key.

const KEY = 'sk-standin-e2e-41d7c0a9';
let ctx: E2EContext;
let server: StandIn;

function game(cls: string): string {
  return `# kappapool: a game of the model settings e2e test
class ${cls}:
    def reset(self, seed=None):
        return "Say \\\\boxed{7}", {}

    def solution(self):
        return "7"

    def step(self, action):
        return "done", 1.0 if "7" in action else 0.0, True, False, {}
`;
}

beforeAll(async () => {
  ctx = await openWorkbench({ viewport: { width: 1440, height: 900 } });
  await waitForPack(ctx.app.services, 21);
  const dir = join(ctx.dataDir, 'kappa');
  mkdirSync(dir, { recursive: true });
  for (const [file, cls] of [['kappa_a', 'KappaAEnv'], ['kappa_b', 'KappaBEnv']] as const) {
    writeFileSync(join(dir, `${file}.py`), game(cls));
    writeFileSync(join(dir, `${file}_hint.txt`), 'Say seven.');
  }
  if (!(await ctx.app.services.memory.startImport([dir]).done)) throw new Error('the kappa games were not imported');
  // Slow enough answers that the sweep can be cancelled mid-way.
  server = await startStandIn(() => ({ content: 'So \\boxed{7}', delayMs: 250 }), { apiKey: KEY });
  const { page } = ctx;
  // The endpoint as Play with a model keeps it, its key named by a secret of the session (set below).
  await page.evaluate((url) => localStorage.setItem('spade.llm.endpoint', JSON.stringify({ baseUrl: url, model: 'stand-in-kappa', apiKeySecret: 'KAPPA_API_KEY', temperature: 1, topP: 0.95, topK: 20, maxTokens: 8192, thinking: null, concurrency: 2, via: null })), server.url);
  await runCommand(page, 'regret sweep over a pool');
  await page.getByTestId('regret-sweeps').waitFor();
}, 60_000);

afterAll(async () => {
  await ctx?.close();
  await server?.close();
});

describe('a regret sweep with a served model: model settings and its key', () => {
  it('records settings other than SPADE’s, shows them, and a resume keeps them and the key', async () => {
    const { page } = ctx;
    const section = page.getByTestId('regret-sweeps');
    await section.getByTestId('regret-policy').selectOption('model');
    expect(await section.getByTestId('regret-model').inputValue()).toBe(`stand-in-kappa @ ${server.url}`);
    const form = section.getByTestId('regret-model-settings-form');
    // Collapsed until asked for; open, each field shows the value it keeps when left empty (SPADE's).
    expect(await form.getAttribute('open')).toBeNull();
    await form.locator('summary').click();
    const field = (k: string) => form.getByTestId(`regret-setting-${k}`);
    expect(await Promise.all(['turnTimeoutSec', 'retries', 'temperature', 'maxTokens'].map((k) => field(k).getAttribute('placeholder')))).toEqual(['300', '4', '1', '8192']);
    const keyLine = form.getByTestId('regret-key');
    await keyLine.filter({ hasText: 'not held' }).waitFor();
    expect(await keyLine.textContent()).toBe('API key: secret KAPPA_API_KEY, not held in this session: set it in Episodes → Play with a model.');
    await screenshot(page, 'regret-model-settings-no-key-1440');
    // The key put in the store Play's jobs.setSecret puts it in; the line says so at the next opening.
    ctx.app.services.jobs.secrets.set('KAPPA_API_KEY', KEY);
    await form.locator('summary').click();
    await form.locator('summary').click();
    await keyLine.filter({ hasText: 'held in this session (sent' }).waitFor();
    expect(await keyLine.textContent()).toBe('API key: secret KAPPA_API_KEY, held in this session (sent as a bearer token).');
    await section.getByTestId('regret-query').fill('kappapool');
    // Paired seeds, the labelled option (SPADE's estimator, the default, has its own counts).
    await section.getByTestId('regret-estimator').selectOption('paired');
    await section.getByTestId('regret-seeds').fill('3');
    await screenshot(page, 'regret-model-settings-1440');

    // Out of range: the call's schema refuses it in words, and no sweep starts.
    await field('retries').fill('99');
    await section.getByTestId('regret-start').click();
    await section.getByTestId('regret-error').waitFor();
    expect(await section.getByTestId('regret-error').textContent()).toBe('The retries must be at most 20.');
    expect(await section.getByTestId('regret-sweep').count()).toBe(0);

    await field('turnTimeoutSec').fill('20');
    await field('retries').fill('1');
    await field('temperature').fill('0.25');
    await field('maxTokens').fill('48');
    expect(await form.locator('summary').textContent()).toBe('Model settings (4 changed)');
    await section.getByTestId('regret-start').click();
    const sweep = section.getByTestId('regret-sweep').first();
    await sweep.getByTestId('regret-progress').waitFor();
    const sweepId = (await sweep.getAttribute('data-sweep'))!;
    const shown = 'temperature 0.25 · top-p 0.95 · top-k 20 · max tokens 48 · 20 s a turn · 1 retry · key: secret KAPPA_API_KEY';
    expect(await sweep.getByTestId('regret-model-settings').textContent()).toBe(shown);

    // Cancelled once some episodes are in: what arrived stays.
    await page.waitForFunction(() => /[1-9]\d* \/ 12/.test(document.querySelector('[data-testid=regret-progress]')?.textContent ?? ''), undefined, { timeout: 20_000 });
    await sweep.getByTestId('regret-progress-cancel').click();
    await page.waitForFunction((id) => document.querySelector(`[data-testid=regret-sweep][data-sweep="${id}"]`)?.getAttribute('data-state') === 'cancelled', sweepId, { timeout: 20_000 });
    const kept = Number(/\((\d+)\/12\)/.exec((await sweep.getByTestId('regret-resume').textContent()) ?? '')?.[1]);
    expect(kept).toBeLessThan(12);
    const before = server.requests.length;

    await sweep.getByTestId('regret-resume').click();
    await page.waitForFunction((id) => document.querySelector(`[data-testid=regret-sweep][data-sweep="${id}"]`)?.getAttribute('data-state') === 'done', sweepId, { timeout: 20_000 });
    expect(await sweep.getByTestId('regret-sweep-summary').textContent()).toContain('12 / 12 episodes · 0 failed');
    expect(await sweep.getByTestId('regret-model-settings').textContent()).toBe(shown);

    // What the sweep keeps: the settings, and the key by its secret's name only.
    const stored = getSweep(ctx.app.services.db, sweepId)!.options as unknown as StoredRegretOptions;
    expect(stored.regret.model).toMatchObject({ temperature: 0.25, maxTokens: 48, turnTimeoutMs: 20_000, retries: 1, apiKeyEnv: 'KAPPA_API_KEY', topP: 0.95, topK: 20 });
    expect(JSON.stringify(stored)).not.toContain(KEY);
    // The resumed episodes asked the server with the same settings and the key (the first request is the key check).
    const after = server.requests.slice(before + 1);
    expect(after.length).toBeGreaterThanOrEqual(12 - kept);
    expect(after.every((b) => b.temperature === 0.25 && b.max_tokens === 48)).toBe(true);
    expect(server.auth.slice(before).every((a) => a === `Bearer ${KEY}`)).toBe(true);

    // A sweep that ends here opens its report.
    await sweep.getByTestId('regret-report').getByTestId('regret-chart').locator('canvas').waitFor();
    await screenshot(page, 'regret-model-settings-done-1440');
    await page.setViewportSize({ width: 1024, height: 768 });
    await section.scrollIntoViewIfNeeded();
    await screenshot(page, 'regret-model-settings-1024');
    expect(ctx.errors).toEqual([]);
  }, 40_000);
});
