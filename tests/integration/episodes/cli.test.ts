import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../../core/cli/main';
import type { CliIO } from '../../../core/cli/command';
import { tempDir } from '../../helpers/tmp';
import { GAMES, GRID, LEAK } from './fixtures';

const tmp = tempDir('spade-replay-cli-');
afterAll(() => tmp.cleanup());

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIO = { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`) };
  const code = await main(['replay', ...args], io);
  return { code, out, err };
}

describe('spade-workbench replay', () => {
  it('plays ENV.py with an action script, with and without the hint, as a table', async () => {
    const actions = join(tmp.dir, 'acts.txt');
    writeFileSync(actions, 'I go \\boxed{up}\n\\boxed{left}\n# a comment\n\\boxed{down}\n');
    const r = await run([join(GAMES, `${GRID}.py`), '--seed', '3', '--actions', actions, '--compare-hint']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('hint=off');
    expect(r.out).toContain('hint=on');
    expect(r.out).toMatch(/\n\nHINT: /);
    expect(r.out).toMatch(/step\s+action\s+reward\s+term\s+trunc\s+observation/);
    expect(r.out).toContain('\\boxed{up}');
    expect(r.out).toContain('no divergence');
  });

  it('runs a numpy game natively by default (auto), as the app would, with SPADE\'s budget', async () => {
    const env = join(tmp.dir, 'np_game.py');
    writeFileSync(env, 'import numpy as np\nclass NpEnv:\n    def reset(self, seed=None):\n        self.n = 0\n        return str(np.arange(3).sum()), {}\n    def step(self, a):\n        self.n += 1\n        return str(self.n), 0.0, False, False, {}\n');
    const acts = join(tmp.dir, 'np_acts.txt');
    writeFileSync(acts, Array.from({ length: 40 }, () => '\\boxed{1}').join('\n'));
    const r = await run([env, '--seed', '1', '--actions', acts, '--json']);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as { episodes: { episode: { runtime: string }; steps: { kind: string; observation: string }[] }[] };
    expect(j.episodes[0]!.episode.runtime).toBe('cpython');
    expect(j.episodes[0]!.steps[0]!.observation).toBe('3');
    expect(j.episodes[0]!.steps.filter((x) => x.kind === 'step').length).toBe(30);
  });

  it('keeps a hint file verbatim, whitespace included (SPADE injects the hint as it is)', async () => {
    const hintFile = join(tmp.dir, 'hint.txt');
    writeFileSync(hintFile, '  Go up first.\n\n');
    const r = await run([join(GAMES, `${GRID}.py`), '--seed', '3', '--hint-file', hintFile, '--json']);
    expect(r.code).toBeLessThanOrEqual(1);
    const j = JSON.parse(r.out) as { episodes: { steps: { agentObservation?: string | null }[] }[] };
    expect(j.episodes[0]!.steps[0]!.agentObservation).toMatch(/\n\nHINT:   Go up first\.\n\n$/);
  });

  it('prints JSON and uses solution() when no actions are given', async () => {
    const r = await run([join(GAMES, `${GRID}.py`), '--seed', '7', '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as { episodes: { steps: { reward: number | null }[] }[]; reports: { divergence: unknown }[] };
    expect(j.episodes[0]!.steps.at(-1)!.reward).toBe(1);
    expect(j.reports[0]!.divergence).toBeNull();
  });

  it('replays a trajectory against ENV.py and exits 1 at the planted divergence', async () => {
    // obtain the true trace first, then plant a wrong reward at step 2
    const base = await run([join(GAMES, `${LEAK}.py`), '--seed', '9', '--json', '--actions', writeActs(['\\boxed{1}', '\\boxed{2}'])]);
    const trace = (JSON.parse(base.out) as { episodes: { steps: { observation: string }[] }[] }).episodes[0]!.steps;
    const msgs = [
      { role: 'user', content: `You are playing a language game. Make valid actions to win.\nObservation: ${trace[0]!.observation}\nPlease reason step by step, and put your final answer within \\boxed{}.` },
      { role: 'assistant', content: 'Maybe \\boxed{1}' },
      { role: 'user', content: trace[1]!.observation },
      { role: 'assistant', content: 'Then \\boxed{2}' },
      { role: 'user', content: trace[2]!.observation, reward: 0.5 },
    ];
    const f = join(tmp.dir, 'traj.json');
    writeFileSync(f, JSON.stringify({ messages: msgs }));
    const r = await run([f, '--env', join(GAMES, `${LEAK}.py`)]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('seed 9 found by search');
    expect(r.out).toContain('FIRST DIVERGENCE at step 2 (reward)');
  });

  it('refuses bad input with a usage error', async () => {
    expect((await run([join(GAMES, `${GRID}.py`)])).code).toBe(2);
    expect((await run([join(tmp.dir, 'missing.py'), '--seed', '1'])).code).toBe(2);
  });
});

function writeActs(a: string[]): string {
  mkdirSync(tmp.dir, { recursive: true });
  const p = join(tmp.dir, `a${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(p, JSON.stringify(a));
  return p;
}

describe('spade-workbench replay EPISODE.jsonl', () => {
  it('replays exported episodes (source embedded) and exits 1 when a recorded reward was altered', async () => {
    const { Services } = await import('../../../core/services/services');
    const { addSeedGame } = await import('./fixtures');
    const dir = tempDir('spade-replay-export-');
    const s = new Services({ dataDir: dir.dir, shell: 'in-process' });
    try {
      const h = addSeedGame(s.db, GRID);
      const ep = s.episodes;
      const { episode } = await ep.open({ hash: h, seed: 6, hint: false, label: '', runtime: 'pyodide' });
      await ep.run(episode.id, { kind: 'solution' }, { kind: 'done' }, 50);
      const text = ep.exportJsonl([episode.id]).text;
      const good = join(tmp.dir, 'good.jsonl');
      writeFileSync(good, text);
      const ok = await run([good]);
      expect(ok.code).toBe(0);
      expect(ok.out).toContain('no divergence');
      const rec = JSON.parse(text) as { steps: { reward: number | null }[] };
      rec.steps.at(-1)!.reward = 0.5;
      const bad = join(tmp.dir, 'bad.jsonl');
      writeFileSync(bad, `${JSON.stringify(rec)}\n`);
      const r = await run([bad]);
      expect(r.code).toBe(1);
      expect(r.out).toContain(`FIRST DIVERGENCE at step ${rec.steps.length - 1} (reward)`);

      // Without the embedded source, --data-dir finds the environment in that library (it was rejected as an option).
      const bare = JSON.parse(text) as Record<string, unknown>;
      expect(typeof bare.source).toBe('string');
      delete bare.source;
      const noSource = join(tmp.dir, 'nosource.jsonl');
      writeFileSync(noSource, `${JSON.stringify(bare)}\n`);
      expect((await run([noSource])).code).not.toBe(0);
      const withLib = await run([noSource, '--data-dir', dir.dir]);
      expect(withLib.err).toBe('');
      expect(withLib.out).toContain('no divergence');
      expect(withLib.code).toBe(0);
      // The library is read, not written: no episode was added to it.
      expect((s.db.prepare('SELECT COUNT(*) AS n FROM episodes').get() as { n: number }).n).toBe(1);
    } finally {
      await s.close();
      dir.cleanup();
    }
  });
});
