import { errorMessage } from '../../api';
import { DomainError } from '../../errors';
import type { Db } from '../../memory/db';
import { expand, jobPaths, machineHome } from '../script';
import { shQuote } from '../shell';
import { isTerminal, type JobRecord, type Transport } from '../types';
import { GpuStore } from './gpuStore';
import { streamLines } from './lineStream';
import { nodeScript, readNodeLine } from './nodeScript';
import { LIMITS, parseAppLine, parseGpuLine, type AppRow } from './nvidiaSmi';
import { parseRayNodes } from './rayNodes';

export interface GpuWatcherOptions {
  db: Db;
  /** nvidia-smi's `-l N` and Ray's polling interval, in seconds (default 5). */
  intervalS?: number | undefined;
  /** The job's machine, as its backend reaches it (null: none, e.g. a Ray job). */
  transport(job: JobRecord): Promise<Transport | null>;
  /** GET a path of a Ray job's dashboard, as the Ray backend reaches it. */
  rayGet?: ((job: JobRecord, path: string) => Promise<{ status: number; body: string }>) | undefined;
  /** Takes secrets out of a remote's words before they are kept. */
  redact(text: string): string;
  onError?: ((message: string) => void) | undefined;
}

interface Active {
  /** Ends the sampler; resolves once what must be asked of the cluster (a Slurm step's scancel) was asked. */
  stop(): void | Promise<void>;
}

/** What srun, the transport or the node answered, made one short line. */
const oneLine = (s: string, max = 300): string => s.replace(/\s+/g, ' ').trim().slice(0, max);

/**
 * Samples the GPUs of each running job's nodes over the job's own connection: `nvidia-smi -l N` on
 * a local, SSH or Slurm job's node(s) (Slurm: a step in the job's allocation, `srun --overlap`),
 * Ray's node stats for a Ray job. The manager calls see() after each poll; sampling starts when the
 * job runs and stops when it ends. A dropped link is said in the sampler's state and tried again.
 */
export class GpuWatcher {
  readonly store: GpuStore;
  private readonly live = new Map<string, Active>();
  /** Jobs whose sampler finished by itself (no GPU on the node, the job's process gone). */
  private readonly finished = new Set<string>();
  /** Jobs being ended by the watcher itself: their stream's end is no drop. */
  private readonly stopping = new Set<string>();
  private readonly retryAt = new Map<string, number>();
  private readonly intervalS: number;
  private closed = false;

  constructor(private readonly o: GpuWatcherOptions) {
    this.store = new GpuStore(o.db);
    this.intervalS = Math.max(1, Math.round(o.intervalS ?? 5));
  }

  /** The job as the last poll saw it: start sampling when it runs, stop when it ended. */
  see(job: JobRecord): void {
    if (isTerminal(job.state)) return this.end(job);
    if (this.closed || job.state !== 'running' || this.live.has(job.id) || this.finished.has(job.id)) return;
    if ((this.retryAt.get(job.id) ?? 0) > Date.now()) return;
    this.live.set(job.id, { stop: () => undefined });
    void (job.backend === 'ray' ? this.pollRay(job) : this.streamShell(job)).catch((e: unknown) => this.o.onError?.(`gpu sampler of job ${job.id}: ${errorMessage(e)}`));
  }

  private end(job: JobRecord): void {
    const a = this.live.get(job.id);
    if (a) {
      this.stopping.add(job.id);
      void a.stop();
      this.live.delete(job.id);
    }
    this.retryAt.delete(job.id);
    const s = this.store.sampler(job.id);
    // The job's own outcome is the news, also where the node saw its process end first.
    if (s && (s.state !== 'ended' || s.detail.startsWith('sampling stopped: the job\'s process'))) this.store.setSampler(job.id, 'ended', `sampling stopped: the job ${job.state === 'cancelled' ? 'was cancelled' : `ended (${job.state})`}`);
  }

  /** The job is being removed: stop sampling it (its rows go with the job). */
  forget(id: string): void {
    this.stopping.add(id);
    void this.live.get(id)?.stop();
    this.live.delete(id);
    this.finished.delete(id);
  }

  /** Ends every sampler (a Slurm step is cancelled: it would run on until its job ends), waiting at most 5 s. */
  async close(): Promise<void> {
    this.closed = true;
    const asked: Promise<void>[] = [];
    for (const [id, a] of this.live) {
      this.stopping.add(id);
      asked.push(Promise.resolve(a.stop()));
    }
    this.live.clear();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled(asked), new Promise<void>((r) => (timer = setTimeout(r, 5000)))]);
    clearTimeout(timer);
  }

  private retryLater(job: JobRecord, state: 'dropped' | 'unavailable', why: string): void {
    const wait = (state === 'dropped' ? 3 : 6) * this.intervalS;
    this.retryAt.set(job.id, Date.now() + wait * 1000);
    this.store.setSampler(job.id, state, `${this.o.redact(why)}; trying again in ${wait} s`);
  }

  /** The command that samples the job's node(s), run through its transport. */
  private async command(job: JobRecord, t: Transport): Promise<string> {
    const pathVar = job.spec.env.PATH ? expand(job.spec.env.PATH, jobPaths(job, await machineHome(t))) : null;
    if (job.backend === 'slurm') {
      const id = job.externalId ?? '';
      if (!/^\d+(_\d+)?$/.test(id)) throw new DomainError('unavailable', `no Slurm job id recorded`);
      const nodes = Number(/\bNumNodes=(\d+)/.exec((await t.exec(`scontrol show job ${id} 2>/dev/null`)).stdout)?.[1] ?? 1);
      // A step inside the job's allocation, one task per node, sharing the job's resources
      // (--overlap); a step is given all the job's GRES unless it asks otherwise (srun(1), --gres),
      // so nvidia-smi sees the job's GPUs where cgroups hide the others.
      const script = nodeScript({ intervalS: this.intervalS, path: pathVar });
      return `exec srun --jobid=${id} --overlap --nodes=${Math.max(1, Math.min(nodes, 256))} --ntasks-per-node=1 --job-name=spade-workbench-gpu sh -c ${shQuote(script)}`;
    }
    const pid = Number((job.externalId ?? '').split(':')[0]);
    return `exec sh -c ${shQuote(nodeScript({ intervalS: this.intervalS, watchPid: Number.isInteger(pid) ? pid : null, path: pathVar }))}`;
  }

  private async streamShell(job: JobRecord): Promise<void> {
    let t: Transport;
    let cmd: string;
    try {
      const found = await this.o.transport(job);
      if (!found) throw new DomainError('unavailable', 'this job has no machine to run nvidia-smi on');
      t = found;
      cmd = await this.command(job, t);
    } catch (e) {
      this.live.delete(job.id);
      return this.retryLater(job, this.store.sampler(job.id) ? 'dropped' : 'unavailable', `could not reach the job's machine: ${oneLine(errorMessage(e))}`);
    }
    const apps = new Map<string, AppRow[]>();
    const seen = new Set<string>();
    let finished = false;
    let started = false;
    let step: string | null = null;
    const gpusOf = new Map<string, Set<number>>();
    // The rows of one `-l` round share its time, so the GPUs' series line up on one x: a round
    // starts again at an index not above the last one read.
    const round = new Map<string, { last: number; t: number }>();
    const onLine = (raw: string): void => {
      const l = readNodeLine(raw);
      if (!l || !this.live.has(job.id)) return;
      const now = Date.now() / 1000;
      if (l.tag === 'step') {
        if (job.backend === 'slurm' && /^\d+(_\d+)?\.\d+$/.test(l.payload) && l.payload.startsWith(`${job.externalId}.`)) step = l.payload;
      } else if (l.tag === 'nogpu') {
        finished = true;
        if (this.store.setNode(job.id, l.host, 'no-gpu', this.o.redact(oneLine(l.payload, 400)))) seen.add(l.host);
      } else if (l.tag === 'start') {
        started = true;
        if (this.store.setNode(job.id, l.host, 'gpus', `nvidia-smi every ${this.intervalS} s`)) seen.add(l.host);
        this.store.setSampler(job.id, 'sampling', `nvidia-smi on the job's node(s) every ${this.intervalS} s, over ${t.label}${job.backend === 'slurm' ? ` (srun --overlap in Slurm job ${job.externalId})` : ''}`);
      } else if (l.tag === 'end') {
        finished = true;
      } else if (!seen.has(l.host)) {
        return;
      } else if (l.tag === 'gpu') {
        const row = parseGpuLine(l.payload);
        if (!row) return;
        const known = gpusOf.get(l.host) ?? new Set<number>();
        gpusOf.set(l.host, known);
        if (!known.has(row.index) && known.size >= LIMITS.gpusPerNode) return;
        known.add(row.index);
        const r = round.get(l.host);
        const t = r && row.index > r.last ? r.t : now;
        round.set(l.host, { last: row.index, t });
        this.store.addSample(job.id, l.host, t, [row]);
      } else if (l.tag === 'apps') apps.set(l.host, []);
      else if (l.tag === 'app') {
        const row = parseAppLine(l.payload);
        const list = apps.get(l.host);
        if (row && list && list.length < LIMITS.appsPerNode) list.push(row);
      } else if (l.tag === 'appsend') {
        const list = apps.get(l.host);
        if (list) this.store.setProcs(job.id, l.host, now, list);
        apps.delete(l.host);
      }
    };
    const guarded = (raw: string): void => {
      try {
        onLine(raw);
      } catch (e) {
        this.o.onError?.(`gpu sampler of job ${job.id}: ${errorMessage(e)}`);
      }
    };
    let stream: Awaited<ReturnType<typeof streamLines>>;
    try {
      stream = await streamLines(t, cmd, guarded);
    } catch (e) {
      this.live.delete(job.id);
      return this.retryLater(job, this.store.sampler(job.id) ? 'dropped' : 'unavailable', `could not start nvidia-smi over ${t.label}: ${oneLine(errorMessage(e))}`);
    }
    if (this.stopping.has(job.id) || !this.live.has(job.id)) {
      stream.stop();
      this.stopping.delete(job.id);
      return;
    }
    const ended: Active = {
      stop: async () => {
        stream.stop();
        // The step would sample on until the job ends; scancel's own answer is not the news here.
        if (step) await t.exec(`scancel ${step}`).catch(() => undefined);
      },
    };
    this.live.set(job.id, ended);
    const r = await stream.done;
    if (this.stopping.delete(job.id) || this.live.get(job.id) !== ended) return;
    this.live.delete(job.id);
    if (finished) {
      this.finished.add(job.id);
      const noGpu = !started;
      this.store.setSampler(job.id, 'ended', noGpu ? "nothing to sample: no GPU seen on the job's node(s)" : "sampling stopped: the job's process ended");
      return;
    }
    const why = r.error ?? `the sampler exited${r.code === null ? '' : ` with code ${r.code}`}`;
    const said = r.stderr.trim() ? `: ${oneLine(r.stderr)}` : '';
    this.retryLater(job, started ? 'dropped' : 'unavailable', `${started ? 'sampling stopped' : 'nvidia-smi could not be started'} (${why})${said}`);
  }

  /** A Ray job: the dashboard's node stats every interval, until the job ends. */
  private async pollRay(job: JobRecord): Promise<void> {
    const get = this.o.rayGet;
    let stopped = false;
    this.live.set(job.id, {
      stop: () => {
        stopped = true;
      },
    });
    const where = job.spec.ray?.address ?? 'the Ray head';
    while (!stopped && !this.closed) {
      try {
        if (!get) throw new DomainError('unavailable', 'no Ray dashboard to ask');
        const r = await get(job, '/nodes?view=summary');
        if (r.status < 200 || r.status >= 300) throw new DomainError('unavailable', `HTTP ${r.status} ${oneLine(r.body, 200)}`);
        const nodes = parseRayNodes(r.body);
        if (stopped) break;
        const now = Date.now() / 1000;
        for (const n of nodes) {
          const has = n.gpus.length > 0;
          if (!this.store.setNode(job.id, n.node, has ? 'gpus' : 'no-gpu', has ? `Ray's node stats every ${this.intervalS} s` : 'Ray reports no GPU on this node')) continue;
          this.store.addSample(job.id, n.node, now, n.gpus);
          if (has) this.store.setProcs(job.id, n.node, now, n.apps);
        }
        this.store.setSampler(job.id, 'sampling', `Ray's node stats (GET /nodes?view=summary) from ${where} every ${this.intervalS} s: every node of the cluster, since Ray does not tie a job to nodes`);
      } catch (e) {
        this.store.setSampler(job.id, 'dropped', this.o.redact(`Ray's node stats could not be read from ${where}: ${oneLine(errorMessage(e))}; asking again`));
      }
      await new Promise((res) => setTimeout(res, this.intervalS * 1000));
    }
  }
}
