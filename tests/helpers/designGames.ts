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

/**
 * A tool-use game in SPADE's shape (a ToolUseBaseEnv subclass: reset() defines self._tools and
 * self._expected_answer, one tool_<name> method per tool, solution() the calls and the answer):
 * the total of two prices the agent must look up, drawn at reset from the seed.
 */
export const priceLedgerToolGame = (name: string) => `import random
import json

class ${name}(ToolUseBaseEnv):
    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn_count = 0
        self._call_history = []
        self._prices = {"apple": random.randint(2, 40), "pear": random.randint(2, 40)}
        self._tools = {
            "lookup_price": {"description": "Price of one item in cents", "parameters": {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}},
            "list_items": {"description": "Items on the shelf", "parameters": {"type": "object", "properties": {}}},
        }
        self._expected_answer = str(self._prices["apple"] + self._prices["pear"])
        return "What do one apple and one pear cost together, in cents? Look the prices up, then answer.", {}

    def tool_list_items(self):
        return ", ".join(sorted(self._prices))

    def tool_lookup_price(self, item=""):
        if item not in self._prices:
            return f"No item named {item}"
        return str(self._prices[item])

    def solution(self):
        calls = [json.dumps({"name": "lookup_price", "arguments": {"item": k}}) for k in ("apple", "pear")]
        return [f"<tool_call>{c}</tool_call>" for c in calls] + [f"<answer>{self._expected_answer}</answer>"]
`;
