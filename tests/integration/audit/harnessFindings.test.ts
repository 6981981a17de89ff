import { afterAll, describe, expect, it } from 'vitest';
import { AuditPool } from '../../../core/audit/pool';
import { PyodideAuditRunner } from '../../../core/audit/pyodideRunner';
import { spadeVerdictOf, type AuditOptions, type EnvAudit } from '../../../core/audit/types';
import { PyodidePool } from '../../../core/runtime/pyodidePool';
import { ensureChildBuilt } from '../runtime/helpers';

/**
 * Issue 31, in both runtimes (real CPython in bubblewrap, real Pyodide): what the harness does on
 * the game's behalf is never the game's finding (a syntax error is SPADE's load failure and nothing
 * else), while what the game does itself still is (its own reads are refused and reported, and a
 * flood of printed output is a finding of its own, with the byte count).
 */
ensureChildBuilt();
const pyodide = new PyodidePool({ size: 1, graceMs: 2000 });
const native = new AuditPool({ workers: 1, envTimeoutSec: 60 });
const sandbox = new PyodideAuditRunner(() => pyodide, 60_000);
afterAll(async () => {
  await pyodide.shutdown();
  await native.close();
});

const runtimes: [string, (source: string, options?: AuditOptions) => Promise<EnvAudit>][] = [
  ['native CPython', (source, options = {}) => native.audit(source, options)],
  ['Pyodide', (source, options = {}) => sandbox.audit(source, options)],
];

const check = (a: EnvAudit, id: string) => {
  const c = a.checks.find((x) => x.id === id);
  if (!c) throw new Error(`no ${id} in ${a.checks.map((x) => x.id).join(', ')}`);
  return c;
};
const failed = (a: EnvAudit) => a.checks.filter((c) => c.status === 'fail').map((c) => c.id);

const SYNTAX_ERROR = 'class BrokenEnv:\n    def reset(self, seed=None)\n        return "x", {}\n';

// A game that compiles a broken string itself: CPython's parser looks for the bad line in a file
// named "<string>" then, exactly as it does for the harness's compile of the source.
const OWN_EXEC_SYNTAX_ERROR = 'exec("x = (")\n\nclass NeverEnv:\n    pass\n';

// The same pseudo-file and a real file outside, asked for by the game itself, one way per game.
const reads = (attempt: string) => String.raw`
import linecache, os

try:
    GOT = repr(${attempt})[:40]
except Exception as e:
    GOT = type(e).__name__

class ReaderEnv:
    def reset(self, seed=None):
        return "got " + GOT, {}

    def step(self, action):
        return "done", 1.0, True, False, {}
`;
const OWN_READS: [string, string][] = [
  ['open("<env>").read()', "'<env>'"],
  ['open("<env>", "rb").read()', "'<env>'"],
  ['os.open("<env>", os.O_RDONLY)', "'<env>'"],
  ['linecache.getline("/dev/null", 1)', "'/dev/null'"],
];

const game = (flood: boolean) => String.raw`
import random, sys

class NoisyEnv:
    def __init__(self):
        self.max_turns = 5
        self.turn = 0
        self.secret = 0

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        self.secret = random.randint(1, 9)
        if seed == 42:  # SPADE's load resets with 42: a flood on every load, in 1 MiB chunks
            ${flood ? 'for _ in range(25):\n                print("x" * (1 << 20))\n                print("y" * (1 << 20), file=sys.stderr)' : 'pass'}
        return "Guess a digit from 1 to 9", {}

    def step(self, action):
        self.turn += 1
        if action == "\\boxed{%d}" % self.secret:
            return "right", 1.0, True, False, {}
        return "no", 0.0, False, self.turn >= self.max_turns, {}

    def solution(self):
        return self.secret
`;

describe.each(runtimes)('issue 31 in %s', (_name, audit) => {
  it('a syntax error fails SPADE\'s load with SPADE\'s message and nothing else: compiling the source is the harness\'s doing', async () => {
    const a = await audit(SYNTAX_ERROR);
    expect(failed(a)).toEqual(['spade.exec']);
    expect(check(a, 'spade.exec').message).toBe("Syntax error in generated game code: expected ':' (<string>, line 2)");
    expect(check(a, 'sandbox').status).toBe('pass');
    expect(spadeVerdictOf(a.checks).verdict).toBe('reject');

    const own = await audit(OWN_EXEC_SYNTAX_ERROR);
    expect(failed(own)).toEqual(['spade.exec']);
    expect(check(own, 'spade.exec').message).toMatch(/^Syntax error in generated game code: /);
    expect(check(own, 'sandbox').status).toBe('pass');
  });

  it('a game that reads the pseudo-file or a file outside itself is still refused and reported', async () => {
    for (const [attempt, detail] of OWN_READS) {
      const a = await audit(reads(attempt));
      expect(check(a, 'spade.reset').status, attempt).toBe('pass');
      const sb = check(a, 'sandbox');
      expect(sb.status, attempt).toBe('fail');
      expect(sb.evidence.attempts, attempt).toContainEqual({ event: 'open', detail });
    }
  });

  it('a game that prints ~50 MB is flagged (output-flood, warn) with the byte count; SPADE\'s verdict and the other checks stay as without the prints', async () => {
    const loud = await audit(game(true));
    const quiet = await audit(game(false));
    const flood = check(loud, 'output-flood');
    expect(flood.status).toBe('warn');
    const bytes = flood.evidence.bytes as number;
    expect(bytes).toBeGreaterThanOrEqual(50 * (1 << 20));
    // Every byte of stdout and stderr, kept or not: 25 MiB and 25 newlines to each, at every load.
    expect(bytes % (50 * (1 << 20) + 50)).toBe(0);
    expect(flood.message).toContain(`${bytes} bytes`);
    expect(check(quiet, 'output-flood')).toMatchObject({ status: 'pass', evidence: { bytes: 0 } });
    expect(spadeVerdictOf(loud.checks)).toEqual({ verdict: 'accept', message: null, check: null });
    // timing apart: writing 50 MB takes the time it takes.
    const others = (a: EnvAudit) => a.checks.filter((c) => c.id !== 'output-flood' && c.id !== 'timing').map((c) => `${c.id}:${c.status}`);
    expect(others(loud)).toEqual(others(quiet));
  });
});
