/**
 * STAND-IN, NOT RAY. The Ray tests run against a real head (ray-head.test.ts, started by
 * .ci/services.sh); this server exists only for what a real head cannot be made to do on demand:
 * cut tail sockets, refuse the tail endpoint, count requests, check bearer tokens, answer "No
 * available agent" like a fresh head. It implements the documented Ray Jobs REST contract the workbench uses (POST /api/jobs/,
 * GET /api/jobs/{id}, GET /api/jobs/{id}/logs, the /api/jobs/{id}/logs/tail WebSocket,
 * POST /api/jobs/{id}/stop, DELETE /api/jobs/{id}, optional bearer token) by running each
 * entrypoint with /bin/sh, as Ray's job supervisor does. Like Ray's, the tail sends the log from
 * its start, then each new piece, and closes normally when the job ends.
 * It exists only for the Ray backend's tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

interface StandInJob {
  id: string;
  status: 'PENDING' | 'RUNNING' | 'STOPPED' | 'SUCCEEDED' | 'FAILED';
  logs: string;
  child: ChildProcess | null;
  exitCode: number | null;
  entrypoint: string;
  env: Record<string, string>;
  tails: Set<WebSocket>;
  ended: boolean;
}

export interface RayStandIn {
  url: string;
  jobs: Map<string, StandInJob>;
  requests: { method: string; path: string; auth: string | undefined }[];
  /** Every tail socket upgrade asked for, whether it was accepted. */
  tailRequests: { job: string; auth: string | undefined; accepted: boolean }[];
  /** Cuts every open tail socket without a closing handshake, as a dropped network link does. */
  dropTails(): number;
  close(): Promise<void>;
}

/** `tail: false` answers the tail socket with 404, as a dashboard without the endpoint would. */
export async function startRayStandIn(opts: { token?: string; tail?: boolean; agentBusy?: number } = {}): Promise<RayStandIn> {
  let busy = opts.agentBusy ?? 0;
  const jobs = new Map<string, StandInJob>();
  const requests: RayStandIn['requests'] = [];
  const tailRequests: RayStandIn['tailRequests'] = [];
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const broadcast = (job: StandInJob, text: string): void => {
    job.logs += text;
    for (const ws of job.tails) ws.send(text);
  };
  const send = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const readBody = (req: IncomingMessage): Promise<string> =>
    new Promise((resolve) => {
      let s = '';
      req.on('data', (d: Buffer) => (s += d.toString('utf8')));
      req.on('end', () => resolve(s));
    });
  const server: Server = createServer((req, res) => {
    void (async () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      requests.push({ method: req.method ?? '', path, auth: req.headers.authorization });
      if (opts.token && req.headers.authorization !== `Bearer ${opts.token}`) return send(res, 401, { error: 'unauthorized' });
      if (req.method === 'POST' && path === '/api/jobs/') {
        if (busy > 0) {
          // What a fresh head answers while its job agent starts: a Python traceback, cause last.
          busy--;
          res.writeHead(503, { 'content-type': 'text/plain' });
          return res.end(`Traceback (most recent call last):\n  File "job_head.py", line 390, in submit_job\n    job_agent_client = await self.get_target_agent()\n${'  x\n'.repeat(40)}RuntimeError: No available agent to submit job, please try again later.\n`);
        }
        const body = JSON.parse(await readBody(req)) as { entrypoint: string; submission_id?: string; runtime_env?: { env_vars?: Record<string, string> } };
        const id = body.submission_id ?? `raysubmit_${jobs.size + 1}`;
        if (jobs.has(id)) return send(res, 400, { error: `Job with submission_id ${id} already exists` });
        const job: StandInJob = { id, status: 'PENDING', logs: '', child: null, exitCode: null, entrypoint: body.entrypoint, env: body.runtime_env?.env_vars ?? {}, tails: new Set(), ended: false };
        jobs.set(id, job);
        const child = spawn('/bin/sh', ['-c', body.entrypoint], { env: { ...process.env, ...job.env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
        job.child = child;
        job.status = 'RUNNING';
        child.stdout!.on('data', (d: Buffer) => broadcast(job, d.toString('utf8')));
        child.stderr!.on('data', (d: Buffer) => broadcast(job, d.toString('utf8')));
        child.on('close', (code) => {
          job.exitCode = code;
          job.ended = true;
          for (const ws of job.tails) ws.close(1000, 'job ended');
          job.tails.clear();
          if (job.status === 'RUNNING') job.status = code === 0 ? 'SUCCEEDED' : 'FAILED';
        });
        return send(res, 200, { job_id: id, submission_id: id });
      }
      const m = /^\/api\/jobs\/([^/]+)(\/logs|\/stop)?\/?$/.exec(path);
      const job = m ? jobs.get(decodeURIComponent(m[1]!)) : undefined;
      if (!m || !job) return send(res, 404, { error: 'not found' });
      if (req.method === 'GET' && !m[2]) return send(res, 200, { submission_id: job.id, status: job.status, message: `Job ${job.status.toLowerCase()}`, driver_exit_code: job.exitCode, entrypoint: job.entrypoint });
      if (req.method === 'GET' && m[2] === '/logs') return send(res, 200, { logs: job.logs });
      if (req.method === 'POST' && m[2] === '/stop') {
        const running = job.status === 'RUNNING';
        if (running && job.child?.pid) {
          job.status = 'STOPPED';
          try {
            process.kill(-job.child.pid, 'SIGTERM');
          } catch {
            // already gone
          }
        }
        return send(res, 200, { stopped: running });
      }
      if (req.method === 'DELETE' && !m[2]) {
        if (job.status === 'RUNNING' || job.status === 'PENDING') return send(res, 400, { error: 'job is still running' });
        jobs.delete(job.id);
        return send(res, 200, { deleted: true });
      }
      return send(res, 405, { error: 'method not allowed' });
    })();
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push({ method: 'WS', path, auth: req.headers.authorization });
    const m = /^\/api\/jobs\/([^/]+)\/logs\/tail\/?$/.exec(path);
    const job = m ? jobs.get(decodeURIComponent(m[1]!)) : undefined;
    const refuse = (status: string): void => {
      tailRequests.push({ job: m ? decodeURIComponent(m[1]!) : path, auth: req.headers.authorization, accepted: false });
      socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    };
    if (opts.tail === false || !m) return refuse('404 Not Found');
    if (opts.token && req.headers.authorization !== `Bearer ${opts.token}`) return refuse('401 Unauthorized');
    if (!job) return refuse('404 Not Found');
    tailRequests.push({ job: job.id, auth: req.headers.authorization, accepted: true });
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('error', () => {
        // a cut link; the socket is forgotten on close
      });
      ws.on('close', () => job.tails.delete(ws));
      if (job.logs) ws.send(job.logs);
      if (job.ended) ws.close(1000, 'job ended');
      else job.tails.add(ws);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    jobs,
    requests,
    tailRequests,
    dropTails() {
      let n = 0;
      for (const j of jobs.values()) {
        for (const ws of j.tails) {
          ws.terminate();
          n++;
        }
        j.tails.clear();
      }
      return n;
    },
    async close() {
      for (const j of jobs.values()) if (j.child?.pid && j.status === 'RUNNING') try { process.kill(-j.child.pid, 'SIGKILL'); } catch { /* gone */ }
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
