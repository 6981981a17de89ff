/**
 * What the editor knows about SPADE's environment contract (docs/spade-formats.md sections 2 and 4):
 * skeletons for new environments, and the names completions offer. Pure data, no Monaco, so the
 * templates can be tested by compiling them with Python.
 */

export const GAME_TEMPLATE = `"""SPADE self-play generated game"""
import random
import re

_BOXED = re.compile(r"\\\\boxed\\{([^}]*)\\}")


class \${1:NewPuzzle}Env:
    def __init__(self, max_turns=\${2:10}):
        self.max_turns = max_turns
        self.turn = 0
        self.answer = None
        self.done = False

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self.turn = 0
        self.done = False
        self.answer = random.randint(1, 100)
        obs = "\${3:Describe the puzzle.} Answer with \\\\boxed{your answer}."
        return obs, {}

    def solution(self):
        return str(self.answer)

    def step(self, action):
        if self.done:
            return "The game is over.", 0.0, True, False, {}
        m = _BOXED.search(action)
        if not m:
            return "Please put your answer in \\\\boxed{}.", 0.0, False, False, {}
        self.turn += 1
        if m.group(1).strip() == str(self.answer):
            self.done = True
            return "Correct!", 1.0, True, False, {}
        if self.turn >= self.max_turns:
            self.done = True
            return f"Out of turns. The answer was {self.answer}.", 0.0, False, True, {}
        return "Not quite, try again.", 0.0, False, False, {}
`;

export const TOOL_USE_TEMPLATE = `"""SPADE tool-use environment"""
import random


class \${1:NewTask}Env(ToolUseBaseEnv):
    def __init__(self, max_turns=\${2:10}):
        super().__init__(max_turns=max_turns)

    def reset(self, seed=None):
        if seed is not None:
            random.seed(seed)
        self._state = {"records": {f"r{i}": random.randint(1, 100) for i in range(5)}}
        key = random.choice(sorted(self._state["records"]))
        self._expected_answer = str(self._state["records"][key])
        self._tools = {
            "lookup": {
                "description": "Look up the value of a record by its key.",
                "parameters": {
                    "type": "object",
                    "properties": {"key": {"type": "string", "description": "The record key"}},
                    "required": ["key"],
                },
            },
        }
        obs = f"\${3:What is the value of record} {key}? Use the tools, then give <answer>...</answer>."
        return obs, {}

    def tool_lookup(self, key):
        value = self._state["records"].get(key)
        return "no such record" if value is None else str(value)
`;

/** Monaco snippet syntax (`${1:x}`) -> the plain text a new environment starts with. */
export function expandSnippet(snippet: string): string {
  return snippet.replace(/\$\{\d+:([^}]*)\}/g, '$1').replace(/\$\d+/g, '').replace(/\\\$/g, '$');
}

/** Names SPADE's loader pre-binds in the environment's namespace (section 2), with what they are. */
export const INJECTED_NAMES: { name: string; detail: string }[] = [
  ...['itertools', 'math', 'random', 're', 'json', 'collections', 'functools', 'string', 'copy', 'heapq', 'operator', 'statistics'].map((m) => ({
    name: m,
    detail: `module ${m} (pre-bound by SPADE's loader)`,
  })),
  { name: 'np', detail: 'numpy (pre-bound; needs the native runtime)' },
  { name: 'numpy', detail: 'numpy (pre-bound; needs the native runtime)' },
  ...[
    ['deque', 'collections'],
    ['defaultdict', 'collections'],
    ['Counter', 'collections'],
    ['OrderedDict', 'collections'],
    ['namedtuple', 'collections'],
    ['combinations', 'itertools'],
    ['permutations', 'itertools'],
    ['product', 'itertools'],
    ['chain', 'itertools'],
    ['accumulate', 'itertools'],
    ['reduce', 'functools'],
    ['lru_cache', 'functools'],
    ['deepcopy', 'copy'],
    ['heappush', 'heapq'],
    ['heappop', 'heapq'],
  ].map(([n, m]) => ({ name: n!, detail: `${m}.${n} (pre-bound by SPADE's loader)` })),
  ...['Tuple', 'Dict', 'List', 'Optional', 'Union', 'Any', 'Set', 'FrozenSet', 'Callable', 'Iterable', 'Sequence', 'Mapping'].map((n) => ({
    name: n,
    detail: `typing.${n} (pre-bound by SPADE's loader)`,
  })),
  { name: 'ToolUseBaseEnv', detail: 'base class for tool-use environments (pre-bound, not imported)' },
];

/** The environment protocol: what SPADE calls, and the attributes the tool-use base class reads. */
export const PROTOCOL_NAMES: { name: string; detail: string; insert: string }[] = [
  { name: 'reset', detail: 'reset(seed=None) -> (observation: str, info: dict)', insert: 'def reset(self, seed=None):\n\tif seed is not None:\n\t\trandom.seed(seed)\n\t$0\n\treturn obs, {}' },
  {
    name: 'step',
    detail: 'step(action: str) -> (obs: str, reward: float, terminated: bool, truncated: bool, info: dict)',
    insert: 'def step(self, action):\n\t$0\n\treturn obs, 0.0, False, False, {}',
  },
  { name: 'solution', detail: 'solution() -> the answer (never stored as self.solution)', insert: 'def solution(self):\n\treturn ${1:str(self.answer)}' },
  { name: 'max_turns', detail: 'turn budget; SPADE passes max_turns= when Cls() raises TypeError', insert: 'max_turns' },
  { name: 'get_tools', detail: 'tool-use: OpenAI function-tool dicts built from self._tools', insert: 'get_tools()' },
  { name: 'execute_tool', detail: 'tool-use: execute_tool(name, args) calls tool_<name>(**args)', insert: 'execute_tool(${1:name}, ${2:args})' },
  { name: '_tools', detail: 'tool-use: {name: {"description", "parameters": JSON Schema}}; names must match tool_<name> keywords', insert: '_tools' },
  { name: '_state', detail: 'tool-use: the environment state dict', insert: '_state' },
  { name: '_expected_answer', detail: 'tool-use: compared to <answer> case-insensitively, or numerically within 0.01', insert: '_expected_answer' },
  { name: '_user_messages', detail: 'multi-turn tool-use: 3-5 instructions', insert: '_user_messages' },
  { name: '_message_criteria', detail: 'multi-turn tool-use: list of state -> bool, one per message', insert: '_message_criteria' },
  { name: '_advance_if_done', detail: 'multi-turn tool-use: append to each tool result', insert: '_advance_if_done()' },
  { name: 'boxed', detail: 'the answer wrapper SPADE extracts: \\boxed{...}', insert: '\\\\boxed{${1}}' },
];

export const SNIPPETS: { label: string; detail: string; body: string }[] = [
  { label: 'spade-game', detail: 'New cognitive game (reset/step/solution)', body: GAME_TEMPLATE },
  { label: 'spade-tool-use', detail: 'New tool-use environment (ToolUseBaseEnv)', body: TOOL_USE_TEMPLATE },
  {
    label: 'spade-tool',
    detail: 'A tool method and its schema entry',
    body: 'def tool_${1:name}(self, ${2:arg}):\n\t"""${3:What the tool does.}"""\n\treturn str(${4:self._state})',
  },
  { label: 'spade-boxed', detail: 'Extract the \\boxed{} answer', body: 'm = re.search(r"\\\\\\\\boxed\\\\{([^}]*)\\\\}", action)\nif not m:\n\treturn "Please put your answer in \\\\\\\\boxed{}.", 0.0, False, False, {}\nanswer = m.group(1).strip()' },
];
