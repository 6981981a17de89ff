"""SPADE self-play generated game"""
# DELIBERATE DEFECT (seed pack, cannot be won): the secret is kept as a string for display,
# but the win check compares the parsed integer guess with that string, so it is never equal.
# Worse, the feedback then says the right number is "too high". No action ever earns reward 1.
import random
import re

_BOXED = re.compile(r"\\boxed\{([^}]*)\}")


class RemainderRiddleEnv:
    def __init__(self, max_turns=3):
        self.max_turns = max_turns
        self.turn = 0
        self.secret = ""
        self.done = False

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        self.done = False
        while True:
            n = random.randint(1, 50)
            m3, m4, m5 = n % 3, n % 4, n % 5
            if sum(1 for k in range(1, 51) if (k % 3, k % 4, k % 5) == (m3, m4, m5)) == 1:
                break
        self.secret = str(n)
        obs = (f"A number from 1 to 50 leaves remainder {m3} when divided by 3, {m4} when divided by 4 "
               f"and {m5} when divided by 5. What is it? Answer with \\boxed{{number}}. "
               f"You have {self.max_turns} attempts.")
        return obs, {"range": 50}

    def solution(self):
        return self.secret

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
            obs = "Answer with a whole number inside \\boxed{...}."
        elif guess == self.secret:  # BUG: int compared with str is never equal
            self.done = True
            return "Correct!", 1.0, True, False, {"turn": self.turn}
        elif guess < int(self.secret):
            obs = f"{guess} is too low."
        else:
            obs = f"{guess} is too high."
        if self.turn >= self.max_turns:
            self.done = True
            return f"{obs} Out of attempts. The number was {self.secret}.", 0.0, False, True, {"turn": self.turn}
        return obs, 0.0, False, False, {"turn": self.turn}
