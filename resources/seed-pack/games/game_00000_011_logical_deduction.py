"""SPADE self-play generated game"""
import random
import re

# Seed-pack game: break a four-digit code (distinct digits 1-6) from bulls-and-cows feedback.

_BOXED = re.compile(r"\\boxed\{([^}]*)\}")


class CodeBreakerEnv:
    def __init__(self, max_turns=10):
        self.max_turns = max_turns
        self.turn = 0
        self.code = ""
        self.done = False

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        self.done = False
        self.code = "".join(random.sample("123456", 4))
        obs = (
            "A secret code has four different digits, each from 1 to 6.\n"
            "Guess it with \\boxed{1234}. After each guess you learn the bulls (right digit, right place) "
            f"and cows (right digit, wrong place). You have {self.max_turns} guesses."
        )
        return obs, {"digits": 4}

    def solution(self):
        return [f"\\boxed{{{self.code}}}"]

    def step(self, action):
        if self.done:
            return "The game is over.", 0.0, True, False, {}
        self.turn += 1
        match = _BOXED.search(action or "")
        guess = match.group(1).strip() if match else None
        if guess is None:
            obs = "Put your four-digit guess inside \\boxed{...}."
        elif len(guess) != 4 or len(set(guess)) != 4 or not set(guess) <= set("123456"):
            obs = "A guess is four different digits from 1 to 6, e.g. \\boxed{1526}."
        elif guess == self.code:
            self.done = True
            return f"{guess} is the code. You win!", 1.0, True, False, {"turn": self.turn}
        else:
            bulls = sum(a == b for a, b in zip(guess, self.code))
            cows = len(set(guess) & set(self.code)) - bulls
            obs = f"{guess}: {bulls} bulls, {cows} cows."
        if self.turn >= self.max_turns:
            self.done = True
            return f"{obs} Out of guesses. The code was {self.code}.", 0.0, False, True, {"turn": self.turn}
        return obs, 0.0, False, False, {"turn": self.turn}
