"""SPADE self-play generated game"""
import random
import re

import numpy as np

# Seed-pack game (the one that needs numpy): a 3x3 integer matrix M, the product M·v, and a
# vector v with one hidden component. The numpy values are converted to builtin types before
# they leave step(), since SPADE's structural check rejects numpy scalars.

_BOXED = re.compile(r"\\boxed\{([^}]*)\}")


class HiddenVectorEnv:
    def __init__(self, max_turns=3):
        self.max_turns = max_turns
        self.turn = 0
        self.matrix = None
        self.vector = None
        self.product = None
        self.hidden = 0
        self.done = False

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        self.done = False
        # numpy has its own generator; derive its seed from the seeded global `random`.
        rng = np.random.default_rng(random.randrange(2 ** 32))
        self.matrix = rng.integers(-4, 6, size=(3, 3))
        self.hidden = int(rng.integers(0, 3))
        while not self.matrix[:, self.hidden].any():
            self.matrix = rng.integers(-4, 6, size=(3, 3))
        self.vector = rng.integers(-9, 10, size=3)
        self.product = self.matrix @ self.vector
        shown = ", ".join("?" if i == self.hidden else str(int(x)) for i, x in enumerate(self.vector))
        rows = "\n".join("  [" + ", ".join(f"{int(x):3d}" for x in row) + " ]" for row in self.matrix)
        obs = (
            f"M =\n{rows}\n"
            f"v = ({shown})\n"
            f"M·v = ({', '.join(str(int(x)) for x in self.product)})\n"
            f"Find the hidden component of v. Answer with \\boxed{{integer}}. You have {self.max_turns} attempts."
        )
        return obs, {"hidden_index": self.hidden}

    def solution(self):
        return str(int(self.vector[self.hidden]))

    def step(self, action):
        if self.done:
            return "The game is over.", 0.0, True, False, {}
        self.turn += 1
        match = _BOXED.search(action or "")
        if match is None:
            obs = "Answer inside \\boxed{...}."
        else:
            try:
                guess = int(match.group(1).strip())
            except ValueError:
                guess = None
            if guess is not None and guess == int(self.vector[self.hidden]):
                self.done = True
                return "Correct.", 1.0, True, False, {"turn": self.turn}
            if guess is not None and abs(guess) > 10 ** 6:
                guess = None
            if guess is None:
                obs = "The answer is a whole number between -1000000 and 1000000."
            else:
                trial = self.vector.copy()
                trial[self.hidden] = guess
                off = int(np.abs(self.matrix @ trial - self.product).sum())
                obs = f"With {guess} the product is off by {off} in total."
        if self.turn >= self.max_turns:
            self.done = True
            return (f"{obs} Out of attempts. The hidden component was {self.solution()}."), 0.0, False, True, {"turn": self.turn}
        return obs, 0.0, False, False, {"turn": self.turn}
