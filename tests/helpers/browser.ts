import { expect } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startApp, type RunningApp } from '../../core/host/startApp';
import type { Services } from '../../core/services/services';
import { tempDir } from './tmp';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const ARTIFACTS = join(process.cwd(), 'tests', 'e2e', 'artifacts');

/** Debian's Chromium, headless, with the background traffic that this closed network refuses turned off. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

export interface E2EContext {
  app: RunningApp;
  dataDir: string;
  browser: Browser;
  page: Page;
  errors: string[];
  close(): Promise<void>;
}

/** A web host on a fresh data directory and a page opened on it; page errors are collected. */
export async function openWorkbench(
  opts: { dataDir?: string; /** 'thread' unless a test asks for the app's own worker (then ctx.app.services is not readable). */ engine?: 'thread' | 'worker'; colorScheme?: 'light' | 'dark'; viewport?: { width: number; height: number }; /** Runs in the page before the app's own scripts. */ init?: () => void } = {},
): Promise<E2EContext> {
  const tmp = opts.dataDir ? null : tempDir('spade-e2e-');
  const dataDir = opts.dataDir ?? tmp!.dir;
  // The engine behind the same messages on this thread: the tests read its services (ctx.app.services).
  const app = await startApp({ dataDir, port: 0, engine: opts.engine ?? 'thread' });
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: opts.viewport ?? { width: 1400, height: 860 }, colorScheme: opts.colorScheme ?? 'light' });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  if (opts.init) await page.addInitScript(opts.init);
  await page.goto(app.host.url);
  await page.waitForSelector('[data-testid=workbench]');
  await page.waitForSelector('[data-testid=backend-status]:has-text("connected")');
  return {
    app,
    dataDir,
    browser,
    page,
    errors,
    async close() {
      await browser.close();
      await app.close();
      tmp?.cleanup();
    },
  };
}

/**
 * An init script that holds back the app's five-second health poll (renderer/src/main.tsx) until the
 * test fires it with pollHealth(page), so that between two polls the test sees only what the status
 * bar learns from events (a poll landing by chance would hide a bar that does not follow the work).
 */
export function heldHealthPoll(): void {
  // Runs in the page; this file is typed without the DOM, so the page's globals are named loosely.
  type Timers = { setInterval(fn: unknown, ms?: number, ...rest: unknown[]): number; __pollHealth?: () => void };
  const w = globalThis as unknown as Timers;
  const real = w.setInterval.bind(globalThis);
  w.setInterval = (fn, ms, ...rest) => {
    if (ms !== 5000 || typeof fn !== 'function') return real(fn, ms, ...rest);
    w.__pollHealth = fn as () => void;
    return 0;
  };
}

/** Fires the health poll heldHealthPoll held back. */
export async function pollHealth(page: Page): Promise<void> {
  await page.evaluate(() => (globalThis as unknown as { __pollHealth: () => void }).__pollHealth());
}

/** An init script that keeps every frame the page sends on its WebSocket (the calls to the engine), for sentCalls. */
export function recordSocketFrames(): void {
  const w = globalThis as unknown as { WebSocket: { prototype: { send(d: unknown): void } }; __frames?: string[] };
  const send = w.WebSocket.prototype.send;
  w.WebSocket.prototype.send = function (this: unknown, d: unknown) {
    if (typeof d === 'string') (w.__frames ??= []).push(d);
    send.call(this, d);
  };
}

/** The frames recordSocketFrames kept that name this call, and forgets every frame kept so far when `reset`. */
export async function sentCalls(page: Page, call: string, reset = false): Promise<string[]> {
  return page.evaluate(
    ([c, r]) => {
      const w = globalThis as unknown as { __frames?: string[] };
      const got = (w.__frames ?? []).filter((f) => f.includes(`"${c}"`));
      if (r) w.__frames = [];
      return got;
    },
    [call, reset] as const,
  );
}

/** Runs a command from the palette (Ctrl+Shift+P), chosen by typing `words`, as a person does. */
export async function runCommand(page: Page, words: string): Promise<void> {
  await page.keyboard.press('Control+Shift+P');
  await page.getByRole('dialog', { name: 'Command palette' }).waitFor();
  await page.keyboard.type(words);
  await page.keyboard.press('Enter');
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path });
  return path;
}

/** Waits (up to 30 s) until the library holds at least n environments: the seed pack imports as the app starts. */
export async function waitForPack(s: Services, n: number): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if ((s.db.prepare('SELECT COUNT(*) AS n FROM environments').get() as { n: number }).n >= n) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the seed pack never arrived');
}

/**
 * Opens a library environment as a person does: search, click its row, see its tab. The row is clicked
 * only once the list has settled on the search's answer (two reads 250 ms apart alike, the row among
 * them): under load a row clicked while the list re-rendered opened nothing, and the test waited in vain
 * for the environment view (auditFindings in a full run, 30 s).
 */
export async function openFromLibrary(page: Page, search: string, row = search): Promise<void> {
  await page.getByTestId('library-search').fill(search);
  let last = '';
  await expect.poll(async () => {
    const now = JSON.stringify(await page.locator('[data-testid=library-row]').allTextContents());
    const settled = now === last && now.includes(row);
    last = now;
    return settled;
  }, { timeout: 60_000, interval: 250 }).toBe(true);
  await page.locator('[data-testid=library-row]', { hasText: row }).first().click();
  await page.locator('.tab.active', { hasText: row }).waitFor({ timeout: 60_000 });
}

/**
 * Picks an environment on the Episodes page by searching for it. The pick waits until the first option is
 * that environment: with "any option at all" a full run picked whatever came first in the
 * unfiltered list, and its game was not the one the test's model knew how to play (episodesLlm).
 */
export async function pickEpisodeEnv(page: Page, name: string): Promise<void> {
  await page.getByTestId('ep-env-search').fill(name);
  const first = page.locator('[data-testid=ep-env] option').first();
  await expect.poll(async () => ((await first.count()) ? await first.textContent() : '') ?? '', { timeout: 30_000 }).toContain(name);
  await page.getByTestId('ep-env').selectOption({ index: 0 });
}
