"""Whole checks played ahead by the executor in one crossing (the judge takes their answers in turn)."""

from __future__ import annotations

import math

from exec_values import _ended, _tagged, _truthy
from typing import TYPE_CHECKING, Any
from types import ModuleType

if TYPE_CHECKING:
    from audit_exec import Executor


class PlayedAhead:
    """The Executor's operations that play a whole check ahead."""

    # -- whole checks played ahead: each answers with the operations that check asks, in its order,
    # as [the request the checks send, its tagged answer], for the checks to take in turn (Audit.x).
    # Every choice (a turn limit, actions from solution()'s value, the end and win of an episode)
    # is made on the encoded answers exactly as the checks make it on decoded ones; where that is
    # not certain (a value of an unusual type) the play stops and the checks ask the rest
    # themselves. None of them plays an operation the checks would not ask next.

    def op_solution_ahead(self, req: dict[str, Any]) -> Any:
        """check_solution: has_solution, then for each seed reset, max_turns and solution() played."""
        eid, limit, rec = req["env"], req["limit"], _Recorder(self)
        if rec.ask(op="has_solution", env=eid).get("v") is not True:
            return rec.done()
        for seed in req["seeds"]:
            if not rec.reset(eid, seed, limit):
                return rec.done()
            turns = rec.turns(eid, req["budget"])
            if turns is None:
                return rec.done()
            played, won = 0, False
            last: Any = None
            while played < turns + 1:
                acts = rec.solution(eid, limit, seed, req["toolUse"])
                if not acts:
                    return rec.done()
                ended = False
                for a in acts:
                    last = rec.ask(op="step", limit=limit, action=a, seed=seed, env=eid)
                    if "v" not in last:
                        return rec.done()
                    played += 1
                    ended = _ended(last["v"])
                    if ended or played > turns:
                        break
                if ended:
                    won = _won_of(last["v"])
                    break
            if won is not True:
                return rec.done()
        return rec.done()

    def op_reset_leak_ahead(self, req: dict[str, Any]) -> Any:
        """check_reset_leak: two fresh snapshots, an episode of solution() (or the script), and the
        reset and snapshot after it."""
        limit, rec = req["limit"], _Recorder(self)
        seed = req["seed"]
        for _ in range(2):
            eid = rec.fresh(req)
            if eid is None or not rec.reset(eid, seed, limit, preseed=True) or not rec.fields(eid):
                return rec.done()
        eid = rec.fresh(req)
        if eid is None or not rec.reset(eid, req["firstSeed"], limit, preseed=True):
            return rec.done()
        has = rec.ask(op="has_solution", env=eid)
        if "v" not in has:
            return rec.done()
        acts = []
        if has["v"] is True:
            acts = rec.solution(eid, limit, None, req["toolUse"])
            if acts is None:
                return rec.done()
        if not acts:
            turns = rec.turns(eid, req["budget"])
            if turns is None:
                return rec.done()
            acts = _cycled(req["script"], turns)
        turns = rec.turns(eid, req["budget"])
        if turns is None:
            return rec.done()
        if rec.episode(eid, limit, {"actions": acts[: turns + 2], "stop": True}) and rec.reset(eid, seed, limit, preseed=True):
            rec.fields(eid)
        return rec.done()

    def op_determinism_ahead(self, req: dict[str, Any]) -> Any:
        """check_determinism: twice a fresh instance, its max_turns, and the script played from reset."""
        limit, rec = req["limit"], _Recorder(self)
        for _ in range(2):
            eid = rec.fresh(req)
            turns = None if eid is None else rec.turns(eid, req["budget"])
            if turns is None:
                return rec.done()
            item = {"seed": req["seed"], "preseed": False, "reset": True, "actions": _cycled(req["script"], turns), "stop": True}
            if not rec.episode(eid, limit, item):
                return rec.done()
        return rec.done()

    def op_crash_ahead(self, req: dict[str, Any]) -> Any:
        """check_crash: a fresh instance, then its fuzz episodes (given: they follow from nothing it answers)."""
        rec = _Recorder(self)
        eid = rec.fresh(req)
        if eid is not None:
            rec.ask(op="episodes", env=eid, limit=req["limit"], items=req["items"], maxRaises=req["maxRaises"])
        return rec.done()

    def op_max_turns_ahead(self, req: dict[str, Any]) -> Any:
        """check_max_turns: reset, max_turns, then the never-winning action played max_turns + 5 times."""
        eid, limit, rec = req["env"], req["limit"], _Recorder(self)
        if rec.reset(eid, req["seed"], limit):
            turns = rec.turns(eid, req["budget"])
            if turns is not None:
                rec.episode(eid, limit, {"actions": [req["action"]] * (turns + 5), "stop": True})
        return rec.done()


class _Recorder:
    """The operations a check played ahead asks, each kept with its tagged answer."""

    def __init__(self, ex: Any) -> None:
        self.ex = ex
        self.out: list[list[Any]] = []

    def ask(self, **r: Any) -> Any:
        got = _tagged(self.ex.OPS[r["op"]](self.ex, r), self.ex.harness)
        self.out.append([r, got])
        return got

    def done(self) -> Any:
        return {"v": None, "records": self.out}

    # The requests below are built exactly as judge_context.Audit builds them (x compares them whole).
    def fresh(self, req: dict[str, Any]) -> Any:
        """Audit.fresh(): the new instance's id, or None where the checks stop."""
        got = self.ask(op="fresh", limit=req["limit"], action=None, seed=None, mode=req["mode"], budget=req["budget"])
        return got["v"] if "v" in got and type(got["v"]) is int else None

    def reset(self, eid: int, seed: int | None, limit: float, preseed: bool=False) -> Any:
        """Audit.reset(): whether it returned (the checks stop where it did not)."""
        return "v" in self.ask(op="reset", limit=limit, action=None, seed=seed, env=eid, preseed=preseed)

    def fields(self, eid: int) -> Any:
        return "v" in self.ask(op="fields", env=eid, globals=True, shared=True)

    def episode(self, eid: int, limit: float, item: Any) -> Any:
        """Audit.episodes() of one item: whether the checks go on after it (no failed reset, no hang
        or refusal; a step that raised ends the episode, not the check)."""
        got = (self.ask(op="episodes", env=eid, limit=limit, items=[item]).get("raw") or [{}])[0]
        if item.get("reset") and "v" not in (got.get("reset") or {}):
            return False
        return not any("hang" in t or "load" in t for t in got.get("steps", []))

    def turns(self, eid: int, budget: int) -> Any:
        """Audit.turns(): max_turns read and judged, or None where the checks stop or it is uncertain."""
        got = self.ask(op="attr", env=eid, name="max_turns")
        return _turns_of(got["v"], budget) if "v" in got else None

    def solution(self, eid: int, limit: float, seed: int | None, tool_use: bool) -> Any:
        """get_solution(): its actions ([] where solution_fn says none), or None where the checks stop."""
        has = self.ask(op="has_solution", env=eid)
        if "v" not in has:
            return None
        if has["v"] is not True:
            return []
        got = self.ask(op="solution", limit=limit, action=None, seed=seed, env=eid)
        return _actions_of(got["v"], tool_use, self.ex.harness) if "v" in got else None


def _cycled(base: Any, n: int) -> Any:
    return [base[i % len(base)] for i in range(n)] if base else []


def _turns_of(enc: Any, budget: int) -> Any:
    """Audit.turns() of an encoded max_turns, or None where the encoding leaves it uncertain."""
    if isinstance(enc, dict):
        return None if "O" in enc and enc["O"].get("b") == "int" else budget
    return enc if type(enc) is int and 0 < enc <= 10_000 else budget


def _actions_of(enc: Any, tool_use: bool, harness: ModuleType) -> Any:
    """get_solution()'s actions for an encoded solution() value, or None where uncertain: plain
    values (and lists or tuples of them) decode to themselves, so the checks' rule applies as is."""
    plain = lambda x: x is None or type(x) in (str, int, float, bool)
    if isinstance(enc, dict):
        enc = enc.get("T", enc.get("L"))
        if not isinstance(enc, list) or not all(map(plain, enc)):
            return None
    elif not plain(enc):
        return None
    return harness.solution_actions(enc, tool_use)


def _won_of(enc: Any) -> Any:
    """judge_context.is_win of an ended step's encoded return: True, False, or None where uncertain."""
    items = enc.get("T") if isinstance(enc, dict) else None
    if not isinstance(items, list) or len(items) != 5:
        return None if isinstance(enc, dict) and "O" in enc else False
    r = items[1]
    if isinstance(r, dict):
        if "O" in r:
            return None
        reward = 0.0
    else:
        try:
            reward = float(r)
        except Exception:
            reward = 0.0
        if not math.isfinite(reward):
            reward = 0.0
    return _truthy(items[2]) and reward > 0
