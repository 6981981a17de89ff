"""SPADE self-play generated game"""
import random
import re

# Seed-pack game: a list of six words is shown once; after the agent says it is ready the
# list is hidden and one position is asked for. A single answer decides the game.

_BOXED = re.compile(r"\\boxed\{([^}]*)\}")
_WORDS = [
    "anchor", "basket", "candle", "dolphin", "engine", "feather", "garden", "hammer",
    "island", "jacket", "kettle", "lantern", "marble", "needle", "orchard", "pepper",
    "quarry", "ribbon", "saddle", "tunnel", "violin", "walnut", "yogurt", "zipper",
]
_ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth"]


class WordListRecallEnv:
    def __init__(self, max_turns=4):
        self.max_turns = max_turns
        self.turn = 0
        self.words = []
        self.asked = 0
        self.hidden = False
        self.done = False

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        self.done = False
        self.hidden = False
        self.words = random.sample(_WORDS, 6)
        self.asked = random.randrange(6)
        obs = (
            "Memorise this list in order:\n"
            f"{' - '.join(self.words)}\n"
            "When you are ready, reply \\boxed{ready}. The list will then be hidden and you will be asked about it."
        )
        return obs, {"length": len(self.words)}

    def solution(self):
        return ["\\boxed{ready}", f"\\boxed{{{self.words[self.asked]}}}"]

    def step(self, action):
        if self.done:
            return "The game is over.", 0.0, True, False, {}
        self.turn += 1
        match = _BOXED.search(action or "")
        if match is None:
            obs = "Reply inside \\boxed{...}."
        elif not self.hidden:
            self.hidden = True
            obs = (f"The list is hidden. Which word was {_ORDINALS[self.asked]} in the list? "
                   "Answer with \\boxed{word}.")
        else:
            self.done = True
            word = self.words[self.asked]
            if match.group(1).strip().lower() == word:
                return f"Correct, it was '{word}'.", 1.0, True, False, {"turn": self.turn}
            return f"Wrong. The {_ORDINALS[self.asked]} word was '{word}'.", 0.0, True, False, {"turn": self.turn}
        if self.turn >= self.max_turns:
            self.done = True
            return (f"{obs} Out of turns. The {_ORDINALS[self.asked]} word was "
                    f"'{self.words[self.asked]}'."), 0.0, False, True, {"turn": self.turn}
        return obs, 0.0, False, False, {"turn": self.turn}
