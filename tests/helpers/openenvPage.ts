import type { Page } from 'playwright-core';
import { runCommand, waitForPack, type E2EContext } from './browser';

/** The app's own OpenEnv server over the seed pack's guessing games, hint both: a URL to open. */
export async function serveGuessingGames(ctx: E2EContext): Promise<string> {
  await waitForPack(ctx.app.services, 20);
  const served = await ctx.app.services.openenv.start({ selection: 'guess', port: 0, hint: 'both', maxTurns: 6, concurrency: 8, seeds: 2, seedStart: 0 });
  return served.url!;
}

/** The OpenEnv URL page, with `url` typed in. */
export async function openUrlPage(page: Page, url: string): Promise<void> {
  await runCommand(page, 'Open OpenEnv URL');
  await page.getByTestId('remote-env-view').waitFor();
  await page.getByTestId('remote-url').fill(url);
}
