"""Whole checks played ahead by the executor in one crossing: the judge's own check functions
(judge_play, judge_leak) run here against an audit context that asks this executor directly and
records every request with its answer; the judge then runs the same function and takes those
answers in turn (judge_context.Audit.x), asking live from the first request they do not answer.

There is one implementation of each check: nothing here decides what a check asks next. What runs
here only saves crossings; a game that patches it can change no verdict, since the judge takes an
answer only for exactly the request its own run of the check makes.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Callable

import judge_leak  # noqa: F401  (registers _reset_leak in AHEAD_CHECKS)
import judge_play  # noqa: F401  (registers the play checks in AHEAD_CHECKS)
from exec_values import _tagged
from judge_context import AHEAD_CHECKS, Audit, from_wire

# Operations a check played ahead never asks: itself (no recursion) and the load stages.
_NOT_AHEAD = frozenset(("ahead", "seq", "guess", "compile", "exec", "class", "instantiate", "admission", "reset_gate"))


class PlayedAhead:
    """The Executor's operation that plays a whole check ahead."""

    harness: ModuleType
    source: Any
    OPS: dict[str, Callable[..., Any]]

    def op_ahead(self, req: dict[str, Any]) -> Any:
        """Runs the judge's check `req["check"]` here; answers with every operation it asked, in
        order, as [the request, its tagged answer]. Where the check raised (a hang, a crash, a value
        it refuses), the records end there: the judge's own run raises at the same request."""
        fn = AHEAD_CHECKS.get(str(req.get("check")))
        if fn is None:
            raise self.harness.HarnessError("protocol", f"no check {req.get('check')!r} is played ahead")
        audit = RecordingAudit(self, req)
        try:
            fn(audit, *[from_wire(a) for a in req.get("args") or []])
        except Exception:
            pass  # the judge's run meets the same exception at the same request and reports it
        return {"v": None, "records": audit.records}


class RecordingAudit(Audit):
    """The judge's audit context with the judge's settings for this check, asking the executor
    in this interpreter instead of over the channel, and keeping what it asked."""

    def __init__(self, ex: PlayedAhead, req: dict[str, Any]) -> None:
        super().__init__(ex.harness, _no_channel, ex.source if isinstance(ex.source, str) else "", {})
        self.ex = ex
        self.budget, self.mode = req["budget"], req["mode"]
        self.call_limit = self.limit = float(req["limit"])
        self.tool_use = bool(req["toolUse"])
        self.records: list[list[Any]] = []

    def x(self, op: str, **args: Any) -> Any:
        want = {"op": op, **args}
        fn = self.ex.OPS.get(op)
        if fn is None or op in _NOT_AHEAD:
            raise RuntimeError(f"{op} is not played ahead")
        # The check reads the answer back through the codec, as it crosses the channel when the
        # judge asks live (tuples become lists, say), so both runs decide on the same values.
        got = self.loads(self.dumps(_tagged(fn(self.ex, dict(want)), self.ex.harness)))
        self.records.append([want, got])
        return got


def _no_channel(line: str) -> str:
    raise RuntimeError("a check played ahead asks the executor directly")

