"""SPADE self-play generated game"""
import random
import re

# Seed-pack game: the agent sees six terms of an integer sequence and names the seventh.
# Rules vary by seed (arithmetic, geometric, Fibonacci-like, shifted squares, interleaved).

_BOXED = re.compile(r"\\boxed\{([^}]*)\}")


class SequencePatternEnv:
    def __init__(self, max_turns=3):
        self.max_turns = max_turns
        self.turn = 0
        self.shown = []
        self.answer = 0
        self.done = False

    def _build(self):
        kind = random.choice(["arithmetic", "geometric", "fibonacci", "squares", "interleaved"])
        if kind == "arithmetic":
            start = random.randint(-20, 20)
            diff = random.choice([-7, -5, -3, 3, 4, 6, 9, 11])
            terms = [start + diff * i for i in range(7)]
        elif kind == "geometric":
            start = random.randint(1, 5)
            ratio = random.choice([2, 3, -2])
            terms = [start * ratio ** i for i in range(7)]
        elif kind == "fibonacci":
            terms = [random.randint(1, 6), random.randint(1, 6)]
            while len(terms) < 7:
                terms.append(terms[-1] + terms[-2])
        elif kind == "squares":
            shift = random.randint(-5, 10)
            terms = [i * i + shift for i in range(1, 8)]
        else:
            a, b = random.randint(1, 9), random.randint(20, 40)
            da, db = random.choice([2, 3, 5]), random.choice([-4, -3, -1])
            terms = [a + da * (i // 2) if i % 2 == 0 else b + db * (i // 2) for i in range(7)]
        return terms[:6], terms[6]

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        self.done = False
        self.shown, self.answer = self._build()
        obs = (
            "Find the rule behind this sequence and give the next term.\n"
            f"Sequence: {', '.join(str(t) for t in self.shown)}, ?\n"
            f"You have {self.max_turns} attempts. Answer with \\boxed{{number}}."
        )
        return obs, {"attempts": self.max_turns}

    def solution(self):
        return str(self.answer)

    def step(self, action):
        if self.done:
            return "The game is over.", 0.0, True, False, {}
        self.turn += 1
        match = _BOXED.search(action or "")
        if match is None:
            return self._continue("Please give your answer inside \\boxed{...}, for example \\boxed{17}.")
        text = match.group(1).strip()
        try:
            guess = int(text)
        except ValueError:
            return self._continue(f"'{text}' is not an integer. Answer with a whole number.")
        if guess == self.answer:
            self.done = True
            return f"Correct! The next term is {self.answer}.", 1.0, True, False, {"turn": self.turn}
        return self._continue(f"{guess} is not the next term.")

    def _continue(self, obs):
        if self.turn >= self.max_turns:
            self.done = True
            return f"{obs} Out of attempts. The next term was {self.answer}.", 0.0, False, True, {"turn": self.turn}
        left = self.max_turns - self.turn
        return f"{obs} Attempts left: {left}.", 0.0, False, False, {"turn": self.turn}
