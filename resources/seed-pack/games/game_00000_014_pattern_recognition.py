"""SPADE self-play generated game"""
# DELIBERATE DEFECT (seed pack, ignores its seed): reset() seeds the global generator with
# self.default_seed instead of the seed it was given, so every seed deals the same puzzle.
# Evaluation "over many seeds" then measures one puzzle many times.
import random
import re

_BOXED = re.compile(r"\\boxed\{([^}]*)\}")


def _is_prime(n):
    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))


class OddOneOutEnv:
    def __init__(self, max_turns=2):
        self.max_turns = max_turns
        self.default_seed = 1234
        self.turn = 0
        self.numbers = []
        self.odd = 0
        self.done = False

    def reset(self, seed=None):
        random.seed(self.default_seed)  # BUG: should be random.seed(seed) when a seed is given
        self.turn = 0
        self.done = False
        rule = random.choice(["multiple", "prime", "square"])
        if rule == "multiple":
            k = random.randint(3, 9)
            members = random.sample([k * i for i in range(2, 15)], 4)
            fits = lambda n: n % k == 0
        elif rule == "prime":
            members = random.sample([n for n in range(11, 98) if _is_prime(n)], 4)
            fits = _is_prime
        else:
            members = random.sample([i * i for i in range(3, 13)], 4)
            fits = lambda n: int(n ** 0.5) ** 2 == n
        lo, hi = min(members), max(members)
        self.odd = random.choice([n for n in range(lo, hi + 1) if not fits(n)])
        self.numbers = members + [self.odd]
        random.shuffle(self.numbers)
        obs = (f"Four of these numbers share a property; one does not: {', '.join(map(str, self.numbers))}.\n"
               f"Which is the odd one out? Answer with \\boxed{{number}}. You have {self.max_turns} attempts.")
        return obs, {"count": 5}

    def solution(self):
        return str(self.odd)

    def step(self, action):
        if self.done:
            return "The game is over.", 0.0, True, False, {}
        self.turn += 1
        match = _BOXED.search(action or "")
        if match is None:
            obs = "Answer inside \\boxed{...}."
        elif match.group(1).strip() == str(self.odd):
            self.done = True
            return "Correct.", 1.0, True, False, {"turn": self.turn}
        else:
            obs = "No, that one shares the property."
        if self.turn >= self.max_turns:
            self.done = True
            return f"{obs} Out of attempts. The odd one was {self.odd}.", 0.0, False, True, {"turn": self.turn}
        return obs, 0.0, False, False, {"turn": self.turn}
