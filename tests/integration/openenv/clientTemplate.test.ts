/**
 * An environment from OpenEnv's own template (`openenv init`, from the pinned openenv venv) served by
 * its own server (uvicorn from that venv, as the template's server/app.py says: `uvicorn
 * server.app:app --host ... --port ...`), opened, played and audited over the wire by the workbench.
 * The template is an echo game: its reset ignores the seed, each step's reward is
 * min(0.1 * len(message), 1) and it never ends; the test checks what the workbench saw against that.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeServer, WireSession } from '../../../core/openenv/client';
import { playRemote, scriptedActor } from '../../../core/openenv/remotePlay';
import { auditWire } from '../../../core/openenv/wireAudit';
import { tempDir } from '../../helpers/tmp';
import { python, ROOT, runCli } from './serveEnvHelpers';

const VENV = process.env.SPADE_OPENENV_VENV ?? join(ROOT, 'scratch', 'openenv-venv');
const HAS_VENV = existsSync(join(VENV, 'bin', 'openenv'));
if (!HAS_VENV) console.warn(`clientTemplate: skipped, no OpenEnv venv at ${VENV} (node scripts/openenv-venv.mjs makes it; SPADE_OPENENV_VENV points at another)`);

const tmp = tempDir('spade-openenv-template-');
let child: ChildProcess | null = null;
let url = '';
let log = '';

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => ok(p));
    });
  });
}

beforeAll(async () => {
  if (!HAS_VENV) return;
  const init = await python(VENV, [join(VENV, 'bin', 'openenv'), 'init', 'echo_env', '--output-dir', tmp.dir]);
  expect(init.code, init.out + init.err).toBe(0);
  const dir = join(tmp.dir, 'echo_env');
  // The template's own word on how its server runs.
  expect(readFileSync(join(dir, 'server', 'app.py'), 'utf8')).toContain('uvicorn server.app:app');
  const port = await freePort();
  child = spawn(join(VENV, 'bin', 'python'), ['-m', 'uvicorn', 'server.app:app', '--host', '127.0.0.1', '--port', String(port)], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  url = `http://127.0.0.1:${port}`;
  const until = Date.now() + 60_000;
  for (;;) {
    const up = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (child.exitCode !== null || Date.now() > until) throw new Error(`The template's server did not come up: ${log}`);
    await new Promise((ok) => setTimeout(ok, 250));
  }
});
afterAll(async () => {
  if (child && child.exitCode === null) {
    const gone = new Promise((ok) => child!.once('exit', ok));
    child.kill('SIGTERM');
    await gone;
  }
  tmp.cleanup();
});

describe.skipIf(!HAS_VENV)("OpenEnv's own template, served by its own server, in the workbench", () => {
  it('opens: its metadata and schema, a text action, no hint', async () => {
    const info = await describeServer(url);
    expect(info.healthy).toBe(true);
    expect(info.metadata.name).toBe('EchoEnvironment');
    expect(info.textField).toBe('message');
    expect(info.hintMode).toBeNull();
    expect(info.tasks).toBeNull();
  });

  it('plays an episode: each observation echoes the action, with its reward', async () => {
    const info = await describeServer(url);
    const texts = ['hi', 'hello world', 'abc'];
    const s = await WireSession.open(url);
    const ep = await playRemote(s, info, { seed: 7, hint: false, maxTurns: 3, actor: scriptedActor(texts) });
    const state = await s.state();
    await s.close();
    expect(ep.endedBy).toBe('budget');
    expect(ep.turns[0]!.observation!.echoed_message).toBe('Echo Env environment ready!');
    expect(ep.turns.slice(1).map((t) => [t.observation!.echoed_message, t.reward, t.done])).toEqual(texts.map((m) => [m, Math.min(m.length * 0.1, 1), false]));
    expect(state.step_count).toBe(3);
  });

  it("refuses the hint on it rather than send one it would ignore", async () => {
    const info = await describeServer(url);
    const s = await WireSession.open(url);
    try {
      await expect(playRemote(s, info, { seed: 0, hint: true, maxTurns: 1, actor: scriptedActor(['x']) })).rejects.toThrow(/This server has no hint/);
    } finally {
      await s.close();
    }
  });

  it('is audited over the wire: deterministic, the seed ignored (a warning), malformed actions refused, rewards in range', async () => {
    const a = await auditWire(url);
    expect(a.checks.map((c) => [c.id, c.status])).toEqual([
      ['wire.determinism', 'pass'],
      ['wire.seed_use', 'warn'],
      ['wire.malformed_action', 'pass'],
      ['wire.reward_range', 'pass'],
    ]);
    expect(a.checks[2]!.evidence.refused).toMatch(/VALIDATION_ERROR/);
    expect(a.verdict).toBe('warn');
  });

  it('the CLI says the same: `openenv-audit --json` and `openenv-play`', async () => {
    const audit = await runCli(['openenv-audit', '--url', url, '--json']);
    expect(audit.code, audit.err).toBe(0);
    expect((JSON.parse(audit.out) as { verdict: string }).verdict).toBe('warn');
    const play = await runCli(['openenv-play', '--url', url, '--max-turns', '2', '--json']);
    expect(play.code, play.err).toBe(0);
    const ep = JSON.parse(play.out) as { endedBy: string; turns: unknown[]; server: { hint_mode: unknown } };
    // No actions given: it resets and stops.
    expect(ep.endedBy).toBe('stopped');
    expect(ep.turns.length).toBe(1);
    expect(ep.server.hint_mode).toBeNull();
  });
});
