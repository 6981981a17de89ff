// The acceptance verdict of design rounds (issue 44), over real audits (native CPython in
// bubblewrap): SPADE's trainer acceptance by default, the random-guess test and the workbench's
// checks as advice, the workbench gate as a labelled option, the reset gate and the LLM validator
// only where the recipe turns them on, and "LLM validator not run" never passing silently.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditPool } from '../../../core/audit/pool';
import { acceptanceAuditOptions, decideAcceptance, NOT_RUN_VALIDATOR, verdictLine, type AcceptancePolicy, type EnvValidatorStep } from '../../../core/design/acceptance';
import { writeSpadeLayout } from '../../../core/design/round';
import type { RoundView } from '../../../core/design/designStore';
import { DESIGN_PRESETS, presetById } from '../../../core/api/designPresets';

const FIX = join(__dirname, '..', '..', 'fixtures');
const game = (p: string) => readFileSync(join(FIX, p), 'utf8').replace(/^"""SPADE self-play generated game"""\n+/, '');
const SPADE: AcceptancePolicy = { gate: 'spade', resetGate: false, envValidator: false, maxTurns: 25 };
const TOOL_USE: AcceptancePolicy = { gate: 'spade', resetGate: true, envValidator: true, maxTurns: 25 };

let pool: AuditPool;
beforeAll(() => {
  pool = new AuditPool({ workers: 2, envTimeoutSec: 120 });
});
afterAll(async () => {
  await pool.close();
});

async function verdict(code: string, policy: AcceptancePolicy, rollout = 1, validator: EnvValidatorStep | null = null) {
  const audit = await pool.audit(code, { maxTurns: policy.maxTurns, ...acceptanceAuditOptions(policy, rollout) });
  return { audit, v: await decideAcceptance(audit, code, policy, { rollout, skill: 'Logical Deduction', validator }) };
}

describe('design acceptance', () => {
  it('keeps a too-easy game in SPADE mode with the random-guess test (legacy load) as advice; the workbench gate refuses it', async () => {
    // Played as designed (one guess) random guesses win ~8%; SPADE's test forces max_turns 1000: 30%.
    const code = game('spade-acceptance/a03_too_easy_only_in_legacy.py');
    const { v } = await verdict(code, SPADE);
    expect(v.accepted).toBe(true);
    expect(v.steps.map((s) => [s.id, s.status])).toEqual([['validate_game', 'pass'], ['reset_gate', 'off'], ['env_validator', 'off']]);
    expect(v.advice.find((a) => a.id === 'too-easy')).toMatchObject({ status: 'fail', message: 'Random guesses win 6/20 episodes (30% > 15%)' });
    const wb = await verdict(code, { ...SPADE, gate: 'workbench' });
    expect(wb.v.accepted).toBe(false);
    expect(wb.v.kind).toBe('too-easy');
    // The audit's own reading (respect mode, the game's one guess) does not find it too easy.
    const respect = await pool.audit(code, { maxTurns: 25 });
    expect(respect.checks.find((c) => c.id === 'too-easy')!.status).toBe('pass');
  }, 180_000);

  it("decides on validate_game alone: a game whose play-time load fails is kept, one whose legacy load fails is refused in SPADE's words", async () => {
    const a = await verdict(game('spade-acceptance/a01_respect_load_fails.py'), SPADE);
    expect(a.audit.checks.find((c) => c.id === 'spade.instantiate')!.status).toBe('fail');
    expect(a.v.accepted).toBe(true);
    const b = await verdict(game('spade-acceptance/a02_legacy_load_fails.py'), SPADE);
    expect(b.audit.checks.find((c) => c.id === 'spade.instantiate')!.status).toBe('pass');
    expect(b.v.accepted).toBe(false);
    expect(b.v.kind).toBe('validate_game');
    expect(b.v.reason).toBe('Game validation failed: Failed to instantiate game class: at most 100 turns');
    expect(verdictLine(b.v)).toMatch(/^rejected \(validate_game\): Game validation failed: /);
  }, 180_000);

  it('applies the reset gate only where the recipe turns it on and from rollout 1, as SPADE does', async () => {
    const code = game('spade-acceptance/a04_reset_gate_mixed_criteria.py');
    const on = await verdict(code, TOOL_USE, 1, async () => ({ valid: true, reasoning: 'fine' }));
    expect(on.v.accepted).toBe(false);
    expect(on.v.kind).toBe('criteria_throw_at_reset');
    expect(on.v.reason).toBe('Reset-solvability gate: a success criterion raises on the initial state at every tested seed (unsolvable step).');
    // The workbench's own reading of the gate (one criterion at every seed) would keep it.
    expect(on.audit.checks.find((c) => c.id === 'spade.reset-gate')!.status).toBe('fail');
    const zero = await verdict(code, TOOL_USE, 0, async () => ({ valid: true, reasoning: 'fine' }));
    expect(zero.audit.checks.some((c) => c.id === 'spade.reset-gate')).toBe(false);
    expect(zero.v.accepted).toBe(true);
    expect(zero.v.steps.find((s) => s.id === 'reset_gate')).toMatchObject({ status: 'off', message: 'Off at rollout 0 (SPADE applies it from rollout 1)' });
    const games = await verdict(code, SPADE, 1);
    expect(games.v.accepted).toBe(true);
  }, 180_000);

  it('asks the injected LLM validator, keeps its rejection as SPADE words and saves it; without one the verdict says so', async () => {
    const code = game('spade-acceptance/a06_raw_actions_crash.py');
    const long = `The goal is unreachable:\n${'x'.repeat(300)}\n\\boxed{no}`;
    const asked: string[] = [];
    const no = await verdict(code, TOOL_USE, 1, async (c) => {
      asked.push(c);
      return { valid: false, reasoning: long };
    });
    expect(asked).toEqual([code]);
    expect(no.v).toMatchObject({ accepted: false, kind: 'env_validator', reasoning: long });
    expect(no.v.reason).toBe(`Environment validator rejected game: ${long.slice(0, 200).replace(/\n/g, ' ')}`);
    const thrown = await verdict(code, TOOL_USE, 1, async () => {
      throw new Error('endpoint down');
    });
    expect(thrown.v).toMatchObject({ accepted: false, kind: 'env_validator_error', reason: 'The environment validator failed: endpoint down' });
    const none = await verdict(code, TOOL_USE, 1, null);
    expect(none.v.accepted).toBe(true);
    expect(none.v.incomplete).toBe(NOT_RUN_VALIDATOR);
    expect(verdictLine(none.v)).toBe(`accepted — ${NOT_RUN_VALIDATOR}`);
    expect(none.v.steps.find((s) => s.id === 'env_validator')).toMatchObject({ status: 'not-run' });
    // The crash on raw actions SPADE's wrapper swallows is the workbench's advice, never the verdict.
    expect(none.v.advice.some((a) => a.id === 'crash-on-action' && a.status !== 'pass')).toBe(true);

    // The layout keeps the validator's refusal as SPADE's trainer saves it.
    const out = mkdtempSync(join(tmpdir(), 'accept-layout-'));
    try {
      const attempt = { n: 1, model: 'm', prompt: '', answer: '', code, verdicts: [], rejected_because: 'env_validator: x', acceptance: no.v, seeds: null, tokens: { prompt: null, completion: null }, ms: 0, error: null };
      const round = { id: 'r', seq: 3, status: 'done', error: null, config: {}, startedAt: '', endedAt: null, elsewhere: null, games: [{ idx: 2, skill: 'Tool Selection', accepted: false, env_id: null, env_hash: null, parents: [], hint: null, hint_error: null, hint_leak: null, play_error: null, plays_on: null, regret: null, win_rate: null, r_hint: null, r_no_hint: null, class: null, difficulty_score: null, attempts: [attempt] }] } as unknown as RoundView;
      writeSpadeLayout(out, round, () => null);
      const dir = join(out, 'spade_games_rejected');
      expect(readdirSync(dir).sort()).toEqual(['reject_00003_002_tool_selection_env_validator.py', 'reject_00003_002_tool_selection_env_validator.reason.txt']);
      expect(readFileSync(join(dir, 'reject_00003_002_tool_selection_env_validator.reason.txt'), 'utf8')).toBe(long);
      expect(readFileSync(join(dir, 'reject_00003_002_tool_selection_env_validator.py'), 'utf8')).toBe(`"""SPADE self-play REJECTED game (stage=env_validator)"""\n\n${code}`);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 180_000);

  it('a game cannot get past the reset gate by exiting, hanging or breaking its criteria list', async () => {
    const gameWith = (crits: string, pre = '') => `${pre}class HostileEnv:
    def __init__(self, max_turns=10):
        self.max_turns = max_turns
        self._state = {"a": 1}
        self._message_criteria = ${crits}
    def reset(self, seed=None):
        self.t = 0
        return "Go.", {}
    def step(self, action):
        self.t += 1
        return "Ok.", 0.0, False, self.t >= self.max_turns, {}
`;
    const gated = async (code: string) => {
      const audit = await pool.audit(code, { maxTurns: 25, spadeAdmissionTimeoutSec: 3, ...acceptanceAuditOptions(TOOL_USE, 1) });
      return { audit, v: await decideAcceptance(audit, code, TOOL_USE, { rollout: 1, skill: 'Tool Selection', validator: async () => ({ valid: true, reasoning: '' }) }) };
    };
    // SystemExit escapes SPADE's `except Exception` (its trainer would stop): never a pass here.
    const exits = await gated(gameWith('[lambda s: (_ for _ in ()).throw(SystemExit(0))]'));
    expect(exits.v).toMatchObject({ accepted: false, kind: 'criteria_throw_at_reset' });
    expect(exits.v.reason).toMatch(/^The reset gate did not run: /);
    // A criterion that never returns: SPADE has no bound there; the audit's bound refuses the game.
    const hangs = await gated(gameWith('[lambda s: spin()]', 'def spin():\n    while True:\n        pass\n'));
    expect(hangs.v).toMatchObject({ accepted: false, kind: 'criteria_throw_at_reset' });
    expect(hangs.audit.checks.find((c) => c.id === 'spade.reset-gate')).toMatchObject({ status: 'fail', message: 'The reset gate did not return within 3 s' });
    // A list whose iteration raises: SPADE's gate gives up and keeps the game (its outer except), and so does this one.
    const odd = await gated(gameWith('Odd()', 'class Odd(list):\n    def __bool__(self):\n        return True\n    def __iter__(self):\n        raise KeyError("x")\n'));
    expect(odd.audit.checks.find((c) => c.id === 'spade.reset-gate')).toMatchObject({ status: 'pass' });
    expect(odd.v.accepted).toBe(true);
  }, 180_000);

  it('never keeps a program that tried to leave the sandbox, in either mode', async () => {
    const code = `class PryEnv:\n    def __init__(self, max_turns=5):\n        self.max_turns = max_turns\n    def reset(self, seed=None):\n        try:\n            open('/etc/passwd').read()\n        except Exception:\n            pass\n        return "Go.", {}\n    def step(self, action):\n        return "No.", 0.0, True, False, {}\n`;
    for (const gate of ['spade', 'workbench'] as const) {
      const { v } = await verdict(code, { ...SPADE, gate });
      expect(v.accepted).toBe(false);
      expect(v.kind).toBe('sandbox');
    }
  }, 180_000);
});

describe('design presets', () => {
  it("name SPADE's recipes with their values, and keep the earlier defaults as quick, laptop", () => {
    expect(DESIGN_PRESETS.map((p) => p.label)).toEqual(['SPADE paper defaults — games', 'SPADE paper defaults — tool use', 'quick, laptop']);
    for (const id of ['spade-games', 'spade-tool-use'] as const) {
      expect(presetById(id)).toMatchObject({ maxTurns: 25, agentTemperature: 0.6, agentMaxTokens: 8192, attempts: 5, feedback: 'spade', gate: 'spade' });
    }
    expect(presetById('spade-games')).toMatchObject({ recipe: 'cmd/games/train_spade_8b.sh', resetGate: false, envValidator: false });
    expect(presetById('spade-tool-use')).toMatchObject({ resetGate: true, envValidator: true });
    expect(presetById('quick')).toMatchObject({ maxTurns: 12, agentTemperature: 1, agentMaxTokens: 256, attempts: 3, feedback: 'repair', recipe: null });
  });
});

const spadeSrc = process.env.SPADE_SRC;
const haveSpade = !!spadeSrc && existsSync(join(spadeSrc, 'cmd', 'games', 'train_spade_8b.sh'));
if (!haveSpade) console.warn('[design presets vs SPADE recipes skipped] set SPADE_SRC to a SPADE checkout (cmd/games/train_spade_8b.sh)');
describe.skipIf(!haveSpade)("design presets = SPADE's recipes (SPADE_SRC)", () => {
  it('every SPADE preset value is what its recipe and SPADE\'s code set', () => {
    const read = (p: string) => readFileSync(join(spadeSrc!, p), 'utf8');
    const flag = (text: string, name: string) => new RegExp(`--${name} "?(?:\\$\\{\\w+:-)?([\\w.]+)\\}?"?`).exec(text)?.[1];
    const attempts = Number(/max_attempts=(\d+)/.exec(read('spade/slime/spade_rollout.py'))![1]);
    const repair = /"--spade-env-repair-turns",[\s\S]*?default=(\d+)/.exec(read('spade/slime/arguments.py'))![1];
    for (const [id, script] of [['spade-games', 'cmd/games/train_spade_8b.sh'], ['spade-tool-use', 'cmd/tool_use/_train_spade_blend.sh']] as const) {
      const text = read(script);
      const p = presetById(id)!;
      expect(Number(flag(text, 'spade-max-turns')), id).toBe(p.maxTurns);
      expect(Number(flag(text, 'spade-actor-temperature')), id).toBe(p.agentTemperature);
      expect(Number(flag(text, 'spade-actor-max-tokens')), id).toBe(p.agentMaxTokens);
      expect(Number(flag(text, 'spade-env-temperature')), id).toBe(p.designerTemperature);
      expect(/"SPADE_RESET_GATE": "1"/.test(text.replaceAll('\\"', '"')), id).toBe(p.resetGate);
      expect(/--spade-use-env-validator\b/.test(text), id).toBe(p.envValidator);
      expect(attempts).toBe(p.attempts);
      expect(repair === '0' ? 'spade' : 'repair').toBe(p.feedback);
    }
    expect(read('cmd/tool_use/train_spade_8b.sh')).toMatch(/_train_spade_blend\.sh/);
  });
});
