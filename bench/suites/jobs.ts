import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startApp } from '../../core/host/startApp';
import { packageRoot } from '../../core/base/appInfo';
import { launchChromium } from '../../tests/helpers/browser';
import { tempDir } from '../../tests/helpers/tmp';
import { median, type BenchRow, type BenchSuite } from '../types';

const LINES = 200_000;
const POINTS = 100_000;

/**
 * jobs.log_lines_per_s: a finished job's 200,000-line log read into the xterm.js view in Chromium
 * (WebSocket + renderer), from opening the tab to the last line counted.
 * jobs.chart_100k_ms: uPlot drawing one 100,000-point metric chart, timed inside the page.
 */
export const jobsSuite: BenchSuite = {
  prefix: 'jobs',
  async run(log) {
    if (!existsSync(join(packageRoot(), 'dist', 'renderer', 'index.html'))) {
      log('jobs: dist/renderer missing (run `node scripts/build.mjs`); skipped');
      return [];
    }
    const rows: BenchRow[] = [];
    const tmp = tempDir('spade-bench-jobs-');
    const app = await startApp({ dataDir: tmp.dir, port: 0, engine: 'thread' }); // reads the engine's services
    const browser = await launchChromium();
    try {
      const jobs = app.services.jobs;
      const job = await jobs.submit({
        name: 'log bench',
        backend: 'local',
        workdir: tmp.dir,
        command: ['python3', '-c', `import sys\nw=sys.stdout.write\nfor i in range(${LINES}): w("rollout %d: game_%05d_000_pattern_recognition r_hint=1.000 r_no_hint=0.250 regret=0.750\\n" % (i, i))`],
        noPool: true,
        importEnvironments: false,
      });
      for (let i = 0; i < 600; i++) {
        const j = jobs.manager.get(job.id);
        if (j.state !== 'running' && j.state !== 'pending' && j.state !== 'submitting') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      // A job with 100,000 points of one metric, as a long run would leave.
      const now = new Date().toISOString();
      const chartJob = { ...jobs.manager.get(job.id), id: 'jbenchchart', name: 'chart bench', createdAt: now, updatedAt: now };
      jobs.manager.store.insert(chartJob);
      jobs.manager.store.commitMetricsFile(chartJob.id, 0, Array.from({ length: POINTS }, (_, i) => ({ axis: 'rollout/step', step: i + 1, key: 'env/avg_regret', value: Math.sin(i / 500) + Math.random() * 0.1 })));

      const rates: number[] = [];
      for (let round = 0; round < 3; round++) {
        const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
        await page.goto(app.host.url);
        await page.waitForSelector('[data-testid=backend-status]:has-text("connected")');
        await page.click('button[aria-label=Jobs]');
        await page.waitForSelector('[data-testid=jobs-item]:has-text("log bench")');
        const t0 = Date.now();
        await page.click('[data-testid=jobs-item]:has-text("log bench")');
        await page.waitForFunction((n) => Number((globalThis as unknown as { document: { querySelector(s: string): { getAttribute(a: string): string | null } | null } }).document.querySelector('[data-testid=jobs-log-count]')?.getAttribute('data-lines')) >= n, LINES, { timeout: 120_000, polling: 20 });
        const s = (Date.now() - t0) / 1000;
        rates.push(LINES / s);
        await page.close();
      }
      const rate = median(rates);
      log(`jobs log ingest: ${rates.map((r) => r.toFixed(0)).join(', ')} lines/s`);
      rows.push({ id: 'jobs.log_lines_per_s', value: Math.round(rate), unit: 'lines/s', goal: { op: '>=', value: 50_000 }, note: `${LINES.toLocaleString()} lines into xterm.js in Chromium, median of 3` });

      const draws: number[] = [];
      for (let round = 0; round < 3; round++) {
        const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
        await page.goto(app.host.url);
        await page.waitForSelector('[data-testid=backend-status]:has-text("connected")');
        await page.click('button[aria-label=Jobs]');
        await page.click('[data-testid=jobs-item]:has-text("chart bench")');
        const el = await page.waitForSelector(`[data-testid=jobs-chart][data-points="${POINTS}"]:not([data-draw-ms="0.00"])`, { timeout: 60_000 });
        draws.push(Number(await el.getAttribute('data-draw-ms')));
        await page.close();
      }
      log(`jobs chart draw (100k points): ${draws.map((d) => d.toFixed(1)).join(', ')} ms`);
      rows.push({ id: 'jobs.chart_100k_ms', value: Number(median(draws).toFixed(1)), unit: 'ms', goal: { op: '<=', value: 100 }, note: 'uPlot, one chart, 100,000 points, Chromium, median of 3' });
    } finally {
      await browser.close();
      await app.close();
      tmp.cleanup();
    }
    return rows;
  },
};
