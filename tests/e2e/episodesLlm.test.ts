import { afterEach, describe, expect, it } from 'vitest';
import { openWorkbench, pickEpisodeEnv, screenshot, type E2EContext } from '../helpers/browser';
import { startStandIn, type StandIn } from '../helpers/standInOpenAi';
import type { Services } from '../../core/services/services';
import { join } from 'node:path';
import { buildSpec } from '../../core/jobs/launch';
import { heldHere } from '../helpers/sockets';
import { ciServices, SERVICES_MISSING } from '../integration/jobs/helpers';

let ctx: E2EContext | null = null;
let server: StandIn | null = null;
afterEach(async () => {
  await ctx?.close();
  ctx = null;
  await server?.close();
  server = null;
});

async function waitForEnv(s: Services, className: string): Promise<string> {
  for (let i = 0; i < 300; i++) {
    const r = s.db.prepare('SELECT head_hash AS h FROM environments WHERE name = ?').get(className) as { h: string } | undefined;
    if (r) return r.h;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`${className} never arrived in the library`);
}

/** The stand-in's "skill": a breadth-first walk from S to G on the grid in the first message. */
function shortestPath(text: string): string[] {
  const rows = text.split('\n').filter((l) => /^[SG.#]{5}$/.test(l));
  const at = (ch: string) => rows.flatMap((r, i) => [...r].map((c, j) => (c === ch ? [i, j] : null))).find(Boolean)!;
  const [s, g] = [at('S'), at('G')];
  const moves: [string, number, number][] = [['up', -1, 0], ['down', 1, 0], ['left', 0, -1], ['right', 0, 1]];
  const prev = new Map<string, [string, string] | null>([[String(s), null]]);
  const queue = [s];
  while (queue.length) {
    const [r, c] = queue.shift()!;
    for (const [name, dr, dc] of moves) {
      const n = [r! + dr, c! + dc];
      if (n[0]! < 0 || n[1]! < 0 || n[0]! > 4 || n[1]! > 4 || rows[n[0]!]![n[1]!] === '#' || prev.has(String(n))) continue;
      prev.set(String(n), [String([r, c]), name]);
      queue.push(n);
    }
  }
  const path: string[] = [];
  for (let cur = String(g); prev.get(cur); cur = prev.get(cur)![0]) path.unshift(prev.get(cur)![1]);
  return path;
}

describe('the LLM policy in Chromium (stand-in model server)', () => {
  it('plays hinted and unhinted arms with a served model, turn by turn, with SPADE regret, histogram and frontier', async () => {
    // The stand-in reads the grid from the first message only when hinted: hinted it walks the
    // solution, unhinted it walks into a wall.
    server = await startStandIn((b) => {
      const msgs = b.messages as { role: string; content: string }[];
      const k = msgs.filter((m) => m.role === 'assistant').length;
      const hinted = msgs[0]!.content.includes('HINT: ');
      const moves = hinted ? shortestPath(msgs[0]!.content) : ['up'];
      return { content: `Turn ${k + 1}: I move \\boxed{${moves[k % moves.length] ?? 'up'}}`, delayMs: 5 };
    });
    ctx = await openWorkbench();
    const { page } = ctx;
    await waitForEnv(ctx.app.services, 'GridWalkEnv');
    await page.getByRole('button', { name: 'Episodes', exact: true }).click();
    await pickEpisodeEnv(page, 'GridWalkEnv');
    await page.getByTestId('ep-llm').click();
    await page.getByTestId('llm-view').waitFor();
    await page.getByTestId('llm-url').fill(server.url);
    await page.getByTestId('llm-model').fill('stand-in-model');
    await page.getByTestId('llm-seeds').fill('3');
    await page.getByTestId('llm-play').click();
    await page.getByTestId('llm-regret').waitFor({ timeout: 120_000 });
    const rHint = Number(await page.getByTestId('llm-r-hint').textContent());
    const rNo = Number(await page.getByTestId('llm-r-no-hint').textContent());
    expect(rHint).toBe(1);
    expect(Number(await page.getByTestId('llm-regret-value').textContent())).toBeCloseTo(rHint - rNo, 3);
    await page.getByTestId('llm-col-hint').waitFor();
    expect(await page.locator('[data-testid=llm-col-plain] [data-testid=llm-action]').first().textContent()).toBe('\\boxed{up}');
    expect(await page.locator('[data-testid=llm-col-hint] [data-testid=llm-action]').count()).toBeGreaterThanOrEqual(5);
    await page.getByTestId('llm-histogram').waitFor();
    await page.getByTestId('llm-frontier').waitFor();
    // the messages sent carry SPADE's template and the hint in the hinted arm only
    expect(server.requests.some((b) => (b.messages as { content: string }[])[0]!.content.includes('\n\nHINT: '))).toBe(true);
    expect(server.requests.every((b) => (b.messages as { content: string }[])[0]!.content.startsWith('You are playing a language game.'))).toBe(true);
    await screenshot(page, 'episodes-llm');
    expect(ctx.errors).toEqual([]);
  });

  it('plays a library search with a budget and shows regret per environment and per skill', async () => {
    server = await startStandIn(() => ({ content: 'I answer \\boxed{42}', delayMs: 5 }));
    ctx = await openWorkbench();
    const { page } = ctx;
    await waitForEnv(ctx.app.services, 'GridWalkEnv');
    await page.getByRole('button', { name: 'Episodes', exact: true }).click();
    await pickEpisodeEnv(page, 'GridWalkEnv');
    await page.getByTestId('ep-llm').click();
    await page.getByTestId('llm-url').fill(server.url);
    await page.getByTestId('llm-model').fill('stand-in-model');
    await page.getByTestId('llm-scope-search').check();
    await page.getByTestId('llm-query').fill('arithmetic');
    await page.locator('[data-testid=llm-view] input[placeholder="30"]').fill('3');
    await page.getByTestId('llm-play').click();
    await page.waitForSelector('[data-testid=llm-skills], [data-testid=llm-view] .ep-error', { timeout: 150_000 });
    const errs = page.locator('[data-testid=llm-view] .ep-error');
    expect(await errs.count(), (await errs.count()) ? ((await errs.first().textContent()) ?? '') : '').toBe(0);
    const rows = await page.locator('[data-testid=llm-envs] tbody tr').count();
    expect(rows).toBeGreaterThanOrEqual(2);
    // every episode ran at most the budget of 3 turns
    expect(server.requests.every((b) => (b.messages as { role: string }[]).filter((m) => m.role === 'assistant').length < 3)).toBe(true);
    await screenshot(page, 'episodes-llm-selection');
    expect(ctx.errors).toEqual([]);
  });

  it('steps one model turn at a time in the episode view, cancels a slow one, then runs the model until the episode ends', async () => {
    /** While set, the model takes a minute to answer: a turn to cancel. */
    let slow = false;
    server = await startStandIn((b) => {
      const msgs = b.messages as { role: string; content: string }[];
      const k = msgs.filter((m) => m.role === 'assistant').length;
      return { content: `Turn ${k + 1}: \\boxed{${shortestPath(msgs[0]!.content)[k] ?? 'up'}}`, delayMs: slow ? 60_000 : 5 };
    });
    ctx = await openWorkbench();
    const { page } = ctx;
    await waitForEnv(ctx.app.services, 'GridWalkEnv');
    await page.evaluate((url) => localStorage.setItem('spade.llm.endpoint', JSON.stringify({ baseUrl: url, model: 'stand-in-model', topK: null })), server.url);
    await page.getByRole('button', { name: 'Episodes', exact: true }).click();
    await pickEpisodeEnv(page, 'GridWalkEnv');
    await page.getByTestId('ep-hint').check();
    await page.getByTestId('ep-open').click();
    await page.waitForSelector('[data-testid=episode-view][data-steps="1"]', { timeout: 60_000 });
    await page.getByTestId('model-turn').click();
    await page.waitForSelector('[data-testid=episode-view][data-steps="2"]');
    expect(await page.getByTestId('model-turns').textContent()).toContain('model turn 1');

    // A model that does not answer: the turn shows progress, and Cancel drops it with nothing recorded.
    const stepRows = () => (ctx!.app.services.db.prepare('SELECT COUNT(*) AS n FROM episode_steps').get() as { n: number }).n;
    const rows = stepRows();
    slow = true;
    const asked = server.requests.length;
    await page.getByTestId('model-turn').click();
    const line = page.getByTestId('ep-work');
    await line.waitFor();
    expect(await line.textContent()).toContain('Model turn');
    await expect.poll(() => server!.requests.length, { timeout: 30_000 }).toBe(asked + 1); // vitest's default is 1 s
    await screenshot(page, 'cancel-model-turn');
    await line.getByTestId('ep-work-cancel').click();
    await line.waitFor({ state: 'detached' });
    expect(await page.getByTestId('ep-note').textContent()).toContain('Model turn cancelled');
    expect(stepRows()).toBe(rows);
    await page.waitForSelector('[data-testid=episode-view][data-steps="2"]');
    slow = false;

    await page.getByTestId('model-run').click();
    await page.waitForSelector('[data-testid=run-result]:has-text("the episode is over")', { timeout: 60_000 });
    expect(await page.getByTestId('episode-return').textContent()).toBe('1');
    expect(server.requests[0]!.messages).toHaveLength(1);
    expect((server.requests[0]!.messages as { content: string }[])[0]!.content).toContain('\n\nHINT: ');
    expect(server.requests[0]).not.toHaveProperty('top_k');
    await screenshot(page, 'episodes-model-turns');
    expect(ctx.errors).toEqual([]);
  });
});

const ci = ciServices();
describe('the LLM policy through a job\'s SSH tunnel in Chromium (real sshd, stand-in model server)', () => {
  it.skipIf(!ci)(`lists the jobs that have SSH and plays through the chosen one's connection${ci ? '' : ` (skipped: ${SERVICES_MISSING})`}`, async () => {
    // Per request: did its connection come from this process (direct) or from sshd (tunnel)?
    const direct: boolean[] = [];
    let port = 0;
    server = await startStandIn((b, _n, c) => {
      direct.push(heldHere(c.remotePort, port));
      const msgs = b.messages as { role: string; content: string }[];
      const k = msgs.filter((m) => m.role === 'assistant').length;
      const moves = msgs[0]!.content.includes('HINT: ') ? shortestPath(msgs[0]!.content) : ['up'];
      return { content: `Turn ${k + 1}: I move \\boxed{${moves[k % moves.length] ?? 'up'}}`, delayMs: 5 };
    });
    port = Number(new URL(server.url).port);
    ctx = await openWorkbench();
    const { page } = ctx;
    const manager = ctx.app.services.jobs.manager;
    const ssh = { host: ci!.host, port: ci!.port, user: ci!.user, identityFile: ci!.key, knownHostsFile: ci!.knownHosts };
    // The job a model server would run in; the endpoint URL is the server as its SSH host sees it.
    const job = await manager.submit(buildSpec({ name: 'sglang on node', backend: 'ssh', ssh, workdir: join(ctx.dataDir, 'remote'), command: ['sleep', '300'], poolDir: null }));
    await manager.submit(buildSpec({ name: 'local only', backend: 'local', workdir: join(ctx.dataDir, 'local'), command: ['true'], poolDir: null }));
    try {
      await waitForEnv(ctx.app.services, 'GridWalkEnv');
      await page.getByRole('button', { name: 'Episodes', exact: true }).click();
      await pickEpisodeEnv(page, 'GridWalkEnv');
      await page.getByTestId('ep-llm').click();
      await page.getByTestId('llm-url').fill(server.url);
      await page.getByTestId('llm-model').fill('stand-in-model');
      await page.waitForSelector(`[data-testid=llm-via] option[value="${job.id}"]`, { state: 'attached' });
      const options = await page.locator('[data-testid=llm-via] option').allTextContents();
      expect(options).toHaveLength(2);
      expect(options[0]).toBe('this machine (direct)');
      expect(options[1]).toMatch(/^job sglang on node · .*@127\.0\.0\.1:\d+ · /);
      await page.getByTestId('llm-via').selectOption(job.id);
      await page.getByTestId('llm-play').click();
      await page.waitForSelector('[data-testid=llm-regret], [data-testid=llm-view] .ep-error', { timeout: 120_000 });
      const errs = page.locator('[data-testid=llm-view] .ep-error');
      expect(await errs.count(), (await errs.count()) ? ((await errs.first().textContent()) ?? '') : '').toBe(0);
      expect(Number(await page.getByTestId('llm-r-hint').textContent())).toBe(1);
      expect(server.requests.length).toBeGreaterThanOrEqual(5);
      expect(direct).toEqual(server.requests.map(() => false));
      expect(manager.connection(ssh).forwards).toBe(server.requests.length);
      await screenshot(page, 'episodes-llm-tunnel');
      expect(ctx.errors).toEqual([]);
    } finally {
      await manager.stop(job.id).catch(() => undefined);
    }
  });
});
