"""What a tool-use game's solution() text stands for, as the workbench's solution policies play it
(the audit's, judge_play.get_solution; the episodes' `solution` policy, harness.cmd_solution's `plan`).

SPADE asks generated tool-use games for a solution() that returns "the correct tool call sequence
+ answer" as text (spade/core/envs/tool_use_base_env.py, lines 26 and 50-55, at 9b2b813), and its
own prompt's examples describe the calls in words: `1. cd(path="docs") -> ... ANSWER: x`, or
`1. cd(path='/home/document') ... 5. <answer>done</answer>` (spade/core/prompts/tool_use_template.py,
lines 332-337 and 622-625). SPADE itself never plays that text: the base class shows it to the
agent on a timeout (tool_use_base_env.py, lines 120, 127). Sending it whole as an answer declared
SPADE's own examples unsolvable (issue 46); here it becomes what it describes: one <tool_call> per
described call of a tool the game has, in order, then the answer.
"""

from __future__ import annotations

import ast
import json
import re
from typing import TYPE_CHECKING, Any

import spade_rules
from harness_tool_base import ToolUseBaseEnv

if TYPE_CHECKING:
    from harness_messages import SolutionResult

# SPADE's answer tag and tool-call block, from their one home (core/api/spadeRules.ts, generated).
_ANSWER_TAG = re.compile(spade_rules.ANSWER_TAG, re.S)
# "ANSWER: x" to the end of its line (SPADE's example puts it last, after the steps).
_ANSWER_MARK = re.compile(r"\bANSWER\s*:\s*([^\n]*)")
_TOOL_BLOCK = re.compile(spade_rules.TOOL_CALL_BLOCK, re.S)
_NAME = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\(")
MAX_CALLS = 50
# Bounds against a hostile text (this runs in the judge too): the text read, the candidates tried,
# and how far one call's arguments may run.
MAX_TEXT = 20_000
MAX_TRIES = 500
MAX_CALL_CHARS = 2_000


def _closing(text: str, start: int) -> int:
    """The index of the parenthesis that closes the one just before `start`, quotes respected; -1 if none."""
    depth, quote, i = 1, None, start
    stop = min(len(text), start + MAX_CALL_CHARS)
    while i < stop:
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _arguments(inner: str, params: list[str]) -> Any:
    """A described call's arguments as a dict (keywords, and positionals by the schema's order of
    parameters), or None where they are not plain literals."""
    try:
        node = ast.parse(f"f({inner})", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(node, ast.Call) or len(node.args) > len(params):
        return None
    out: dict[str, Any] = {}
    try:
        for name, arg in zip(params, node.args):
            out[name] = ast.literal_eval(arg)
        for kw in node.keywords:
            if kw.arg is None:
                return None
            out[kw.arg] = ast.literal_eval(kw.value)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return None
    try:
        json.dumps(out)
    except (TypeError, ValueError):
        return None
    return out


def _params(spec: Any) -> list[str]:
    """A tool's parameter names in its schema's order (what positional arguments bind to)."""
    schema = spec.get("parameters") if type(spec) is dict else None
    props = schema.get("properties") if type(schema) is dict else None
    return [str(p) for p in props] if type(props) is dict else []


def described_plan(text: Any, tools: Any) -> Any:
    """(actions, answer) for a solution() text that describes tool calls or marks its answer, in
    the order the text gives them; None when it does neither (a plain answer, played as before).
    `tools`: the game's `_tools` ({name: {description, parameters}})."""
    if not isinstance(text, str) or not isinstance(tools, dict):
        return None
    text = text[:MAX_TEXT]
    names = {str(n): n for n in tools}
    found: list[tuple[int, str]] = []
    for m in _TOOL_BLOCK.finditer(text):
        found.append((m.start(), m.group(0)))
    blocked = [(m.start(), m.end()) for m in _TOOL_BLOCK.finditer(text)] + [(m.start(), m.end()) for m in _ANSWER_TAG.finditer(text)]
    for tries, m in enumerate(_NAME.finditer(text)):
        if len(found) >= MAX_CALLS or tries >= MAX_TRIES:
            break
        name = m.group(1)
        if name not in names or any(a <= m.start() < b for a, b in blocked):
            continue
        end = _closing(text, m.end())
        if end < 0:
            continue
        params = _params(tools.get(names[name]))
        args = _arguments(text[m.end():end], params)
        if args is None:
            continue
        found.append((m.start(), "<tool_call>" + json.dumps({"name": name, "arguments": args}) + "</tool_call>"))
    found.sort(key=lambda x: x[0])
    tags = _ANSWER_TAG.findall(text)
    marks = _ANSWER_MARK.findall(text)
    answer = tags[-1].strip() if tags else marks[-1].strip() if marks else None
    if not found and answer is None:
        return None
    return [a for _, a in found], answer


def played_plan(value: Any, tools: Any, expected: Any) -> Any:
    """The actions a described solution() text is played as: its calls, then <answer> with the
    answer it names (else the game's `_expected_answer`, else the whole text, as before); None
    when the text describes nothing (played as one answer, as before)."""
    plan = described_plan(value, tools)
    if plan is None:
        return None
    calls, answer = plan
    if answer is None:
        answer = value if expected is None else str(expected)
    return calls + [f"<answer>{answer}</answer>"]


def with_plan(env: Any, out: SolutionResult) -> SolutionResult:
    """harness.cmd_solution's answer, with `plan` (played_plan) for a tool-use game whose
    solution() text describes its calls: the episodes' solution policy plays it as the audit does."""
    if isinstance(env, ToolUseBaseEnv) and isinstance(out.get("value"), str):
        plan = played_plan(out["value"], getattr(env, "_tools", None), getattr(env, "_expected_answer", None))
        if plan is not None:
            out["plan"] = plan
    return out
