import { afterAll, describe, expect, test } from 'vitest';
import { probePython } from '../../../core/runtime/native';
import { wheelsPresent } from '../../../core/runtime/paths';
import type { RuntimeKind } from '../../../core/runtime/service';
import { makeRuntime } from './helpers';

/**
 * SPADE's cognitive-game prompt puts `from math_verify import parse, verify` in every game: both
 * runtimes must load such games and give math_verify's answers (issue 13), inside their sandboxes
 * (sympy asks ctypes for the size of a C long at import; ctypes itself stays out of reach).
 */
const GAME = String.raw`from math_verify import parse, verify

def verify_answer(player_answer, solution):
    if str(player_answer).strip() == str(solution).strip():
        return True
    try:
        return verify(parse(str(solution)), parse(str(player_answer)))
    except Exception:
        return False

class HalfEnv:
    def reset(self, seed=None):
        return "What is one half? Answer in \\boxed{}", {}
    def step(self, action):
        m = re.search(r"\\boxed\{([^}]*)\}", action)
        ok = bool(m) and verify_answer(m.group(1), "1/2")
        return ("Correct" if ok else "Wrong"), (1.0 if ok else 0.0), True, False, {}
    def solution(self):
        return "1/2"
`;

const rt = makeRuntime({ stepTimeoutSec: 120 });
afterAll(() => rt.shutdown());

const kinds: RuntimeKind[] = [...(wheelsPresent() ? (['pyodide'] as const) : []), ...(probePython()?.dirs.some((d) => d.includes('venv')) ? (['cpython'] as const) : [])];

describe.runIf(kinds.length > 0)('math_verify games', () => {
  for (const kind of kinds) {
    test(`${kind}: load, and 0.5 equals 1/2 by math_verify`, async () => {
      const s = await rt.open({ source: GAME, runtime: kind });
      expect(s.ok, JSON.stringify(s)).toBe(true);
      if (!s.ok) return;
      const r = await rt.call(s.sessionId, { cmd: 'play', seed: 1, actions: ['\\boxed{0.5}'] });
      expect(r.ok, JSON.stringify(r)).toBe(true);
      const steps = (r.ok ? (r.result as { steps: { observation: string; reward: number }[] }).steps : []);
      expect(steps[0]).toMatchObject({ observation: 'Correct', reward: 1 });
      const wrong = await rt.call(s.sessionId, { cmd: 'play', seed: 1, actions: ['\\boxed{0.4}'] });
      expect(wrong.ok && (wrong.result as { steps: { observation: string }[] }).steps[0]!.observation).toBe('Wrong');
      await rt.close(s.sessionId);
    });
  }
  test.runIf(wheelsPresent())('auto keeps math_verify games in the sandbox', async () => {
    const s = await rt.open({ source: GAME });
    expect(s.ok && s.runtime).toBe('pyodide');
    if (s.ok) await rt.close(s.sessionId);
  });
});
