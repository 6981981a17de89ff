/**
 * STAND-IN, NOT RAY. Ray cannot be installed on these machines, so this small HTTP server
 * implements the documented Ray Jobs REST contract the workbench uses (POST /api/jobs/,
 * GET /api/jobs/{id}, GET /api/jobs/{id}/logs, POST /api/jobs/{id}/stop, DELETE /api/jobs/{id},
 * optional bearer token) by running each entrypoint with /bin/sh, as Ray's job supervisor does.
 * It exists only for the Ray backend's tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

interface StandInJob {
  id: string;
  status: 'PENDING' | 'RUNNING' | 'STOPPED' | 'SUCCEEDED' | 'FAILED';
  logs: string;
  child: ChildProcess | null;
  exitCode: number | null;
  entrypoint: string;
  env: Record<string, string>;
}

export interface RayStandIn {
  url: string;
  jobs: Map<string, StandInJob>;
  requests: { method: string; path: string; auth: string | undefined }[];
  close(): Promise<void>;
}

export async function startRayStandIn(opts: { token?: string } = {}): Promise<RayStandIn> {
  const jobs = new Map<string, StandInJob>();
  const requests: RayStandIn['requests'] = [];
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
        const body = JSON.parse(await readBody(req)) as { entrypoint: string; submission_id?: string; runtime_env?: { env_vars?: Record<string, string> } };
        const id = body.submission_id ?? `raysubmit_${jobs.size + 1}`;
        if (jobs.has(id)) return send(res, 400, { error: `Job with submission_id ${id} already exists` });
        const job: StandInJob = { id, status: 'PENDING', logs: '', child: null, exitCode: null, entrypoint: body.entrypoint, env: body.runtime_env?.env_vars ?? {} };
        jobs.set(id, job);
        const child = spawn('/bin/sh', ['-c', body.entrypoint], { env: { ...process.env, ...job.env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
        job.child = child;
        job.status = 'RUNNING';
        child.stdout!.on('data', (d: Buffer) => (job.logs += d.toString('utf8')));
        child.stderr!.on('data', (d: Buffer) => (job.logs += d.toString('utf8')));
        child.on('close', (code) => {
          job.exitCode = code;
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
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    jobs,
    requests,
    async close() {
      for (const j of jobs.values()) if (j.child?.pid && j.status === 'RUNNING') try { process.kill(-j.child.pid, 'SIGKILL'); } catch { /* gone */ }
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
