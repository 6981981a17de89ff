"""SPADE self-play generated game"""
import itertools
import random
import re

# Seed-pack game: a three-person logic grid (pets and house colours). Clues are drawn from
# the true facts until exactly one full assignment remains, so the puzzle always has one answer.

_BOXED = re.compile(r"\\boxed\{([^}]*)\}")
_NAMES = ["Ada", "Bruno", "Chen", "Dara", "Emil", "Farah", "Goran", "Hana"]
_PETS = ["cat", "dog", "parrot", "fish", "rabbit", "turtle"]
_COLORS = ["red", "blue", "green", "yellow", "white"]


class LogicGridEnv:
    def __init__(self, max_turns=2):
        self.max_turns = max_turns
        self.turn = 0
        self.done = False
        self.clues = []
        self.question = ""
        self.answer = ""

    @staticmethod
    def _holds(clue, pet_of, color_of):
        kind, a, b = clue
        if kind == "owns":
            return pet_of[a] == b
        if kind == "not_owns":
            return pet_of[a] != b
        if kind == "color":
            return color_of[a] == b
        if kind == "not_color":
            return color_of[a] != b
        owner = [p for p, pet in pet_of.items() if pet == a][0]
        if kind == "pet_color":
            return color_of[owner] == b
        return color_of[owner] != b

    @staticmethod
    def _say(clue):
        kind, a, b = clue
        return {
            "owns": f"{a} owns the {b}.",
            "not_owns": f"{a} does not own the {b}.",
            "color": f"{a} lives in the {b} house.",
            "not_color": f"{a} does not live in the {b} house.",
            "pet_color": f"The {a} lives in the {b} house.",
            "not_pet_color": f"The {a} does not live in the {b} house.",
        }[kind]

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        self.done = False
        people = random.sample(_NAMES, 3)
        pets = random.sample(_PETS, 3)
        colors = random.sample(_COLORS, 3)
        pet_of = dict(zip(people, random.sample(pets, 3)))
        color_of = dict(zip(people, random.sample(colors, 3)))
        asks_owner = random.random() < 0.5
        if asks_owner:
            target = random.choice(pets)
            self.question = f"Who owns the {target}?"
            self.answer = [p for p in people if pet_of[p] == target][0]
        else:
            target = random.choice(people)
            self.question = f"What colour is {target}'s house?"
            self.answer = color_of[target]
        facts = []
        for p in people:
            for pet in pets:
                facts.append(("owns" if pet_of[p] == pet else "not_owns", p, pet))
            for c in colors:
                facts.append(("color" if color_of[p] == c else "not_color", p, c))
        for pet in pets:
            owner = [p for p in people if pet_of[p] == pet][0]
            for c in colors:
                facts.append(("pet_color" if color_of[owner] == c else "not_pet_color", pet, c))
        # Never state the asked fact outright.
        facts = [f for f in facts if not (f[0] in ("owns", "color") and target in (f[1], f[2]))]
        random.shuffle(facts)
        facts.sort(key=lambda f: f[0] in ("owns", "color"))  # prefer indirect clues
        worlds = [
            (dict(zip(people, pp)), dict(zip(people, cc)))
            for pp in itertools.permutations(pets)
            for cc in itertools.permutations(colors)
        ]
        self.clues = []
        for fact in facts:
            if len(worlds) == 1:
                break
            narrowed = [w for w in worlds if self._holds(fact, *w)]
            if len(narrowed) < len(worlds):
                self.clues.append(fact)
                worlds = narrowed
        random.shuffle(self.clues)
        lines = "\n".join(f"{i + 1}. {self._say(c)}" for i, c in enumerate(self.clues))
        obs = (
            f"Three people ({', '.join(people)}) each keep one pet ({', '.join(pets)}) "
            f"and live in one house ({', '.join(colors)}); no two share a pet or a house.\n"
            f"Clues:\n{lines}\n{self.question} Answer with \\boxed{{...}}. "
            f"You have {self.max_turns} attempts."
        )
        return obs, {"clues": len(self.clues)}

    def solution(self):
        return self.answer

    def step(self, action):
        if self.done:
            return "The game is over.", 0.0, True, False, {}
        self.turn += 1
        match = _BOXED.search(action or "")
        if match is None:
            obs = "Please put your answer inside \\boxed{...}, for example \\boxed{Ada} or \\boxed{red}."
        elif match.group(1).strip().lower() == self.answer.lower():
            self.done = True
            return f"Correct: {self.answer}.", 1.0, True, False, {"turn": self.turn}
        else:
            obs = f"'{match.group(1).strip()}' does not fit all the clues."
        if self.turn >= self.max_turns:
            self.done = True
            return f"{obs} No attempts left. The answer was {self.answer}.", 0.0, False, True, {"turn": self.turn}
        return obs, 0.0, False, False, {"turn": self.turn}
