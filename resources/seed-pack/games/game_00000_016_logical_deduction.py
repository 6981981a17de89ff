"""SPADE self-play generated game"""
# DELIBERATE DEFECT (seed pack, hint leaks the answer): the three inscriptions are fixed, so the
# treasure is always in the silver box (the only case with exactly one true inscription); the seed
# only shuffles the order they are read in. The companion hint file names the box outright,
# which makes hinted play worthless as a measure of difficulty (regret is inflated).
import random
import re

_BOXED = re.compile(r"\\boxed\{([^}]*)\}")
_INSCRIPTIONS = {
    "gold": "The treasure is in this box.",
    "silver": "The treasure is not in this box.",
    "lead": "The treasure is not in the gold box.",
}


class TreasureBoxesEnv:
    def __init__(self, max_turns=2):
        self.max_turns = max_turns
        self.turn = 0
        self.order = []
        self.done = False

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        self.done = False
        self.order = random.sample(sorted(_INSCRIPTIONS), 3)
        lines = "\n".join(f"- The {box} box says: \"{_INSCRIPTIONS[box]}\"" for box in self.order)
        obs = (f"One of three boxes holds a treasure. Exactly one inscription is true.\n{lines}\n"
               f"Which box holds the treasure? Answer with \\boxed{{colour}}. You have {self.max_turns} attempts.")
        return obs, {"boxes": 3}

    def solution(self):
        return "silver"

    def step(self, action):
        if self.done:
            return "The game is over.", 0.0, True, False, {}
        self.turn += 1
        match = _BOXED.search(action or "")
        if match is None:
            obs = "Answer inside \\boxed{...}, e.g. \\boxed{gold}."
        elif match.group(1).strip().lower() == "silver":
            self.done = True
            return "Correct, the treasure is in the silver box.", 1.0, True, False, {"turn": self.turn}
        else:
            obs = "That box is empty."
        if self.turn >= self.max_turns:
            self.done = True
            return f"{obs} Out of attempts. The treasure was in the silver box.", 0.0, False, True, {"turn": self.turn}
        return obs, 0.0, False, False, {"turn": self.turn}
