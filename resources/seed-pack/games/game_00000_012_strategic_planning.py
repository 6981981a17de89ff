"""SPADE self-play generated game"""
import random
import re

# Seed-pack game: find a secret number from 1 to 100 with higher/lower feedback in eight guesses.
# Halving the range always succeeds in at most seven, so the budget rewards a plan, not luck.

_BOXED = re.compile(r"\\boxed\{([^}]*)\}")


class HigherLowerEnv:
    def __init__(self, max_turns=8):
        self.max_turns = max_turns
        self.turn = 0
        self.secret = 0
        self.done = False

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        self.done = False
        self.secret = random.randint(1, 100)
        obs = (
            "I am thinking of a whole number from 1 to 100. Guess it with \\boxed{50}; "
            f"I will say whether the secret is higher or lower. You have {self.max_turns} guesses."
        )
        return obs, {"low": 1, "high": 100}

    def solution(self):
        low, high, actions = 1, 100, []
        while True:
            mid = (low + high) // 2
            actions.append(f"\\boxed{{{mid}}}")
            if mid == self.secret:
                return actions
            if mid < self.secret:
                low = mid + 1
            else:
                high = mid - 1

    def step(self, action):
        if self.done:
            return "The game is over.", 0.0, True, False, {}
        self.turn += 1
        match = _BOXED.search(action or "")
        try:
            guess = int(match.group(1).strip()) if match else None
        except ValueError:
            guess = None
        if guess is None:
            obs = "Guess a whole number inside \\boxed{...}."
        elif guess == self.secret:
            self.done = True
            return f"Yes, it is {self.secret}!", 1.0, True, False, {"turn": self.turn}
        else:
            obs = f"{guess}: the secret is {'higher' if guess < self.secret else 'lower'}."
        if self.turn >= self.max_turns:
            self.done = True
            return f"{obs} Out of guesses. It was {self.secret}.", 0.0, False, True, {"turn": self.turn}
        return obs, 0.0, False, False, {"turn": self.turn}
