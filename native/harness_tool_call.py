"""SPADE Workbench harness: a tool call read from its <tool_call> block as SPADE's rollout reads it.

The host sends the block's text (core/models/toolCalls.ts keeps it); it is read here, in the game's
interpreter, by SPADE's parser (spade_tool_calls), so execute_tool gets Python's values: 1.0 a float,
integers of any size, True, the last of duplicate keys, a name json.loads made 5 or None.
"""

from __future__ import annotations

from typing import Any

from harness_values import HarnessError
from spade_rules import MAX_CALL_NESTING
from spade_tool_calls import nesting, parse_block


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
