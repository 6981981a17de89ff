"""SPADE Workbench harness: a tool call read from its <tool_call> block as SPADE's rollout reads it.

The host sends the block's text (core/models/toolCalls.ts keeps it); it is read here, in the game's
interpreter, by SPADE's parser (spade_tool_calls), so execute_tool gets Python's values: 1.0 a float,
integers of any size, True, the last of duplicate keys, a name json.loads made 5 or None.
"""

from __future__ import annotations

from typing import Any

from harness_values import HarnessError
from spade_tool_calls import parse_block

# Where json.loads in SPADE's interpreter (CPython 3.10-3.12, recursion limit 1000, less the frames
# of its rollout) raises RecursionError: near enough, and one depth for both runtimes (Pyodide's
# stack is not CPython's, and a deep enough value aborts Pyodide outright).
MAX_CALL_NESTING = 900


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


def read_call(block: str) -> tuple[Any, Any]:
    """The call's name and arguments as SPADE passes them to execute_tool.

    SPADE's parser raising (RecursionError: not the ValueError it catches) fails SPADE's whole
    episode; here it is the `unreadable_call` error, on which the host fails the episode too. A block
    the parser does not read at all is the host's mistake (it sends only blocks it read): `protocol`.
    """
    if nesting(block) > MAX_CALL_NESTING:
        raise HarnessError("unreadable_call", f"SPADE's tool-call parser raised RecursionError: the call nests deeper than {MAX_CALL_NESTING} levels")
    try:
        call = parse_block(block)
    except RecursionError as e:
        raise HarnessError("unreadable_call", f"SPADE's tool-call parser raised RecursionError: {e}") from None
    if call is None:
        raise HarnessError("protocol", "the tool call block is not a tool call SPADE reads")
    return call["name"], call["arguments"]
