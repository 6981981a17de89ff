import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../../core/base/appInfo';
import { RuntimeService } from '../../../core/runtime/service';

/** The Pyodide child runs from dist/: build it when missing or older than its sources. */
export function ensureChildBuilt(): void {
  const root = packageRoot();
  const out = join(root, 'dist', 'node', 'runtime-child.js');
  const srcs = ['child.ts', 'childProtocol.ts'].map((f) => join(root, 'core', 'runtime', f));
  if (existsSync(out) && srcs.every((s) => statSync(s).mtimeMs <= statSync(out).mtimeMs)) return;
  execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--node'], { stdio: 'inherit' });
}

export function makeRuntime(opts: { stepTimeoutSec?: number; poolSize?: number; memoryMb?: number } = {}): RuntimeService {
  ensureChildBuilt();
  return new RuntimeService({
    settings: () => ({ stepTimeoutSec: opts.stepTimeoutSec ?? 30, maxTurns: 25, defaultRuntime: 'pyodide' }),
    poolSize: opts.poolSize ?? 1,
    ...(opts.memoryMb ? { memoryMb: opts.memoryMb } : {}),
  });
}

export const GUESS_GAME = String.raw`"""SPADE self-play generated game"""
class GuessEnv:
    def __init__(self, max_turns=40):
        self.max_turns = max_turns
        self.turn = 0

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.target = random.randint(1, 10)
        self.turn = 0
        self.history = deque()
        return "Guess a number from 1 to 10", {"range": 10}

    def solution(self):
        return str(self.target)

    def step(self, action):
        m = re.search(r"\\boxed\{([^}]*)\}", action)
        self.turn += 1
        if not m:
            return "Put your answer in \\boxed{}", 0.0, False, False, {}
        guess = m.group(1).strip()
        self.history.append(guess)
        if guess == "crash":
            return {}["missing"]
        if guess == str(self.target):
            return "Correct", 1.0, True, False, {"turns": self.turn}
        if self.turn >= self.max_turns:
            return "Out of turns", 0.0, False, True, {}
        return "Wrong", 0, False, False, {}
`;
