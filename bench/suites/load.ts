import WebSocket from 'ws';
import { createWsBackend } from '../../core/api/wsClient';
import { startApp } from '../../core/host/startApp';
import { tempDir } from '../../tests/helpers/tmp';
import { median, percentile, type BenchRow, type BenchSuite } from '../types';
import { errorMessage } from '../../core/api';

const CLIENTS = Number(process.env.SPADE_LOAD_CLIENTS ?? 200);
const SECONDS = Number(process.env.SPADE_LOAD_SECONDS ?? 30);

/**
 * The web host under a crowd: CLIENTS WebSocket clients, each calling in a loop for SECONDS
 * (health, a search, library stats: what an open workbench polls and types), on the seed pack.
 * Every failed or lost call counts as an error; latency is per call, client side.
 */
export const loadSuite: BenchSuite = {
  prefix: 'load',
  async run(log) {
    const tmp = tempDir('spade-bench-load-');
    const app = await startApp({ dataDir: tmp.dir, port: 0, engine: 'thread' }); // reads the engine's services
    try {
      for (;;) {
        const st = app.services.memory.status('seed-pack');
        if (st.phase === 'done' || st.phase === 'failed') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const url = `ws://127.0.0.1:${app.host.port}/api/ws`;
      const clients = Array.from({ length: CLIENTS }, () => createWsBackend({ url, WebSocketImpl: WebSocket as never, callTimeoutMs: 30_000 }));
      await Promise.all(clients.map((c) => c.ready));
      log(`${CLIENTS} clients connected; calling for ${SECONDS} s`);
      const latencies: number[] = [];
      let errors = 0;
      const firstErrors: string[] = [];
      const cpu0 = process.cpuUsage();
      const until = performance.now() + SECONDS * 1000;
      const queries = ['grid', 'walk', 'logic', 'path', ''];
      await Promise.all(
        clients.map(async (c, k) => {
          let i = k;
          while (performance.now() < until) {
            const t = performance.now();
            try {
              const which = i++ % 3;
              if (which === 0) await c.call('app.health', {});
              else if (which === 1) await c.call('memory.search', { query: queries[i % queries.length]!, limit: 50 });
              else await c.call('memory.stats', {});
              latencies.push(performance.now() - t);
            } catch (e) {
              errors++;
              if (firstErrors.length < 3) firstErrors.push(errorMessage(e));
            }
          }
        }),
      );
      const cpu = process.cpuUsage(cpu0);
      for (const c of clients) c.close();
      // Wall-clock figures move with whatever else the machine runs; CPU per call (server and
      // clients share this process) compares two builds on a busy machine.
      const cpuPerCall = (cpu.user + cpu.system) / Math.max(1, latencies.length);
      const p95 = percentile(latencies, 95);
      log(`${latencies.length} calls, ${errors} errors${firstErrors.length ? ` (${firstErrors.join('; ')})` : ''}; median ${median(latencies).toFixed(1)} ms, p95 ${p95.toFixed(1)} ms`);
      const rows: BenchRow[] = [
        { id: 'load.ws_errors', value: errors, unit: 'calls', goal: { op: '<=', value: 0 }, note: `${CLIENTS} WebSocket clients for ${SECONDS} s` },
        { id: 'load.ws_p95_ms', value: p95, unit: 'ms', note: `per call, ${latencies.length} calls (median ${median(latencies).toFixed(1)} ms)` },
        { id: 'load.ws_cpu_us_per_call', value: cpuPerCall, unit: 'µs', note: 'process CPU (server and all clients) per call' },
        { id: 'load.ws_calls_per_s', value: latencies.length / SECONDS, unit: 'calls/s', note: 'health, search and stats in turn' },
      ];
      return rows;
    } finally {
      await app.close();
      tmp.cleanup();
    }
  },
};
