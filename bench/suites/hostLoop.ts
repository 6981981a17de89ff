import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import WebSocket from 'ws';
import { createWsBackend } from '../../core/api/wsClient';
import type { EngineMode } from '../../core/host/engineProcess';
import { startApp } from '../../core/host/startApp';
import { COGNITIVE_SKILLS, skillSlug } from '../../core/memory/parse';
import { tempDir } from '../../tests/helpers/tmp';
import type { BenchRow, BenchSuite } from '../types';
import { generatedGame } from './memory';

const N = 10_000;

interface LoopDelay {
  p99: number;
  max: number;
  mean: number;
  seconds: number;
  audited: number;
  imported: number;
  searches: number;
}

/**
 * The event-loop delay of the thread that owns the window (here the web host's main thread, which
 * serves the page and the socket) while the engine imports 10,000 environments and audits the pool,
 * both started over the socket as the page starts them.
 */
async function loopDelayWhileBusy(mode: EngineMode, src: string, log: (m: string) => void): Promise<LoopDelay> {
  const data = tempDir('spade-bench-loop-');
  const app = await startApp({ dataDir: data.dir, port: 0, engine: mode });
  const ws = createWsBackend({ url: `ws://127.0.0.1:${app.host.port}/api/ws`, WebSocketImpl: WebSocket as never });
  try {
    await ws.ready;
    // The seed pack the app imports at start is the pool the audit sweeps; wait until it is in.
    let last = -1;
    for (;;) {
      const { total } = await ws.call('memory.search', { limit: 1 });
      if (total > 0 && total === last) break;
      last = total;
      await new Promise((r) => setTimeout(r, 500));
    }
    // 1 ms: at Node's default of 10 ms every sample also holds the 10 ms interval itself.
    const h = monitorEventLoopDelay({ resolution: 1 });
    let importDone!: () => void;
    let auditDone!: () => void;
    const imported = new Promise<void>((r) => (importDone = r));
    const audited = new Promise<void>((r) => (auditDone = r));
    let importId = '';
    let sweepId = '';
    let importedN = 0;
    let auditedN = 0;
    ws.on('memory.importProgress', (p) => {
      if (p.jobId === importId && (p.phase === 'done' || p.phase === 'failed')) {
        importedN = p.imported;
        importDone();
      }
    });
    ws.on('audit.sweepProgress', (s) => {
      if (s.id === sweepId && s.state !== 'running') {
        auditedN = s.done;
        auditDone();
      }
    });
    h.enable();
    const t0 = performance.now();
    const sweep = await ws.call('audit.poolStart', { query: '' });
    sweepId = sweep.id;
    if (sweep.state !== 'running') auditDone();
    importId = (await ws.call('memory.import', { paths: [src] })).jobId;
    // Meanwhile the page keeps its list fresh, as the Library page does on memory.changed: a search
    // over the growing library, one after the other. On the engine's thread these wait on SQLite.
    let busy = true;
    let searches = 0;
    const searching = (async () => {
      while (busy) {
        await ws.call('memory.search', { query: 'grid', limit: 100 });
        searches++;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    await Promise.all([imported, audited]);
    busy = false;
    await searching;
    const seconds = (performance.now() - t0) / 1000;
    h.disable();
    const r = { p99: h.percentile(99) / 1e6, max: h.max / 1e6, mean: h.mean / 1e6, seconds, audited: auditedN, imported: importedN, searches };
    log(`${mode}: loop delay p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(1)} ms, mean ${r.mean.toFixed(2)} ms over ${seconds.toFixed(1)} s (${importedN} imported, ${auditedN} audited, ${searches} searches)`);
    return r;
  } finally {
    ws.close();
    await app.close();
    data.cleanup();
  }
}

export const hostLoopSuite: BenchSuite = {
  prefix: 'host.main_loop_delay_p99_ms',
  async run(log) {
    const tmp = tempDir('spade-bench-loop-src-');
    try {
      const src = join(tmp.dir, 'games');
      mkdirSync(src);
      for (let i = 0; i < N; i++) {
        const skill = COGNITIVE_SKILLS[i % COGNITIVE_SKILLS.length]!;
        writeFileSync(join(src, `game_${String(Math.floor(i / 100)).padStart(5, '0')}_${String(i % 100).padStart(3, '0')}_${skillSlug(skill)}.py`), generatedGame(i));
      }
      const worker = await loopDelayWhileBusy('worker', src, log);
      // The same work with the engine on the host's own thread: the design before the engine moved out.
      const thread = await loopDelayWhileBusy('thread', src, log);
      const rows: BenchRow[] = [
        {
          id: 'host.main_loop_delay_p99_ms',
          value: worker.p99,
          unit: 'ms',
          goal: { op: '<=', value: 20 },
          note: `web host main thread, engine in a worker, monitorEventLoopDelay at 1 ms, during a ${N.toLocaleString('en')}-file import + a seed-pool audit (${worker.audited} envs) + the page's searches (${worker.seconds.toFixed(0)} s; max ${worker.max.toFixed(0)} ms); engine on the same thread: p99 ${thread.p99.toFixed(1)} ms, max ${thread.max.toFixed(0)} ms`,
        },
      ];
      return rows;
    } finally {
      tmp.cleanup();
    }
  },
};
