import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** A small but real SPADE-style game (loads, resets, steps) with a distinct body per `n`. */
export function gameSource(n: number, cls = `Puzzle${n}Env`, extra = ''): string {
  return `"""SPADE self-play generated game"""
import random
import re


class ${cls}:
    """Guess the hidden number ${n}; ${extra}"""

    def __init__(self, max_turns=10):
        self.max_turns = max_turns
        self.target = None
        self.turn = 0

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.target = random.randint(1, ${n + 10})
        self.turn = 0
        return "Guess a number between 1 and ${n + 10}.", {}

    def solution(self):
        return str(self.target)

    def step(self, action):
        self.turn += 1
        m = re.search(r"\\\\boxed\\{([^}]*)\\}", action)
        if not m:
            return "Put your answer in \\\\boxed{}.", 0.0, False, False, {}
        if m.group(1).strip() == str(self.target):
            return "Correct!", 1.0, True, False, {}
        if self.turn >= self.max_turns:
            return f"Out of turns; it was {self.target}.", 0.0, False, True, {}
        return "Wrong.", 0.0, False, False, {}
`;
}

export function toolSource(n: number, cls = `Lookup${n}Env`): string {
  return `class ${cls}(ToolUseBaseEnv):
    def reset(self, seed=None):
        self._tools = {"lookup": {"description": "Look up item ${n}", "parameters": {"type": "object", "properties": {"key": {"type": "string"}}}}}
        self._state = {"n": ${n}}
        self._expected_answer = "${n * 7}"
        return "Find the value of item ${n}.", {}

    def tool_lookup(self, key):
        return str(${n * 7})
`;
}

export function write(root: string, rel: string, content: string | Buffer): string {
  const p = join(root, rel);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, content);
  return p;
}
