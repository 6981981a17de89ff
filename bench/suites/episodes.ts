import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import WebSocket from 'ws';
import { createWsBackend } from '../../core/api/wsClient';
import { startApp } from '../../core/host/startApp';
import { ingest } from '../../core/memory/repository';
import { sha256 } from '../../core/memory/parse';
import { packageRoot } from '../../core/base/appInfo';
import { launchChromium } from '../../tests/helpers/browser';
import { tempDir } from '../../tests/helpers/tmp';
import { COUNTER_SOURCE as COUNTER } from '../../tests/integration/episodes/fixtures';
import { median, percentile, type BenchRow, type BenchSuite } from '../types';


export const episodesSuite: BenchSuite = {
  prefix: 'episodes',
  async run(log) {
    const rows: BenchRow[] = [];
    const root = packageRoot();
    if (!existsSync(join(root, 'dist', 'renderer', 'index.html')) || !existsSync(join(root, 'dist', 'node', 'runtime-child.js'))) {
      log('building for the episodes bench');
      execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
    }
    const tmp = tempDir('spade-bench-episodes-');
    const app = await startApp({ dataDir: tmp.dir, port: 0, engine: 'thread' }); // reads the engine's services
    const ws = createWsBackend({ url: `ws://127.0.0.1:${app.host.port}/api/ws`, WebSocketImpl: WebSocket as never });
    try {
      await ws.ready;
      ingest(app.services.db, { source: COUNTER, path: 'bench/counter.py' });
      const hash = sha256(COUNTER);

      // Scrub: a 1,000-step episode, then jumps to random steps over the WebSocket (restore + re-execution + the step's detail).
      const opened = await ws.call('episodes.open', { hash, seed: 1, maxTurns: 10_000, runtime: 'pyodide' });
      const id = opened.episode.id;
      const t0 = performance.now();
      await ws.call('episodes.run', { id, policy: { kind: 'random' }, until: { kind: 'steps', count: 999 }, maxSteps: 999 });
      log(`recorded a 1,000-step episode in ${(performance.now() - t0).toFixed(0)} ms`);
      let x = 12345;
      const rnd = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
      for (let i = 0; i < 10; i++) await ws.call('episodes.scrub', { id, idx: Math.floor(rnd() * 1000) });
      const scrub: number[] = [];
      let reexec = 0;
      for (let i = 0; i < 200; i++) {
        const idx = Math.floor(rnd() * 1000);
        const t = performance.now();
        const r = await ws.call('episodes.scrub', { id, idx });
        scrub.push(performance.now() - t);
        reexec += r.reexecuted;
      }
      log(`scrub: median ${median(scrub).toFixed(1)} ms, p95 ${percentile(scrub, 95).toFixed(1)} ms, max ${Math.max(...scrub).toFixed(1)} ms, ${(reexec / scrub.length).toFixed(1)} steps re-executed on average`);
      rows.push({
        id: 'episodes.scrub_ms',
        value: percentile(scrub, 95),
        unit: 'ms',
        goal: { op: '<=', value: 50 },
        note: `p95 of 200 random jumps in a 1,000-step episode over the WebSocket (median ${median(scrub).toFixed(1)}, max ${Math.max(...scrub).toFixed(1)}); Pyodide`,
      });

      // Step round trip from the UI: click Step in Chromium until the new step is on screen.
      const ep2 = await ws.call('episodes.open', { hash, seed: 2, maxTurns: 10_000, runtime: 'pyodide' });
      const browser = await launchChromium();
      try {
        const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
        await page.goto(app.host.url);
        await page.waitForSelector('[data-testid=backend-status]:has-text("connected")');
        await page.getByRole('button', { name: 'Episodes', exact: true }).click();
        await page.locator(`[data-testid=ep-item][data-id="${ep2.episode.id}"]`).click();
        await page.waitForSelector('[data-testid=episode-view][data-steps="1"]');
        await page.getByTestId('action-input').fill('\\boxed{1}');
        // Runs in the page (written as a string: the bench is typechecked without the DOM library).
        const times = (await page.evaluate(`(async (n) => {
          const view = document.querySelector('[data-testid=episode-view]');
          const button = document.querySelector('[data-testid=action-input-go]');
          const out = [];
          for (let i = 0; i < n; i++) {
            const before = view.getAttribute('data-steps');
            const t = performance.now();
            // Done when React has committed both the new timeline and the new step's panel to the DOM
            // (observed in a microtask after the commit, not at the next animation frame).
            const done = new Promise((res) => {
              const ready = () => view.getAttribute('data-steps') !== before && document.querySelector('[data-testid=step-panel]')?.getAttribute('data-idx') === before;
              const mo = new MutationObserver(() => { if (ready()) { mo.disconnect(); res(); } });
              mo.observe(view, { attributes: true, subtree: true, childList: true });
            });
            button.click();
            await done;
            out.push(performance.now() - t);
          }
          return out;
        })(120)`)) as number[];
        const steady = times.slice(20);
        log(`UI step: median ${median(steady).toFixed(1)} ms, p95 ${percentile(steady, 95).toFixed(1)} ms`);
        rows.push({
          id: 'episodes.step_roundtrip_p95_ms',
          value: percentile(steady, 95),
          unit: 'ms',
          goal: { op: '<=', value: 20 },
          note: `Chromium click -> web host -> Pyodide step + state -> new step committed to the DOM; 100 steps after 20 warm-up (median ${median(steady).toFixed(1)})`,
        });
      } finally {
        await browser.close();
      }
      const api: number[] = [];
      for (let i = 0; i < 200; i++) {
        const t = performance.now();
        await ws.call('episodes.act', { id: ep2.episode.id, action: '\\boxed{2}' });
        api.push(performance.now() - t);
      }
      log(`episodes.act over the WebSocket alone: median ${median(api).toFixed(1)} ms, p95 ${percentile(api, 95).toFixed(1)} ms`);
    } finally {
      ws.close();
      await app.close();
      tmp.cleanup();
    }
    return rows;
  },
};
