import { writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../../core/cli/main';
import type { CliIO } from '../../../core/cli/command';
import { buildSpec } from '../../../core/jobs/launch';
import type { SshTarget } from '../../../core/jobs/types';
import { firstPrompt } from '../../../core/episodes/hint';
import { memoryCatalog } from '../../../core/episodes/catalog';
import { EpisodeService } from '../../../core/episodes/service';
import { EpisodeStore } from '../../../core/episodes/episodeStore';
import { openDatabase } from '../../../core/memory/db';
import { endpointSchema, type EndpointInput } from '../../../core/api/calls/models';
import { ModelError } from '../../../core/models/client';
import { ModelService } from '../../../core/runs/modelService';
import { RunService } from '../../../core/runs/service';
import { FakeRuntime, type FakeGame } from '../../helpers/fakeRuntime';
import { startStandIn, type Responder, type StandIn } from '../../helpers/standInOpenAi';
import { heldHere } from '../../helpers/sockets';
import { tempDir } from '../../helpers/tmp';
import { ciServices, makeManager, SERVICES_MISSING, waitFor, waitState } from '../jobs/helpers';

// Model endpoints reached through a job's SSH connection, against the real sshd of
// .ci/services.sh and the stand-in OpenAI-compatible server. The sshd runs on this machine, so the
// stand-in's 127.0.0.1 address is also "the server as the SSH host sees it"; that no request went
// around the tunnel is checked per request: the client end of the connection the stand-in serves
// must belong to another process (sshd), not to this one (Linux /proc), and fetch() fails here.

const ci = ciServices();
if (!ci) console.warn(`[model SSH tunnel tests skipped] ${SERVICES_MISSING}`);
const d = ci ? describe : describe.skip;

const KEY = 'sk-tunnel-7d1e04c2';

/** Guess-the-number: 7 wins; five turns at most. */
const guess = (): FakeGame => {
  let turns = 0;
  return {
    reset: () => {
      turns = 0;
      return 'Guess a number 1-10.';
    },
    step: (a) => {
      turns++;
      if (a === '\\boxed{7}') return ['Correct!', 1, true, false, {}];
      return [turns >= 5 ? 'Out of turns' : `No, not ${a}.`, 0, false, turns >= 5, {}];
    },
  };
};

const hinted = (b: Record<string, unknown>) => String((b.messages as { content: string }[])[0]!.content).includes('HINT: ');
const turnOf = (b: Record<string, unknown>) => (b.messages as { role: string }[]).filter((m) => m.role === 'assistant').length;

d('model endpoints through a job\'s SSH tunnel (real sshd, stand-in server)', () => {
  const tmp = tempDir('spade-models-tunnel-');
  let ctx: ReturnType<typeof makeManager>;
  let target: SshTarget;
  let jobId = '';
  let localJobId = '';
  let server: StandIn | null = null;
  /** Per request the stand-in served: whether its client end was a socket of this process. */
  let direct: boolean[] = [];
  /** The stand-in, recording for each request whether it came straight from this process. */
  async function start(respond: Responder): Promise<StandIn> {
    direct = [];
    let port = 0;
    const s = await startStandIn((b, n, c) => {
      direct.push(heldHere(c.remotePort, port));
      return respond(b, n, c);
    });
    port = Number(new URL(s.url).port);
    return s;
  }
  const allTunnelled = () => expect(direct.length > 0 && direct.every((x) => !x), `direct: ${JSON.stringify(direct)}`).toBe(true);

  beforeAll(async () => {
    // Nothing in this file may reach a server directly: the tunnel speaks node:http over SSH channels.
    vi.stubGlobal('fetch', () => Promise.reject(new Error('fetch() called: a request went around the SSH tunnel')));
    target = { host: ci!.host, port: ci!.port, user: ci!.user, identityFile: ci!.key, knownHostsFile: ci!.knownHosts };
    ctx = makeManager(tmp.dir);
    // The job a model server would run in (here it only sleeps): its SSH connection carries the traffic.
    const job = await ctx.manager.submit(buildSpec({ name: 'sglang server', backend: 'ssh', ssh: target, workdir: join(tmp.dir, 'remote'), command: ['sleep', '600'], poolDir: null }));
    await waitState(ctx.manager, job.id, ['running']);
    jobId = job.id;
    localJobId = (await ctx.manager.submit(buildSpec({ name: 'local one', backend: 'local', workdir: join(tmp.dir, 'local'), command: ['true'], poolDir: null }))).id;
  });
  afterEach(async () => {
    await server?.close();
    server = null;
  });
  afterAll(async () => {
    vi.unstubAllGlobals();
    if (jobId) await ctx.manager.stop(jobId).catch(() => undefined);
    await ctx.manager.close();
    ctx.db.close();
    tmp.cleanup();
  });

  function models() {
    const db = openDatabase(':memory:');
    const catalog = memoryCatalog(db);
    const episodes = new EpisodeService({ store: new EpisodeStore(db), catalog, runtime: new FakeRuntime(guess), defaults: () => ({ maxTurns: 30 }) });
    const hash = catalog.add(`class GuessEnv:\n    pass  # ${Math.random()}\n`, 'guess', 'guess.py');
    const secrets = new Map([['MODEL_KEY', KEY]]);
    const svc = new ModelService({ episodes, runs: new RunService({ db, catalog, minShare: () => 1 }), secret: (n) => secrets.get(n), envInfo: () => ({ skill: null, recordedRegret: null, recordedWinRate: null }), tunnel: (id) => ctx.manager.tunnelFor(id) });
    return { svc, episodes, hash };
  }

  const endpoint = (url: string, over: Partial<EndpointInput> = {}) =>
    endpointSchema.parse({ baseUrl: url, model: 'stand-in', apiKeySecret: 'MODEL_KEY', maxTokens: 256, turnTimeoutSec: 20, via: { jobId }, ...over });

  it('tells a request from this process apart from one through the tunnel (the check the other tests rely on)', async () => {
    server = await start(() => ({ content: 'hi' }));
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${server!.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(JSON.stringify({ model: 'm', messages: [] }));
    });
    expect(status).toBe(200);
    expect(direct).toEqual([true]);
    const { svc } = models();
    await svc.client(svc.config(endpoint(server.url))).complete([{ role: 'user', content: 'hi' }]);
    expect(direct).toEqual([true, false]);
  });

  it('plays hinted and unhinted episodes through the tunnel, JSON and SSE, sending exactly SPADE\'s messages', async () => {
    const conn = ctx.manager.connection(target);
    for (const stream of [false, true]) {
      // hinted: \boxed{3} then \boxed{7} (wins on turn 2); unhinted: \boxed{1} until the game ends it
      server = await start((b) => ({ content: hinted(b) ? (turnOf(b) === 0 ? 'I try \\boxed{3}' : 'so \\boxed{7}') : 'maybe \\boxed{1}' }));
      const { svc, episodes, hash } = models();
      const before = conn.forwards;
      const r = await svc.play({ hashes: [hash], endpoint: endpoint(server.url, { stream }), seeds: 1, seedStart: 3, arms: ['hint', 'nohint'], estimator: 'paired', hintText: ' think of  7\n' });
      expect(r.envs).toEqual([expect.objectContaining({ rHint: 1, rNoHint: 0, regret: 1 })]);

      const hint = server.requests.filter(hinted).map((b) => b.messages);
      const first = firstPrompt('Guess a number 1-10.\n\nHINT:  think of  7\n');
      expect(hint).toEqual([
        [{ role: 'user', content: first }],
        [
          { role: 'user', content: first },
          { role: 'assistant', content: 'I try \\boxed{3}' },
          { role: 'user', content: 'No, not \\boxed{3}.' },
        ],
      ]);
      const plain = server.requests.filter((b) => !hinted(b)).map((b) => b.messages as { role: string; content: string }[]);
      expect(plain).toHaveLength(5);
      expect(plain[4]).toEqual([
        { role: 'user', content: firstPrompt('Guess a number 1-10.') },
        ...[1, 2, 3, 4].flatMap(() => [
          { role: 'assistant', content: 'maybe \\boxed{1}' },
          { role: 'user', content: 'No, not \\boxed{1}.' },
        ]),
      ]);
      expect(server.requests.every((b) => (b.stream === true) === stream && b.model === 'stand-in' && b.max_tokens === 256)).toBe(true);
      if (stream) expect(server.requests[0]).toMatchObject({ stream_options: { include_usage: true } });
      expect(server.auth.every((a) => a === `Bearer ${KEY}`)).toBe(true);
      // every request had its own forwarded channel on the job's SSH connection
      expect(conn.forwards - before).toBe(server.requests.length);
      allTunnelled();
      // the transcript and policy record where the model was reached, never the key
      const ep = episodes.get(r.episodes[0]!.episodeId).episode;
      expect(ep.policy).toMatchObject({ kind: 'llm', endpoint: server.url, via: { jobId } });
      expect(JSON.stringify(ep)).not.toContain(KEY);
      expect(r.episodes.every((e) => e.turns.every((t) => t.usage && t.error === null))).toBe(true);
      await server.close();
      server = null;
    }
  });

  it('keeps the concurrency limit, answers a ping and times out a slow turn through the tunnel', async () => {
    server = await start((_b, n) => (n < 8 ? { content: `answer ${n}`, delayMs: 300 } : { content: 'late', delayMs: 3000 }));
    const { svc } = models();
    const client = svc.client(svc.config(endpoint(server.url, { concurrency: 4, stream: true })));
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => client.complete([{ role: 'user', content: `q${i}` }])));
    expect(answers.map((a) => a.text).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `answer ${i}`).sort());
    // four at once: the fifth arrives only after the first answers
    const t = server.arrivals;
    expect(t[3]! - t[0]!).toBeLessThan(250);
    expect(t[4]! - t[0]!).toBeGreaterThanOrEqual(250);
    const slow = svc.client(svc.config(endpoint(server.url, { turnTimeoutSec: 1, retries: 0 })));
    await expect(slow.complete([{ role: 'user', content: 'slow' }])).rejects.toMatchObject({ kind: 'timeout' });
    const ping = await svc.ping(endpoint(server.url));
    expect(ping).toMatchObject({ ok: true, text: 'late' });
    allTunnelled();
  });

  it('a dropped SSH connection fails the request clearly; a retry reconnects and completes it', async () => {
    const conn = ctx.manager.connection(target);
    for (const stream of [false, true]) {
      server = await start((_b, n) => (n === 0 ? { content: 'never arrives', delayMs: 1500 } : { content: 'after reconnecting' }));
      const { svc } = models();
      const once = svc.client(svc.config(endpoint(server.url, { retries: 0, stream })));
      const pending = once.complete([{ role: 'user', content: 'hello' }]);
      await waitFor('the request to reach the server', () => server!.requests.length === 1, 10_000);
      conn.drop();
      const err = await pending.then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(ModelError);
      expect(err).toMatchObject({ kind: 'network' });
      expect((err as Error).message).toMatch(/SSH connection of job sglang server \(SSH .*\) dropped during the request to 127\.0\.0\.1:\d+/);
      expect((err as Error).message).not.toContain(KEY);

      const connects = conn.connects;
      const retrying = svc.client(svc.config(endpoint(server.url, { retries: 2, stream })));
      const got = await retrying.complete([{ role: 'user', content: 'hello again' }]);
      expect(got).toMatchObject({ text: 'after reconnecting', attempts: 1 });
      expect(conn.connects).toBeGreaterThan(connects);
      allTunnelled();
      await server.close();
      server = null;
    }
    // a drop in the middle of a streamed answer: the stream fails saying so
    server = await start((_b, n) => (n === 0 ? { content: 'a streamed answer cut in the middle', chunkDelayMs: 400 } : { content: 'x' }));
    {
      const { svc } = models();
      const pending = svc.client(svc.config(endpoint(server.url, { retries: 0, stream: true }))).complete([{ role: 'user', content: 'stream' }]);
      await waitFor('the request to reach the server', () => server!.requests.length === 1, 10_000);
      await new Promise((r) => setTimeout(r, 200));
      conn.drop();
      const err = await pending.then(() => null, (e: unknown) => e);
      expect(err).toMatchObject({ kind: 'network', message: expect.stringMatching(/SSH connection of job sglang server .* dropped during the request/) });
    }
    allTunnelled();
    await server.close();
    // a drop in the middle of a retried request: the retry reconnects and the answer comes back
    server = await start((_b, n) => (n === 0 ? { content: 'never arrives', delayMs: 1500 } : { content: 'second attempt' }));
    const { svc } = models();
    const c = svc.client(svc.config(endpoint(server.url, { retries: 2 })));
    const pending = c.complete([{ role: 'user', content: 'x' }]);
    await waitFor('the request to reach the server', () => server!.requests.length === 1, 10_000);
    const connects = conn.connects;
    conn.drop();
    expect(await pending).toMatchObject({ text: 'second attempt', attempts: 2 });
    expect(conn.connects).toBeGreaterThan(connects);
    allTunnelled();
  });

  it('says clearly when nothing listens there, the job has no SSH host, or there is no such job', async () => {
    const closed = await start(() => ({ content: 'x' }));
    const deadUrl = closed.url;
    await closed.close();
    const { svc } = models();
    const err = await svc.client(svc.config(endpoint(deadUrl, { retries: 0 }))).complete([{ role: 'user', content: 'x' }]).then(() => null, (e: unknown) => e);
    expect(err).toMatchObject({ kind: 'network' });
    expect((err as Error).message).toMatch(/could not reach 127\.0\.0\.1:\d+ through job sglang server \(SSH .*\): SSH tunnel to 127\.0\.0\.1:\d+ .* refused/);
    const ping = await svc.ping(endpoint(deadUrl));
    expect(ping.ok).toBe(false);
    await expect(svc.ping(endpoint(deadUrl, { via: { jobId: localJobId } }))).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringMatching(/has no SSH host/) });
    await expect(svc.ping(endpoint(deadUrl, { via: { jobId: 'jnosuchjob' } }))).rejects.toMatchObject({ code: 'not_found' });
  });

  it('play --via-job JOB_ID sends the episode through the job\'s SSH connection', async () => {
    server = await start((b) => ({ content: hinted(b) ? '\\boxed{7}' : '\\boxed{3}' }));
    const env = join(tmp.dir, 'guess.py');
    writeFileSync(
      env,
      'class GuessEnv:\n    def reset(self, seed=None):\n        self.turn = 0\n        return "Guess my number (1-10).", {}\n\n' +
        '    def step(self, action):\n        self.turn += 1\n        if action == "\\\\boxed{7}":\n            return "Correct!", 1.0, True, False, {}\n' +
        '        return f"Not {action}.", 0.0, False, self.turn >= 2, {}\n',
    );
    let out = '';
    let errText = '';
    const io: CliIO = { out: (t) => (out += `${t}\n`), err: (t) => (errText += `${t}\n`) };
    process.env.SPADE_TUNNEL_TEST_KEY = KEY;
    const args = [env, '--endpoint', server.url, '--model', 'stand-in', '--api-key-env', 'SPADE_TUNNEL_TEST_KEY', '--seeds', '1', '--hint', 'seven', '--compare-hint', '--stream', '--runtime', 'pyodide', '--data-dir', tmp.dir, '--json'];
    const code = await main(['play', ...args, '--via-job', jobId], io);
    expect(errText).toBe('');
    expect(code).toBe(0);
    const j = JSON.parse(out) as { via: unknown; episodes: { hint: boolean; return: number; messages: { role: string; content: string }[] }[] };
    expect(j.via).toEqual({ jobId });
    expect(j.episodes.map((e) => [e.hint, e.return]).sort()).toEqual([[false, 0], [true, 1]]);
    const plain = j.episodes.find((e) => !e.hint)!;
    expect(server.requests.filter((b) => !hinted(b)).map((b) => b.messages)).toEqual([plain.messages.slice(0, 1), plain.messages.slice(0, 3)]);
    expect(server.auth.every((a) => a === `Bearer ${KEY}`)).toBe(true);
    expect(out + errText).not.toContain(KEY);
    allTunnelled();

    const bad = await main(['play', ...args, '--via-job', localJobId], { out: () => undefined, err: (t) => (errText = t) });
    expect(bad).toBe(2);
    expect(errText).toMatch(/has no SSH host: --via-job needs a job run over SSH or Slurm/);
    expect(await main(['play', ...args, '--via-job', 'jnosuchjob'], { out: () => undefined, err: (t) => (errText = t) })).toBe(2);
    expect(errText).toMatch(/No job jnosuchjob in /);
    delete process.env.SPADE_TUNNEL_TEST_KEY;
  });
});
