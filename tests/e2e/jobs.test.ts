import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openWorkbench, screenshot, type E2EContext } from '../helpers/browser';
import { ciRay, ciServices, filesContaining, rayRest, SERVICES_MISSING } from '../integration/jobs/helpers';

const SECRET = 'sk-e2e-SECRET-39f1c0aa77';

/** The same page at the two widths people use, one screenshot each. */
async function atWidths(page: E2EContext['page'], name: string): Promise<void> {
  for (const [width, height] of [[1024, 768], [1440, 900]] as const) {
    await page.setViewportSize({ width, height });
    await screenshot(page, `${name}-${width}`);
  }
  await page.setViewportSize({ width: 1400, height: 860 });
}

describe('jobs in the workbench (Chromium)', () => {
  let ctx: E2EContext;
  beforeAll(async () => {
    ctx = await openWorkbench();
  });
  afterAll(async () => {
    await ctx?.close();
  });

  async function launch(fill: (p: E2EContext['page']) => Promise<void>): Promise<void> {
    const { page } = ctx;
    await page.click('[data-testid=jobs-new]');
    await page.waitForSelector('[data-testid=jobs-launch]');
    await page.waitForSelector('[data-testid=jobs-recipe] option[value=example-run]', { state: 'attached' });
    await fill(page);
  }

  it('launches the example run locally, follows its log, charts its metrics and brings environments into memory', async () => {
    const { page, dataDir, app } = ctx;
    await page.click('button[aria-label=Jobs]');
    await page.waitForSelector('[data-testid=jobs-panel]');
    await launch(async (p) => {
      await p.fill('[data-testid=jobs-name]', 'local example');
      await p.fill('[data-testid=jobs-workdir]', join(dataDir, 'runs'));
      await p.fill('[data-testid=jobs-env]', 'SPADE_STEP_DELAY=0.2');
      await p.fill('[data-testid=jobs-secret-name]', 'WANDB_API_KEY');
      await p.fill('[data-testid=jobs-secret-value]', SECRET);
      await p.click('text=Set');
      await p.waitForSelector('.jobs-chip:has-text("WANDB_API_KEY") input:checked');
      await p.click('[data-testid=jobs-submit]');
    });
    await page.waitForSelector('[data-testid=job-view]');
    await page.waitForSelector('[data-testid=job-view][data-state=succeeded]', { timeout: 120_000 });
    await page.waitForFunction(() => Number(document.querySelector('[data-testid=jobs-log-count]')?.getAttribute('data-lines')) > 10);
    await page.waitForSelector('[data-testid=jobs-chart][data-key="env/avg_regret"][data-points="4"]');
    const charts = await page.$$eval('[data-testid=jobs-chart]', (els) => els.map((e) => e.getAttribute('data-key')));
    expect(charts).toEqual(expect.arrayContaining(['rollout/actor_win_rate', 'env/avg_regret', 'env/avg_r_hint', 'env/avg_r_no_hint']));
    const termText = await page.$eval('[data-testid=jobs-term]', (e) => e.textContent ?? '');
    expect(termText).toContain('spade-example-run: done');
    // Search finds text in the log.
    await page.fill('[data-testid=jobs-log-search]', 'demonstration policy');
    await page.press('[data-testid=jobs-log-search]', 'Enter');
    expect(await page.getAttribute('[data-testid=jobs-log-search]', 'data-found')).toBe('true');
    const job = app.services.jobs.manager.list()[0]!;
    const envs = await (async () => {
      for (let i = 0; i < 100; i++) {
        const r = app.services.db.prepare('SELECT COUNT(DISTINCT env_id) AS n FROM env_sources WHERE job_id = ?').get(job.id) as { n: number };
        if (r.n > 0) return r.n;
        await new Promise((res) => setTimeout(res, 200));
      }
      return 0;
    })();
    expect(envs).toBeGreaterThan(0);
    // It ran with the native runtime's Python: the numpy seed game's variant is a new environment,
    // and what came back is new games, not the seed games written back.
    expect(app.services.jobs.manager.readLog(job.id, 0, 1 << 20).text).toMatch(/^python: \S+ \(numpy \d/m);
    const variant = app.services.db
      .prepare("SELECT rejected, meta FROM environments WHERE job_id = ? AND name GLOB 'HiddenVector*TurnsEnv'")
      .get(job.id) as { rejected: number; meta: string } | undefined;
    expect(variant?.rejected).toBe(0);
    expect(JSON.parse(variant!.meta).spec.parents[0].name).toBe('HiddenVectorEnv');
    await page.waitForFunction(() => Number(/Back in the library: (\d+) new/.exec(document.querySelector('[data-testid=job-results-back]')?.textContent ?? '')?.[1]) >= 12, undefined, { timeout: 30_000 });
    await atWidths(page, 'jobs-local-example');
    // The new environment's page says which job made it and from which seed game.
    await page.click('button[aria-label=Library]');
    await page.fill('[data-testid=library-search]', 'HiddenVector');
    await page.click('[data-testid=library-row]:has-text("TurnsEnv")');
    const madeBy = await page.waitForSelector('[data-testid=environment-view] [data-testid=env-made-by]:has([data-testid=env-parent] button)');
    expect(await madeBy.textContent()).toMatch(/^Made by job local example in rollout 3from HiddenVectorEnv [0-9a-f]{12}$/);
    await page.waitForSelector('[data-testid=environment-view] [data-testid=code-editor][data-ready=true]');
    await madeBy.scrollIntoViewIfNeeded();
    await atWidths(page, 'jobs-local-example-new-environment');
    await page.click('button[aria-label=Jobs]');
    // The secret was only ever in memory: not in SQLite, the log mirror, or anything under the data folder.
    app.services.db.pragma('wal_checkpoint(TRUNCATE)');
    expect(filesContaining(dataDir, SECRET).filter((p) => !p.endsWith('/job.log'))).toEqual([]);
    expect(ctx.errors).toEqual([]);
  });

  it("charts a SPADE run's log as Slime prints it: each series on its own axis, what each quantity means, and each game's returns", async () => {
    const { page, dataDir, app } = ctx;
    // The activity button toggles the panel: open it only if the test before left it closed.
    if (!(await page.isVisible('[data-testid=jobs-panel]'))) await page.click('button[aria-label=Jobs]');
    await page.waitForSelector('[data-testid=jobs-panel]');
    // A real local job printing a log written from SPADE's and Slime's print statements (tests/fixtures/spade-logs).
    const log = join(process.cwd(), 'tests', 'fixtures', 'spade-logs', 'slime-run.log');
    await app.services.jobs.submit({ name: 'slime log', backend: 'local', command: ['cat', log], workdir: join(dataDir, 'slime-log'), noPool: true });
    await page.click('[data-testid=jobs-item]:has-text("slime log")');
    const view = '[data-testid=job-view]:has(h2:has-text("slime log"))';
    await page.waitForSelector(`${view}[data-state=succeeded]`, { timeout: 60_000 });
    await page.waitForSelector(`${view} [data-testid=jobs-chart][data-key="train/loss"][data-points="4"]`);
    await page.waitForSelector(`${view} [data-testid=jobs-chart][data-key="eval/aime"][data-points="1"]`);
    const charts = await page.$$eval(`${view} [data-testid=jobs-chart]`, (els) => els.map((e) => `${e.getAttribute('data-key')} @ ${e.getAttribute('data-axis')}`));
    expect(charts).toEqual([
      'rollout/actor_win_rate @ rollout/step', 'env/avg_regret @ rollout/step', 'env/avg_r_hint @ rollout/step', 'env/avg_r_no_hint @ rollout/step',
      'env_validation_pass_rate @ rollout/step', 'delayed_env/blend_regret_mean @ rollout/step', 'delayed_env/blend_micro_lp_mean @ rollout/step',
      'delayed_env/blend_win_rate_mean @ rollout/step', 'delayed_env/blend_plateau_mean @ rollout/step', 'delayed_env/blend_frontier_penalty_mean @ rollout/step',
      'train/loss @ train/step', 'train/ppo_kl @ train/step', 'train/grad_norm @ train/step',
      'gem_eval/overall_win_rate @ eval/step', 'gem_eval/overall_mean_reward @ eval/step', 'eval/aime @ eval/step',
    ]);
    // Each chart names its own step key (its legend and x axis), and says what its number is.
    expect(await page.textContent(`${view} .jobs-chart[data-key="train/loss"] .u-legend`)).toContain('train/step');
    expect(await page.textContent(`${view} .jobs-chart-box:has([data-key="rollout/actor_win_rate"]) [data-testid=jobs-chart-meaning]`)).toContain("Share of the actor's plays");
    expect(await page.textContent(`${view} .jobs-chart-box:has([data-key="delayed_env/blend_win_rate_mean"]) [data-testid=jobs-chart-meaning]`)).toContain('not a share of wins');
    await atWidths(page, 'jobs-slime-log');
    // SPADE's [REGRET] lines: each game's two returns and regret.
    await page.click(`${view} [data-testid=jobs-games] summary`);
    const rows = await page.$$eval(`${view} [data-testid=jobs-game-row]`, (els) => els.map((e) => [...e.querySelectorAll('td')].map((td) => td.textContent)));
    expect(rows).toEqual([
      ['game_00000_000_pattern_recognition.py', '0.875', '0.250', '0.625'],
      ['game_00000_001_pattern_recognition.py', '1.000', '0.625', '0.375'],
      ['game_00000_002_pattern_recognition.py', '0.562', '0.062', '0.500'],
    ]);
    // Scrolled after each resize: the metrics pane's height follows the window's.
    for (const [width, height] of [[1024, 768], [1440, 900]] as const) {
      await page.setViewportSize({ width, height });
      await page.locator(`${view} [data-testid=jobs-game-row]`).last().scrollIntoViewIfNeeded();
      await screenshot(page, `jobs-slime-log-games-${width}`);
    }
    await page.setViewportSize({ width: 1400, height: 860 });
    // The log view shows Slime's dicts as the form, id and name/value pairs (the file itself is unchanged).
    const term = `${view} [data-testid=jobs-term]`;
    const termEl = await page.waitForSelector(term);
    await page.waitForFunction((el) => /eval 2\s+gem_eval\/overall_win_rate 0\.313/.test(el.textContent ?? ''), termEl);
    expect(await page.textContent(term)).not.toContain("{'gem_eval");
    expect(ctx.errors).toEqual([]);
  });

  const ci = ciServices();
  it.skipIf(!ci)(`submits the example run to Slurm over SSH after the host key is accepted, and compares two runs${ci ? '' : ` (skipped: ${SERVICES_MISSING})`}`, async () => {
    const { page, dataDir } = ctx;
    const cfg = join(dataDir, 'ssh_config');
    writeFileSync(cfg, `Host spade-ci\n  HostName ${ci!.host}\n  Port ${ci!.port}\n  User ${ci!.user}\n  IdentityFile ${ci!.key}\n  UserKnownHostsFile ${join(dataDir, 'no_known_hosts')}\n`);
    process.env.SPADE_SSH_CONFIG = cfg;
    try {
      await launch(async (p) => {
        await p.selectOption('[data-testid=jobs-backend]', 'slurm');
        await p.fill('[data-testid=jobs-name]', 'slurm example');
        await p.fill('[data-testid=jobs-host]', 'spade-ci');
        await p.fill('[data-testid=jobs-workdir]', join(dataDir, 'slurm-runs'));
        await p.fill('[data-testid=jobs-env]', 'SPADE_STEP_DELAY=0.2');
        await p.click('[data-testid=jobs-submit]');
      });
      await page.waitForSelector('[data-testid=jobs-hostkey]');
      expect(await page.textContent('[data-testid=jobs-hostkey]')).toMatch(/SHA256:[A-Za-z0-9+/]{43}/);
      await screenshot(page, 'jobs-hostkey-prompt');
      await page.click('[data-testid=jobs-trust]');
      const view = '[data-testid=job-view]:has(h2:has-text("slurm example"))';
      await page.waitForSelector(view);
      await page.waitForSelector(`${view}[data-state=succeeded]`, { timeout: 120_000 });
      expect(await page.textContent(`${view} .jobs-detail`)).toMatch(/COMPLETED/);
      await page.selectOption(`${view} [data-testid=jobs-compare]`, { label: 'local example' });
      await page.waitForSelector(`${view} [data-testid=jobs-chart][data-key="env/avg_regret"] .u-legend:has-text("local example")`);
      // The legend names both runs where it can be seen: inside the metrics pane's visible box, above the charts.
      const legend = page.locator(`${view} [data-testid=jobs-legend]`);
      expect(await legend.locator('[data-run=this]').textContent()).toBe('slurm example');
      expect(await legend.locator('[data-run=compared]').textContent()).toBe('local example');
      const pane = (await page.locator(`${view} [data-testid=jobs-metrics]`).boundingBox())!;
      const box = (await legend.boundingBox())!;
      const chart = (await page.locator(`${view} [data-testid=jobs-chart]`).first().boundingBox())!;
      expect(box.height).toBeGreaterThan(0);
      expect(box.y).toBeGreaterThanOrEqual(pane.y);
      expect(box.y + box.height).toBeLessThanOrEqual(Math.min(pane.y + pane.height, chart.y + 1));
      await screenshot(page, 'jobs-slurm-compare');
    } finally {
      delete process.env.SPADE_SSH_CONFIG;
    }
    expect(ctx.errors).toEqual([]);
  });

  it('shows what SPADE\'s launch scripts do before launching them', async () => {
    const { page } = ctx;
    await launch(async (p) => {
      await p.selectOption('[data-testid=jobs-recipe]', 'spade-games-8b');
    });
    const warning = await page.waitForSelector('[data-testid=jobs-recipe-warning]');
    expect(await warning.textContent()).toMatch(/kill.*sglang.*ray.*by name/);
    expect(await warning.textContent()).toMatch(/--wandb-key/);
    await screenshot(page, 'jobs-spade-recipe-warning');
    await page.click('[data-testid=jobs-launch] button:has-text("Cancel")');
  });

  const ray = ciRay();
  it.skipIf(!ray)('attaches to a Ray job it did not launch, by its submission id, and charts its printed metrics', async () => {
    const { page } = ctx;
    const id = `spade_games_8b_${process.pid}${Date.now() % 10000}`;
    const lines = Array.from({ length: 6 }, (_, i) => `echo "rollout ${i}: {'rollout/mean_return': ${(i + 1) / 10}, 'env/avg_regret': np.float64(${(6 - i) / 10})}"; sleep 0.3`).join('; ');
    const sub = await rayRest(ray!.address, 'POST', '/api/jobs/', { entrypoint: lines, submission_id: id });
    expect(sub.status, sub.text).toBe(200);
    await page.click('[data-testid=jobs-attach-open]');
    await page.fill('[data-testid=jobs-attach-id]', id);
    await page.fill('[data-testid=jobs-attach-address]', ray!.address);
    await page.click('[data-testid=jobs-attach-submit]');
    const view = `[data-testid=job-view]:has(h2:has-text("${id}"))`;
    await page.waitForSelector(`${view}[data-state=succeeded]`, { timeout: 120_000 });
    await page.waitForSelector(`${view} [data-testid=jobs-chart][data-key="env/avg_regret"][data-points="6"]`);
    expect(await page.textContent(`${view} .jobs-detail`)).toMatch(/SUCCEEDED/);
    await screenshot(page, 'jobs-ray-attached');
    expect(ctx.errors).toEqual([]);
  });
  it.skipIf(!ci)('launches over SSH with the key file named in the host form', async () => {
    const { page, dataDir } = ctx;
    // No ~/.ssh/config and no agent: the key file in the form is the only way in.
    const cfg = join(dataDir, 'empty_ssh_config');
    writeFileSync(cfg, '');
    process.env.SPADE_SSH_CONFIG = cfg;
    const sock = process.env.SSH_AUTH_SOCK;
    delete process.env.SSH_AUTH_SOCK;
    try {
      await launch(async (p) => {
        await p.selectOption('[data-testid=jobs-backend]', 'ssh');
        await p.fill('[data-testid=jobs-name]', 'ssh with key file');
        await p.fill('[data-testid=jobs-host]', ci!.host);
        await p.fill('[data-testid=jobs-port]', String(ci!.port));
        await p.fill('[data-testid=jobs-user]', ci!.user);
        await p.fill('[data-testid=jobs-keyfile]', ci!.key);
        await p.fill('[data-testid=jobs-workdir]', join(dataDir, 'ssh-runs'));
      });
      await atWidths(page, 'jobs-ssh-keyfile-form');
      await page.click('[data-testid=jobs-submit]');
      const view = '[data-testid=job-view]:has(h2:has-text("ssh with key file"))';
      const first = await page.waitForSelector(`[data-testid=jobs-hostkey], ${view}`);
      if ((await first.getAttribute('data-testid')) === 'jobs-hostkey') await page.click('[data-testid=jobs-trust]');
      await page.waitForSelector(`${view}[data-state=succeeded]`, { timeout: 120_000 });
      expect(await page.textContent(`${view} .jobs-head`)).toContain(`ssh on ${ci!.user}@${ci!.host}:${ci!.port}`);
    } finally {
      delete process.env.SPADE_SSH_CONFIG;
      if (sock !== undefined) process.env.SSH_AUTH_SOCK = sock;
    }
    expect(ctx.errors).toEqual([]);
  });

  it.skipIf(!ray)("asks before stopping an attached job, says whose it is, and shows what Ray answered", async () => {
    const { page } = ctx;
    const id = `spade_games_8b_${process.pid}_e2e_stop`;
    const sub = await rayRest(ray!.address, 'POST', '/api/jobs/', { entrypoint: 'echo someone else; sleep 300', submission_id: id });
    expect(sub.status, sub.text).toBe(200);
    const rayStatus = async () => (JSON.parse((await rayRest(ray!.address, 'GET', `/api/jobs/${id}`)).text) as { status: string }).status;
    try {
      await page.click('[data-testid=jobs-attach-open]');
      await page.fill('[data-testid=jobs-attach-id]', id);
      await page.fill('[data-testid=jobs-attach-address]', ray!.address);
      await page.click('[data-testid=jobs-attach-submit]');
      const view = `[data-testid=job-view]:has(h2:has-text("${id}"))`;
      await page.waitForSelector(`${view}[data-state=running]`, { timeout: 60_000 });
      await page.click(`${view} [data-testid=job-stop]`);
      await page.waitForSelector('[data-testid=job-stop-confirm]');
      expect(await page.textContent('[data-testid=job-stop-owner]')).toContain(`Ray job ${id} on the head at ${ray!.address}, submitted outside this workbench`);
      expect(await page.textContent('[data-testid=job-stop-confirm]')).toContain(`POST /api/jobs/${id}/stop`);
      await atWidths(page, 'jobs-stop-attached-confirm');
      // Esc keeps it running: nothing was asked of Ray.
      await page.keyboard.press('Escape');
      await page.waitForSelector('[data-testid=job-stop-confirm]', { state: 'detached' });
      expect(await rayStatus()).toBe('RUNNING');
      await page.click(`${view} [data-testid=job-stop]`);
      await page.click('[data-testid=job-stop-confirm-button]');
      const answer = await page.waitForSelector(`${view} [data-testid=job-stop-answer]`, { timeout: 90_000 });
      expect(await answer.textContent()).toMatch(new RegExp(`^Stop: ray job ${id}: STOPPED.*Ray answered POST /api/jobs/${id}/stop with HTTP 200`));
      await page.waitForSelector(`${view}[data-state=cancelled]`);
      expect(await rayStatus()).toBe('STOPPED');
      await atWidths(page, 'jobs-stop-attached-answer');
    } finally {
      await rayRest(ray!.address, 'POST', `/api/jobs/${id}/stop`).catch(() => undefined);
    }
    expect(ctx.errors).toEqual([]);
  });
});
