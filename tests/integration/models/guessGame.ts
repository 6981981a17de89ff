/** A tiny SPADE game for model-run tests: the stand-in model wins it only when it answers 7. */
// The secret is always 7; the stand-in guesses 7 only when the hint is in its first message.
export const GUESS_GAME = `import random

class GuessEnv:
    def __init__(self, max_turns=2):
        self.max_turns = max_turns

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        return f"Guess my number (1-10). Game {random.randint(100, 999)}.", {}

    def step(self, action):
        self.turn += 1
        if action == "\\\\boxed{7}":
            return "Correct!", 1.0, True, False, {}
        return f"Not {action}.", 0.0, False, self.turn >= self.max_turns, {}

    def solution(self):
        return "7"
`;

