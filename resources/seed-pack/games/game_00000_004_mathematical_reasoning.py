"""SPADE self-play generated game"""
import ast
import random
import re

# Seed-pack game: combine four given numbers with + - * and brackets to hit a target value.
# The target is built from a random expression over the same numbers, so a solution exists.

_BOXED = re.compile(r"\\boxed\{([^}]*)\}")


def _evaluate(node, used):
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, used)
    if isinstance(node, ast.Constant) and type(node.value) is int:
        used.append(node.value)
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
        left, right = _evaluate(node.left, used), _evaluate(node.right, used)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        return left * right
    raise ValueError("only whole numbers, + - * and brackets are allowed")


class TargetArithmeticEnv:
    def __init__(self, max_turns=3):
        self.max_turns = max_turns
        self.turn = 0
        self.numbers = []
        self.target = 0
        self.expression = ""
        self.done = False

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        self.done = False
        while True:
            numbers = [random.randint(1, 9) for _ in range(4)]
            parts = [str(n) for n in random.sample(numbers, 4)]
            while len(parts) > 1:
                i = random.randrange(len(parts) - 1)
                op = random.choice(["+", "-", "*"])
                parts[i:i + 2] = [f"({parts[i]} {op} {parts[i + 1]})"]
            expression = parts[0][1:-1]
            value = _evaluate(ast.parse(expression, mode="eval"), [])
            if 10 <= value <= 99:
                break
        self.numbers = sorted(numbers)
        self.target = value
        self.expression = expression
        obs = (
            f"Use each of the numbers {', '.join(map(str, self.numbers))} exactly once, with +, -, * "
            f"and brackets, to make {self.target}.\n"
            f"Answer with the expression, e.g. \\boxed{{(1 + 2) * 3 - 4}}. You have {self.max_turns} attempts."
        )
        return obs, {"target": self.target}

    def solution(self):
        return self.expression

    def step(self, action):
        if self.done:
            return "The game is over.", 0.0, True, False, {}
        self.turn += 1
        match = _BOXED.search(action or "")
        if match is None:
            return self._continue("Put your expression inside \\boxed{...}.")
        used = []
        try:
            value = _evaluate(ast.parse(match.group(1).strip(), mode="eval"), used)
        except (SyntaxError, ValueError, RecursionError) as err:
            return self._continue(f"Could not read that expression: {err}.")
        if sorted(used) != self.numbers:
            return self._continue(f"You must use exactly the numbers {self.numbers}; you used {sorted(used)}.")
        if value == self.target:
            self.done = True
            return f"Correct: that makes {self.target}.", 1.0, True, False, {"turn": self.turn}
        return self._continue(f"That makes {value}, not {self.target}.")

    def _continue(self, obs):
        if self.turn >= self.max_turns:
            self.done = True
            return f"{obs} Out of attempts. One answer was {self.expression}.", 0.0, False, True, {"turn": self.turn}
        return obs, 0.0, False, False, {"turn": self.turn}
