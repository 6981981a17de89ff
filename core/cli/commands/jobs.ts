import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import type { Command, CliIO } from '../command';
import { UsageError } from '../command';
import { commandInfo } from '../catalog';
import { openDataDir } from '../../memory/cliDb';
import { JobStore } from '../../jobs/store';
import { LogMirror } from '../../jobs/logMirror';
import { metricsJson, parseMetricLine, parseRegretLine, type GameReturns, type MetricPoint } from '../../api/spadeMetrics';
import { DomainError } from '../../errors';

/**
 * A saved log (or `-`, stdin) read line by line with the parser the app's job charts use, so a
 * log of any size streams. Returns the `--json` object.
 */
export async function metricsOfLog(file: string, stdin: NodeJS.ReadableStream = process.stdin): Promise<ReturnType<typeof metricsJson>> {
  if (file !== '-' && !existsSync(file)) throw new DomainError('not_found', `No such file: ${file}`);
  const input = file === '-' ? stdin : createReadStream(file, { encoding: 'utf8' });
  const pts: MetricPoint[] = [];
  const games = new Map<string, GameReturns>();
  const lines = createInterface({ input, crlfDelay: Infinity });
  for await (const line of lines) {
    for (const p of parseMetricLine(line)) pts.push(p);
    const g = parseRegretLine(line);
    if (g) games.set(g.game, g);
  }
  return metricsJson(pts, [...games.values()]);
}

function printMetrics(io: CliIO, m: ReturnType<typeof metricsJson>, json: boolean): void {
  if (json) {
    io.out(JSON.stringify(m));
    return;
  }
  const keys = Object.keys(m.series);
  io.out(`${keys.length} series, ${m.games.length} game(s) with [REGRET] returns`);
  for (const k of keys) {
    const s = m.series[k]!;
    const last = s[s.length - 1]!;
    io.out(`  ${k.padEnd(48)} ${m.axis[k]!.padEnd(13)} ${String(s.length).padStart(5)} point(s), last ${last[1]} at ${last[0]}`);
  }
  for (const g of m.games) io.out(`  ${g.game}: R(hint)=${g.r_hint ?? '-'} R(no_hint)=${g.r_no_hint ?? '-'} regret=${g.regret ?? '-'}`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'timeout', 'lost']);

/** `jobs metrics | list | logs`: the jobs the workbench follows, read from its database and log mirrors. */
export const jobsCommand: Command = {
  ...commandInfo('jobs'),
  async run(argv, io) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'data-dir': { type: 'string' },
        log: { type: 'string' },
        json: { type: 'boolean' },
        follow: { type: 'boolean', short: 'f' },
      },
      strict: true,
    });
    const [sub, ...rest] = positionals;
    if (sub === 'metrics' && values.log !== undefined) {
      if (rest.length) throw new UsageError('jobs metrics takes either a job id or --log FILE, not both');
      printMetrics(io, await metricsOfLog(values.log), values.json === true);
      return 0;
    }
    if (values.log !== undefined) throw new UsageError('--log goes with jobs metrics');
    if (sub !== 'metrics' && sub !== 'list' && sub !== 'logs') throw new UsageError('Give metrics ID|--log FILE, list or logs ID');
    if (sub === 'list' ? rest.length !== 0 : rest.length !== 1) throw new UsageError(sub === 'list' ? 'jobs list takes no job id' : `jobs ${sub} takes one job id`);
    const { db, dataDir } = openDataDir(values['data-dir']);
    try {
      const store = new JobStore(db);
      if (sub === 'list') {
        const jobs = store.list();
        if (values.json) {
          io.out(JSON.stringify(jobs.map((j) => ({ id: j.id, name: j.name, backend: j.backend, host: j.host, recipe: j.recipe, state: j.state, detail: j.detail, externalId: j.externalId, createdAt: j.createdAt, finishedAt: j.finishedAt }))));
          return 0;
        }
        if (!jobs.length) io.out('No jobs.');
        for (const j of jobs) io.out(`${j.id.padEnd(14)} ${j.state.padEnd(10)} ${j.backend.padEnd(6)} ${j.createdAt.slice(0, 16).replace('T', ' ')}  ${j.name}${j.detail ? `  (${j.detail.slice(0, 80)})` : ''}`);
        return 0;
      }
      const id = rest[0]!;
      const job = store.get(id);
      if (!job) throw new DomainError('not_found', `No job ${id} in ${dataDir}`);
      if (sub === 'metrics') {
        printMetrics(io, metricsJson(store.metrics(id), store.games(id)), values.json === true);
        return 0;
      }
      // logs: the workbench's mirror of the job's log (the app keeps it current while it follows the job).
      const mirror = new LogMirror(join(dataDir, 'jobs', id, 'log.txt'));
      let offset = 0;
      for (;;) {
        const chunk = mirror.read(offset, 1 << 20);
        if (chunk.text) io.out(chunk.text);
        offset = chunk.nextOffset;
        if (chunk.nextOffset < chunk.size) continue;
        if (!values.follow || TERMINAL.has(store.get(id)?.state ?? 'lost')) {
          // One more read: lines the app wrote just before the job ended.
          const tail = mirror.read(offset, 1 << 20);
          if (tail.text) io.out(tail.text);
          return 0;
        }
        await sleep(500);
      }
    } finally {
      db.close();
    }
  },
};
