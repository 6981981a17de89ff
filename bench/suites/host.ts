import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import WebSocket from 'ws';
import { createWsBackend } from '../../core/api/wsClient';
import { startApp } from '../../core/host/startApp';
import { createInProcessBackend } from '../../core/server/inProcess';
import { createDispatcher } from '../../core/server/dispatcher';
import { createHandlers } from '../../core/handlers';
import { packageRoot } from '../../core/base/appInfo';
import { launchChromium } from '../../tests/helpers/browser';
import { tempDir } from '../../tests/helpers/tmp';
import { median, type BenchRow, type BenchSuite } from '../types';

async function timeCalls(call: () => Promise<unknown>, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await call();
    out.push(performance.now() - t);
  }
  return out;
}

export const hostSuite: BenchSuite = {
  prefix: 'host',
  async run(log) {
    const rows: BenchRow[] = [];
    const tmp = tempDir('spade-bench-host-');
    const app = await startApp({ dataDir: tmp.dir, port: 0, engine: 'thread' }); // the in-process side reads the engine's services
    try {
      const inProc = createInProcessBackend(createDispatcher(createHandlers(app.services)), app.services.events);
      const ws = createWsBackend({ url: `ws://127.0.0.1:${app.host.port}/api/ws`, WebSocketImpl: WebSocket as never });
      await ws.ready;
      for (let i = 0; i < 100; i++) {
        await inProc.call('app.info', {});
        await ws.call('app.info', {});
      }
      const a = median(await timeCalls(() => inProc.call('app.info', {}), 1000));
      const b = median(await timeCalls(() => ws.call('app.info', {}), 1000));
      log(`app.info median: in-process ${(a * 1000).toFixed(1)} µs, websocket ${(b * 1000).toFixed(1)} µs`);
      rows.push({ id: 'host.api_roundtrip_ratio', value: b / a, unit: 'x', note: `ws ${(b * 1000).toFixed(0)} µs vs in-process ${(a * 1000).toFixed(0)} µs, median of 1,000` });
      ws.close();
      inProc.close();
    } finally {
      await app.close();
    }

    const root = packageRoot();
    if (!existsSync(join(root, 'dist', 'renderer', 'index.html'))) {
      log('building the renderer for host.first_render_ms');
      execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
    }
    const browser = await launchChromium();
    try {
      const samples: number[] = [];
      const starts: number[] = [];
      const loads: number[] = [];
      for (let i = 0; i < 5; i++) {
        const d = tempDir('spade-bench-render-');
        const page = await browser.newPage();
        const t0 = performance.now();
        const app2 = await startApp({ dataDir: d.dir, port: 0 });
        const t1 = performance.now();
        await page.goto(app2.host.url, { waitUntil: 'load' });
        const t2 = performance.now();
        await page.waitForSelector('[data-testid=backend-status]:has-text("connected")');
        samples.push(performance.now() - t0);
        starts.push(t1 - t0);
        loads.push(t2 - t1);
        await page.close();
        await app2.close();
        d.cleanup();
      }
      const parts = `host start ${median(starts).toFixed(0)} ms, page load ${median(loads).toFixed(0)} ms, then connected`;
      log(`first render: ${parts}`);
      rows.push({ id: 'host.first_render_ms', value: median(samples), unit: 'ms', goal: { op: '<=', value: 600 }, note: `web host start to connected shell in Chromium, median of 5 (${parts})` });
    } finally {
      await browser.close();
      tmp.cleanup();
    }
    return rows;
  },
};
