"""SPADE self-play generated game"""
import random
import re

# Seed-pack game: unscramble a word, helped by a short definition. After a wrong guess the
# agent learns how many letters were already in the right place.

_BOXED = re.compile(r"\\boxed\{([^}]*)\}")
_LEXICON = [
    ("harbor", "a sheltered place where ships stay"),
    ("pencil", "a tool for writing that can be erased"),
    ("orange", "a citrus fruit, also a colour"),
    ("bridge", "a structure carrying a road over water"),
    ("winter", "the coldest season of the year"),
    ("mirror", "a surface that reflects your image"),
    ("planet", "a large body that orbits a star"),
    ("castle", "a fortified home of a medieval lord"),
    ("jungle", "a dense tropical forest"),
    ("rocket", "a vehicle that flies to space"),
    ("violet", "a small purple flower"),
    ("thirst", "the need to drink"),
    ("puzzle", "a problem made to test ingenuity"),
    ("meadow", "a field of grass and wild flowers"),
    ("blanket", "a warm cover for a bed"),
    ("compass", "an instrument that points north"),
]


class WordUnscrambleEnv:
    def __init__(self, max_turns=4):
        self.max_turns = max_turns
        self.turn = 0
        self.word = ""
        self.clue = ""
        self.scrambled = ""
        self.done = False

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        self.done = False
        self.word, self.clue = random.choice(_LEXICON)
        letters = list(self.word)
        while "".join(letters) == self.word:
            random.shuffle(letters)
        self.scrambled = "".join(letters).upper()
        obs = (
            f"Unscramble the letters {self.scrambled} into an English word.\n"
            f"Meaning: {self.clue}.\n"
            f"Answer with \\boxed{{word}}. You have {self.max_turns} attempts."
        )
        return obs, {"length": len(self.word)}

    def solution(self):
        return self.word

    def step(self, action):
        if self.done:
            return "The game is over.", 0.0, True, False, {}
        self.turn += 1
        match = _BOXED.search(action or "")
        if match is None:
            obs = "Give your word inside \\boxed{...}."
        else:
            guess = match.group(1).strip().lower()
            if guess == self.word:
                self.done = True
                return f"Correct: {self.word}.", 1.0, True, False, {"turn": self.turn}
            if sorted(guess) != sorted(self.word):
                obs = f"'{guess}' does not use exactly the letters {self.scrambled}."
            else:
                right = sum(a == b for a, b in zip(guess, self.word))
                obs = f"Not it. {right} of {len(self.word)} letters are in the right place."
        if self.turn >= self.max_turns:
            self.done = True
            return f"{obs} Out of attempts. The word was {self.word}.", 0.0, False, True, {"turn": self.turn}
        return obs, 0.0, False, False, {"turn": self.turn}
