/**
 * Games the scripted designer "writes" in the design tests. In this one the secret is 7 in every
 * episode: an agent that answers 7 only when it sees the hint wins every hinted episode and no
 * other, so regret is 1 and win rate 0, whatever the seed.
 */
export const luckySevenGame = (name: string) => `import random
class ${name}:
    def __init__(self, max_turns=4):
        self.max_turns = max_turns
        self.t = 0
        self.secret = 7
    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.t = 0
        self.noise = random.randint(1000, 9999)
        return f"Round {self.noise}: guess my number from 1 to 500 as \\\\boxed{{n}}.", {}
    def step(self, action):
        self.t += 1
        if action == "\\\\boxed{7}":
            return "Correct!", 1.0, True, False, {}
        return "No.", 0.0, False, self.t >= self.max_turns, {}
    def solution(self):
        return "7"
`;
