"""SPADE self-play generated game"""
import itertools
import random
import re

# Seed-pack game: a six-item knapsack. Any subset that fits and reaches the best total value wins;
# a feasible but worse pick is told its value so the agent can improve it.

_BOXED = re.compile(r"\\boxed\{([^}]*)\}")
_ITEMS = ["lamp", "rope", "tent", "stove", "map", "radio", "axe", "kettle", "blanket", "torch"]


class PackingValueEnv:
    def __init__(self, max_turns=4):
        self.max_turns = max_turns
        self.turn = 0
        self.items = []
        self.capacity = 0
        self.best_value = 0
        self.best_pick = ()
        self.done = False

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        self.done = False
        names = random.sample(_ITEMS, 6)
        self.items = [(name, random.randint(2, 9), random.randint(3, 20)) for name in names]
        self.capacity = sum(w for _, w, _ in self.items) // 2
        self.best_value, self.best_pick = 0, ()
        for size in range(1, 7):
            for pick in itertools.combinations(range(6), size):
                weight = sum(self.items[i][1] for i in pick)
                value = sum(self.items[i][2] for i in pick)
                if weight <= self.capacity and value > self.best_value:
                    self.best_value, self.best_pick = value, pick
        table = "\n".join(
            f"{i + 1}. {name}: weight {w}, value {v}" for i, (name, w, v) in enumerate(self.items)
        )
        obs = (
            f"Pack a bag holding at most weight {self.capacity}. Choose items to make the total value as large as possible.\n"
            f"{table}\n"
            "Answer with item numbers separated by commas, e.g. \\boxed{1,4,5}. "
            f"You have {self.max_turns} attempts."
        )
        return obs, {"capacity": self.capacity}

    def solution(self):
        return ",".join(str(i + 1) for i in self.best_pick)

    def step(self, action):
        if self.done:
            return "The game is over.", 0.0, True, False, {}
        self.turn += 1
        match = _BOXED.search(action or "")
        if match is None:
            return self._continue("List item numbers inside \\boxed{...}, e.g. \\boxed{2,3}.")
        tokens = [t for t in re.split(r"[\s,;]+", match.group(1).strip()) if t]
        if not tokens or not all(t.isdigit() and len(t) <= 2 and 1 <= int(t) <= 6 for t in tokens):
            return self._continue("Use item numbers from 1 to 6.")
        pick = sorted({int(t) - 1 for t in tokens})
        weight = sum(self.items[i][1] for i in pick)
        value = sum(self.items[i][2] for i in pick)
        if weight > self.capacity:
            return self._continue(f"Those weigh {weight}, over the limit of {self.capacity}.")
        if value == self.best_value:
            self.done = True
            return f"Optimal: value {value}.", 1.0, True, False, {"turn": self.turn}
        return self._continue(f"That fits (weight {weight}) with value {value}, but a better packing exists.")

    def _continue(self, obs):
        if self.turn >= self.max_turns:
            self.done = True
            return (f"{obs} Out of attempts. Best packing: {self.solution()} "
                    f"with value {self.best_value}."), 0.0, False, True, {"turn": self.turn}
        return obs, 0.0, False, False, {"turn": self.turn}
