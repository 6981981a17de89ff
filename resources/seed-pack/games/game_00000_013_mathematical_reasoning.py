"""SPADE self-play generated game"""
# DELIBERATE DEFECT (seed pack, state leak across reset): `self.asked` is created in __init__
# and never cleared in reset(). reset() skips any problem it has asked before, so on a reused
# instance reset(seed=s) gives a different problem than a fresh instance with the same seed.
# Replays of a seeded episode therefore depend on what the instance played earlier.
import random
import re

_BOXED = re.compile(r"\\boxed\{([^}]*)\}")


class MentalArithmeticEnv:
    def __init__(self, max_turns=2):
        self.max_turns = max_turns
        self.asked = []  # meant to avoid repeats within a session; it outlives reset()
        self.turn = 0
        self.problem = (0, 0, 0)
        self.done = False

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        self.done = False
        while True:
            problem = (random.randint(12, 29), random.randint(3, 9), random.randint(10, 99))
            if problem not in self.asked:
                break
        self.asked.append(problem)
        self.problem = problem
        a, b, c = problem
        obs = (f"Compute {a} × {b} + {c} in your head. Answer with \\boxed{{number}}. "
               f"You have {self.max_turns} attempts.")
        return obs, {"round": len(self.asked)}

    def _answer(self):
        a, b, c = self.problem
        return a * b + c

    def solution(self):
        return str(self._answer())

    def step(self, action):
        if self.done:
            return "The game is over.", 0.0, True, False, {}
        self.turn += 1
        match = _BOXED.search(action or "")
        if match is None:
            obs = "Answer inside \\boxed{...}."
        elif match.group(1).strip() == str(self._answer()):
            self.done = True
            return "Correct.", 1.0, True, False, {"turn": self.turn}
        else:
            obs = "That is not right."
        if self.turn >= self.max_turns:
            self.done = True
            return f"{obs} Out of attempts. The answer was {self._answer()}.", 0.0, False, True, {"turn": self.turn}
        return obs, 0.0, False, False, {"turn": self.turn}
