"""SPADE Workbench harness: SPADE's ToolUseBaseEnv (docs/spade-formats.md section 4), on its own.

A module of its own so that the base class a game inherits from leads nowhere: its methods'
globals are this module's, which holds nothing of the harness.
"""

from __future__ import annotations

import json
import re
import types

import spade_rules as _spade_rules
from typing import TYPE_CHECKING, Any

# Private references: a game may patch builtins or shared modules (undone at the next episode
# boundary, see SharedBaseline); until then the harness must keep answering with the originals.
if not TYPE_CHECKING:  # mypy reads the builtins themselves; at run time these are the originals
    len, isinstance, type, str, repr, int, float, bool = len, isinstance, type, str, repr, int, float, bool  # noqa: A001
    list, dict, tuple, set, frozenset, getattr, callable, id = list, dict, tuple, set, frozenset, getattr, callable, id  # noqa: A001
    sorted, min, max, range, any, all, next, hasattr, print = sorted, min, max, range, any, all, next, hasattr, print  # noqa: A001
_json_dumps, _json_loads = json.dumps, json.loads


# ---------------------------------------------------------------- ToolUseBaseEnv (section 4)

# SPADE's tags, kept once in core/api/spadeRules.ts (generated into spade_rules; the host's
# core/models/toolCalls.ts and native/spade_tool_calls.py read the same). Only the compiled
# patterns stay in this module's globals, which a game's subclass can reach.
_ANSWER_TAG = re.compile(_spade_rules.ANSWER_TAG, re.S)
_TOOL_CALL_TAG = re.compile(_spade_rules.TOOL_CALL_BLOCK, re.S)
del _spade_rules


class ToolUseBaseEnv:
    """The base class SPADE injects for tool-use games, rebuilt from its described behaviour.

    Field order, texts and edge cases follow SPADE's class (docs/spade-formats.md section 4, checked
    against SPADE's code): the constructor calls self.reset(), the base reset() and solution()
    raise NotImplementedError, and there is no _advance_if_done (multi-turn games bring their own).
    Tool calls parsed by the rollout never reach step(); step() sees raw text only.
    """

    def __init__(self, max_turns: Any=10, **kwargs: Any) -> None:
        self.max_turns = max_turns
        self.turn_count = 0
        self._tools: dict[Any, Any] = {}
        self._state: dict[Any, Any] = {}
        self._call_history: list[Any] = []
        self._expected_answer: Any = None
        self.reset()

    def reset(self, seed: int | None=None) -> None:
        raise NotImplementedError("Subclass must implement reset()")

    def solution(self) -> Any:
        raise NotImplementedError("Subclass must implement solution()")

    def get_tools(self) -> Any:
        out = []
        for name, spec in self._tools.items():
            params = spec.get("parameters", {"type": "object", "properties": {}})
            out.append({"type": "function", "function": {"name": name, "description": spec.get("description", ""), "parameters": params}})
        return out

    def execute_tool(self, name: str, arguments: Any) -> Any:
        method = getattr(self, f"tool_{name}", None)
        if method is None:
            return {"output": f"Unknown tool '{name}'", "returncode": 1}
        try:
            result = method(**arguments)
            self._call_history.append({"name": name, "arguments": arguments, "result": str(result)})
            return {"output": str(result), "returncode": 0}
        except Exception as e:
            return {"output": f"Error calling {name}: {e}", "returncode": 1}

    def step(self, action: str) -> Any:
        self.turn_count += 1
        truncated = self.turn_count >= self.max_turns
        answer = _ANSWER_TAG.search(action)
        if answer:
            given = answer.group(1).strip()
            if self._check_answer(given):
                return "Correct!", 1.0, True, False, {}
            if truncated:
                return f"Wrong answer. Solution:\n{self.solution()}", 0.0, False, True, {}
            return self._incorrect_answer_feedback(), 0.0, False, False, {}
        call = _TOOL_CALL_TAG.search(action)
        if not call:
            if truncated:
                return f"Time up. Solution:\n{self.solution()}", 0.0, False, True, {}
            return "Format error: use tools to call a function, or <answer>result</answer> to submit.", -0.1, False, False, {}
        try:
            parsed = _json_loads(call.group(1))
            name = parsed.get("name", "")
            arguments = parsed.get("arguments", {})
            if not isinstance(arguments, dict):
                arguments = {}
        except (json.JSONDecodeError, AttributeError):
            if truncated:
                return f"Time up. Solution:\n{self.solution()}", 0.0, False, True, {}
            return "Format error: invalid tool call arguments.", -0.1, False, False, {}
        method = getattr(self, f"tool_{name}", None)
        if method is None:
            if truncated:
                return f"Time up. Solution:\n{self.solution()}", 0.0, False, True, {}
            return f"Unknown tool '{name}'. Available: {', '.join(self._tools.keys())}", 0.0, False, False, {}
        try:
            result = method(**arguments)
            self._call_history.append({"name": name, "arguments": arguments, "result": str(result)})
        except Exception as e:
            result = f"Error calling {name}: {e}"
        obs = f"Tool result:\n{result}"
        if truncated:
            return f"{obs}\n\nTime up. Solution:\n{self.solution()}", 0.0, False, True, {}
        return obs, 0.0, False, False, {}

    def _obs_suffix(self) -> Any:
        return ""  # tools now travel as the chat template's tools=; kept for older games

    def _incorrect_answer_feedback(self) -> Any:
        text = "Incorrect. Keep using tools."
        msgs = getattr(self, "_user_messages", None)
        idx = getattr(self, "_current_msg", None)
        if isinstance(msgs, (list, tuple)) and isinstance(idx, int) and 0 <= idx < len(msgs):
            text += (f" Not all steps are complete \u2014 you are still on step {idx + 1}/{len(msgs)}: \"{msgs[idx]}\""
                     " Complete this step with the tools before submitting <answer>done</answer>.")
        return text

    def _check_answer(self, answer: Any) -> Any:
        given = str(answer).strip()
        expected = str(self._expected_answer).strip()
        if given.lower() == expected.lower():
            return True
        try:
            a = float(given.replace("$", "").replace(",", "").strip())
            b = float(expected.replace("$", "").replace(",", "").strip())
            return abs(a - b) < 0.01
        except (ValueError, TypeError):
            return False

    def close(self) -> None:
        pass


def _tool_module() -> Any:
    """`from tool_use_base_env import ToolUseBaseEnv` must work, as in SPADE."""
    mod = types.ModuleType("tool_use_base_env")
    mod.ToolUseBaseEnv = ToolUseBaseEnv  # type: ignore[attr-defined]
    return mod
