"""SPADE self-play generated game"""
import random
import re

# Seed-pack game: four levers each toggle a hidden set of four lamps. The agent pulls levers,
# watches the lamps, and must infer which pulls turn every lamp on.

_BOXED = re.compile(r"\\boxed\{([^}]*)\}")
_LAMPS = 4


class LeverLampsEnv:
    def __init__(self, max_turns=12):
        self.max_turns = max_turns
        self.turn = 0
        self.effects = []
        self.lamps = []
        self.needed = []
        self.done = False

    def _toggle(self, lamps, lever):
        return [on != (i in self.effects[lever]) for i, on in enumerate(lamps)]

    def _show(self):
        return " ".join(f"L{i + 1}={'on' if on else 'off'}" for i, on in enumerate(self.lamps))

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        self.done = False
        while True:
            self.effects = [set(random.sample(range(_LAMPS), random.randint(1, 2))) for _ in range(4)]
            self.needed = sorted(random.sample(range(4), random.randint(1, 3)))
            lamps = [True] * _LAMPS
            for lever in self.needed:
                lamps = self._toggle(lamps, lever)
            if not all(lamps):
                break
        self.lamps = lamps
        obs = (
            "Four levers are wired to four lamps. Each lever flips some lamps (on becomes off, off becomes on); "
            "the wiring is hidden.\n"
            f"Lamps now: {self._show()}\n"
            "Pull a lever with \\boxed{1} to \\boxed{4}. Light every lamp to win. "
            f"You have {self.max_turns} pulls."
        )
        return obs, {"levers": 4}

    def solution(self):
        return [f"\\boxed{{{lever + 1}}}" for lever in self.needed]

    def step(self, action):
        if self.done:
            return "The game is over.", 0.0, True, False, {}
        self.turn += 1
        match = _BOXED.search(action or "")
        text = match.group(1).strip().lower().replace("lever", "").strip() if match else ""
        if text not in ("1", "2", "3", "4"):
            obs = "Pull a lever with \\boxed{1}, \\boxed{2}, \\boxed{3} or \\boxed{4}."
        else:
            self.lamps = self._toggle(self.lamps, int(text) - 1)
            if all(self.lamps):
                self.done = True
                return f"Lamps: {self._show()}. Every lamp is lit. You win!", 1.0, True, False, {"turn": self.turn}
            obs = f"You pulled lever {text}. Lamps: {self._show()}."
        if self.turn >= self.max_turns:
            self.done = True
            levers = ", ".join(str(n + 1) for n in self.needed)
            return f"{obs} Out of pulls. From the start, pulling levers {levers} lit everything.", 0.0, False, True, {"turn": self.turn}
        return obs, 0.0, False, False, {"turn": self.turn}
