import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import type { Command, CliIO } from '../command';
import { UsageError } from '../command';
import { commandInfo } from '../catalog';
import { openDataDir } from '../../memory/cliDb';
import { JobStore } from '../../jobs/jobStore';
import { LogMirror } from '../../jobs/logMirror';
import { metricsJson, parseMetricLine, parseRegretLine, type GameReturns, type MetricPoint } from '../../api/spadeMetrics';
import { DomainError } from '../../errors';
import { attachInput, continueJob, followToEnd, jobService, launchInput, printArtefacts, printStarted, stopJob, type ControlValues } from './jobsControl';

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
const CONTROL = new Set(['launch', 'attach', 'stop', 'artefacts', 'continue']);

/** launch, attach, stop, artefacts, continue: the app's jobs service on this data folder. */
async function control(sub: string, rest: string[], values: ControlValues & { 'data-dir'?: string | undefined }, io: CliIO): Promise<number> {
  if (rest.length !== 1) throw new UsageError(sub === 'launch' ? 'jobs launch takes one recipe' : `jobs ${sub} takes one ${sub === 'attach' ? 'Slurm job id or Ray submission id' : 'job id'}`);
  const arg = rest[0]!;
  const { db, dataDir } = openDataDir(values['data-dir']);
  const svc = jobService(db, dataDir, io);
  try {
    switch (sub) {
      case 'launch': {
        const j = await svc.submit(launchInput(db, svc, arg, values));
        printStarted(io, j, values.json === true && !values.follow, 'launched');
        return values.follow ? await followToEnd(svc, j.id, io) : 0;
      }
      case 'attach': {
        const j = svc.summary(await svc.manager.attach(attachInput(db, arg, values)));
        printStarted(io, j, values.json === true && !values.follow, 'attached to');
        return values.follow ? await followToEnd(svc, j.id, io) : 0;
      }
      case 'stop':
        return await stopJob(svc, arg, values, io);
      case 'artefacts': {
        const a = await svc.artefacts(arg);
        if (values.json) io.out(JSON.stringify(a));
        else printArtefacts(io, a);
        return 0;
      }
      default: {
        const j = await continueJob(svc, arg, values);
        printStarted(io, j, values.json === true && !values.follow, 'launched');
        return values.follow ? await followToEnd(svc, j.id, io) : 0;
      }
    }
  } finally {
    await svc.close();
    db.close();
  }
}
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'timeout', 'lost']);

/** `jobs launch | attach | stop | artefacts | continue | metrics | list | logs`: the jobs the workbench follows. */
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
        on: { type: 'string' },
        env: { type: 'string', multiple: true },
        name: { type: 'string' },
        workdir: { type: 'string' },
        'ssh-key': { type: 'string' },
        'known-hosts': { type: 'string' },
        ssh: { type: 'string' },
        container: { type: 'string' },
        partition: { type: 'string' },
        gpus: { type: 'string' },
        time: { type: 'string' },
        'output-dir': { type: 'string' },
        load: { type: 'string' },
        yes: { type: 'boolean' },
      },
      strict: true,
    });
    const [sub, ...rest] = positionals;
    if (sub && CONTROL.has(sub)) return control(sub, rest, values, io);
    if (sub === 'metrics' && values.log !== undefined) {
      if (rest.length) throw new UsageError('jobs metrics takes either a job id or --log FILE, not both');
      printMetrics(io, await metricsOfLog(values.log), values.json === true);
      return 0;
    }
    if (values.log !== undefined) throw new UsageError('--log goes with jobs metrics');
    if (sub !== 'metrics' && sub !== 'list' && sub !== 'logs') throw new UsageError(`Give launch RECIPE, attach ID, stop ID, artefacts ID, continue ID, metrics ID|--log FILE, list or logs ID${sub ? ` (not ${sub})` : ''}`);
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
      if (values.follow && !TERMINAL.has(job.state)) {
        // Followed by this process too (beside the app, if it runs: each byte reaches the mirror once).
        const svc = jobService(db, dataDir, io);
        try {
          svc.manager.follow(id);
          return await followToEnd(svc, id, io);
        } finally {
          await svc.close();
        }
      }
      // logs: the workbench's mirror of the job's log (kept current by whichever process follows the job).
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
