"""SPADE's reading of tool calls in an agent's text (docs/spade-formats.md section 4), the rule the host's
core/models/toolCalls.ts applies too; both read their patterns from the generated spade_rules.

Each <tool_call>...</tool_call> block is the XML form <function=name><parameter=k>v</parameter></function>
(values stripped, HTML-unescaped, then JSON-decoded where they parse) or else the JSON form
{"name": ..., "arguments": {...}}; a block that parses neither way is dropped. An <answer> anywhere wins
over tool calls (the caller checks has_answer first).
"""
from __future__ import annotations

import html
import json
import re
from typing import Any, TypedDict

from spade_rules import ANSWER_TAG, END_OF_TURN, MAX_CALL_NESTING, TOOL_CALL_BLOCK, TOOL_CALL_JSON, TOOL_CALL_XML_FUNCTION, TOOL_CALL_XML_PARAMETER

_BLOCK = re.compile(TOOL_CALL_BLOCK, re.S)
_FUNCTION = re.compile(TOOL_CALL_XML_FUNCTION, re.S)
_PARAMETER = re.compile(TOOL_CALL_XML_PARAMETER, re.S)
_JSON_CALL = re.compile(TOOL_CALL_JSON, re.S)
_ANSWER = re.compile(ANSWER_TAG, re.S)


class ToolCall(TypedDict):
    # SPADE's value, passed to execute_tool as it is: a str from the XML form and the JSON pattern,
    # any JSON value (True, None, 1.0, a list) from a JSON block read whole. ToolUseBaseEnv looks up
    # f"tool_{name}", i.e. str(name), which is the name the host's toolCalls.ts gives.
    name: Any
    arguments: Any
    # The text inside <tool_call>...</tool_call> that name and arguments were read from. The host sends
    # it to the harness (native/harness.py cmd_tool), which reads it again with parse_block, so the
    # game gets Python's values (1.0 a float, big integers whole) and never JavaScript's.
    block: str


def _xml_block(block: str) -> ToolCall | None:
    found = _FUNCTION.search(block)
    if found is None:
        return None
    arguments: dict[str, Any] = {}
    for parameter in _PARAMETER.finditer(found.group(2)):
        text = html.unescape(parameter.group(2).strip())
        try:
            arguments[parameter.group(1)] = json.loads(text)
        except ValueError:
            arguments[parameter.group(1)] = text
    return {"name": found.group(1), "arguments": arguments, "block": block}


def _json_block(block: str) -> ToolCall | None:
    found = _JSON_CALL.search(block)
    if found is not None:
        try:
            arguments = json.loads(found.group(2))
        except ValueError:
            arguments = {}
        return {"name": found.group(1), "arguments": arguments, "block": block}
    try:
        data = json.loads(block.strip())
    except ValueError:
        return None
    if not isinstance(data, dict) or "name" not in data:
        return None
    arguments = data.get("arguments", data.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            arguments = {}
    return {"name": data["name"], "arguments": arguments, "block": block}


def parse_block(block: str) -> ToolCall | None:
    """One block's call as SPADE reads it (the XML form first, then the JSON form), or None."""
    return _xml_block(block) or _json_block(block)


def parse_tool_calls(text: str) -> list[ToolCall]:
    """Every tool call SPADE's rollout would send to execute_tool, in order."""
    if text.endswith(END_OF_TURN):
        text = text[: -len(END_OF_TURN)]
    calls: list[ToolCall] = []
    for block in _BLOCK.finditer(text.strip()):
        call = parse_block(block.group(1))
        if call is not None:
            calls.append(call)
    return calls


def nesting(text: str) -> int:
    """The deepest run of [ and { outside JSON strings (unclosed ones count: json.loads recurses into them too)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "[" or ch == "{":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif ch == "]" or ch == "}":
            depth -= 1
    return deepest


def calls_to_send(text: str) -> list[ToolCall]:
    """The calls the workbench sends to the harness for a text (core/models/toolCalls.ts): SPADE's,
    except that a block nested past MAX_CALL_NESTING (where SPADE's parser raises RecursionError and
    its rollout fails) is sent all the same: the harness answers `unreadable_call`, on which the host
    fails the episode."""
    if text.endswith(END_OF_TURN):
        text = text[: -len(END_OF_TURN)]
    calls: list[ToolCall] = []
    for block in _BLOCK.finditer(text.strip()):
        b = block.group(1)
        call: ToolCall | None = {"name": "", "arguments": None, "block": b} if nesting(b) > MAX_CALL_NESTING else parse_block(b)
        if call is not None:
            calls.append(call)
    return calls


def has_answer(text: str) -> bool:
    return _ANSWER.search(text) is not None
