import { expect } from 'vitest';
import type { Page } from 'playwright-core';
import type { E2EContext } from './browser';

/** Shared by the e2e tests of progress + Cancel: what the engine holds, read for assertions only. */

/** Picks an environment in the Episodes panel by searching its name. */
export async function pickEnv(page: Page, name: string, hash: string): Promise<void> {
  await page.getByTestId('ep-env-search').fill(name);
  await page.locator(`[data-testid=ep-env] option[value="${hash}"]`).waitFor({ state: 'attached' });
  await page.getByTestId('ep-env').selectOption(hash);
}

export function episodeCount(ctx: E2EContext): number {
  return (ctx.app.services.db.prepare('SELECT COUNT(*) AS n FROM episodes').get() as { n: number }).n;
}

/** Every recorded step in the database (any episode): a Cancel must add none. */
export function stepRows(ctx: E2EContext): number {
  return (ctx.app.services.db.prepare('SELECT COUNT(*) AS n FROM episode_steps').get() as { n: number }).n;
}

/** Waits (no time asserted) until the engine holds no session and no interpreter works on one. */
export async function engineIdle(ctx: E2EContext): Promise<void> {
  const rt = ctx.app.services.runtime;
  await expect.poll(() => ({ sessions: rt.status().sessions, busy: rt.status().pool.busy }), { timeout: 30_000, interval: 100 }).toEqual({ sessions: 0, busy: 0 });
}
