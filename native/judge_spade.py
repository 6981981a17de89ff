"""SPADE's load checks (docs/spade-formats.md section 5): SPADE's own stages, limits and messages."""

from __future__ import annotations

from judge_channel import Env, Hang, LoadError, StepFailed, clip
from judge_context import PROBE_ACTIONS, SPADE_CHECKS
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judge_context import Audit


def spade_checks(audit: Audit) -> Any:
    """SPADE's load, as every SPADE play does it, then SPADE's pool admission; SPADE's limits."""
    audit.call_limit = audit.spade_limit
    try:
        return _spade_checks(audit)
    finally:
        audit.call_limit = audit.limit


def _timed_out(e: Any) -> Any:
    # SPADE's alarm raises TimeoutError("env call timed out after 30s") inside the game call,
    # which the surrounding check reports like any other exception.
    return f"env call timed out after {e.limit:g}s"


def _spade_fail(audit: Audit, cid: str, message: str, e: Any=None, **evidence: Any) -> None:
    ev = dict(evidence)
    cause = e.cause if isinstance(e, LoadError) else None
    if isinstance(e, Hang):
        ev.update(call=e.call, hang=True, observed=f"no return within {e.limit:g} s")
    elif isinstance(e, StepFailed):
        ev.update(_ev(e))
    elif cause:
        ev.update(line=cause.get("line"), observed=clip(f"{cause.get('type')}: {cause.get('message', '')}", 300))
        if "syntax" in cause:
            ev["line"] = cause["syntax"]
        else:
            ev["traceback"] = clip(cause.get("traceback", ""), 4000)
    audit.put(cid, "fail", message, **ev)


def _spade_checks(audit: Audit) -> Any:
    harness = audit.harness
    order = SPADE_CHECKS

    def stop_after(cid: str) -> None:
        i = order.index(cid)
        for later in order[i + 1:]:
            audit.put(later, "skip", "Not reached: SPADE stops at the first failed check")

    def fail(cid: str, message: str, e: Any=None, **ev: Any) -> Any:
        _spade_fail(audit, cid, message, e, **ev)
        stop_after(cid)
        # `admissionAlways` (design rounds): SPADE's trainer decides on validate_game alone, a
        # legacy load of its own, which may pass where this respect-mode load failed. Not after a
        # hang: the interpreter that hung is not asked again.
        if audit.opt.get("admissionAlways") and not isinstance(e, Hang):
            audit.phase("spade.admission")
            check_admission(audit)
            gate_if_admitted(audit)
        return None

    # SPADE's first check is one exec of the source: compiling it (a SyntaxError has its own
    # wording) and running the module's code. Two operations here, one check.
    # The class is found in the same crossing: SPADE's next stage, still inside this check's phase.
    audit.phase("spade.exec")
    stage = {"limit": audit.call_limit, "action": None, "seed": None}
    loaded = audit.seq([{"op": "compile", **stage}, {"op": "exec", **stage}, {"op": "class", **stage}])
    try:
        audit.call_of(loaded[0], "compile", "compile")
        audit.call_of(loaded[1], "exec", "exec")
    except LoadError as e:
        return fail("spade.exec", str(e), e)
    except Hang as e:
        return fail("spade.exec", f"Failed to execute game code: {_timed_out(e)}", e)

    audit.put("spade.exec", "pass", "Source compiles and its module code runs")

    try:
        found = audit.call_of(loaded[2], "class", "class")
    except LoadError as e:
        return fail("spade.class", str(e))
    name = found["name"]
    audit.class_name, audit.tool_use, audit.lines = name, bool(found["toolUse"]), found["lines"]
    first_env_name = found["candidates"]
    audit.put("spade.class", "pass", f"Found {name}", observed=name, candidates=first_env_name[:5] if len(first_env_name) > 1 else None)

    audit.phase("spade.instantiate")
    try:
        env = Env(audit.call("__init__", "instantiate", budget=audit.budget, legacy=audit.mode == "legacy"), False)
    except LoadError as e:
        if e.stage == "missing_method":
            audit.put("spade.instantiate", "pass", f"{name}() instantiates", line=audit.line_of("__init__"))
            return fail("spade.methods", str(e), observed=str(e).rsplit(": ", 1)[-1])
        return fail("spade.instantiate", str(e), e, line=audit.line_of("__init__"))
    except Hang as e:
        return fail("spade.instantiate", f"Failed to instantiate game class: {_timed_out(e)}", e)
    audit.put("spade.instantiate", "pass", f"{name}() instantiates", line=audit.line_of("__init__"))
    audit.put("spade.methods", "pass", "reset and step are defined")

    # Validation, on the instance the play checks then use (as SPADE plays the validated instance).
    audit.phase("spade.reset")
    try:
        ret = audit.call("reset", "reset", seed=42, env=env.id)
        bad = harness.reset_problem(ret)
    except (Hang, StepFailed) as e:
        why = _timed_out(e) if isinstance(e, Hang) else _exc_text(e)
        return fail("spade.reset", f"Game reset() failed: {why}", e, seed=42)
    if bad:
        return fail("spade.reset", f"Game reset() failed: {bad}", seed=42, line=audit.line_of("reset"), observed=clip(harness.plain(ret)))
    audit.first_obs = ret if isinstance(ret, str) else ret[0]
    audit.put("spade.reset", "pass", "reset(seed=42) returns a non-empty str and a dict", seed=42)

    audit.phase("spade.step")
    # The probe steps in one crossing: each after the first is played only where the one before it
    # certainly lets the probe go on (`probing`); else the loop below asks for it if it wants it.
    probe = [{"op": "step", "limit": audit.call_limit, "action": a, "seed": 42, "env": env.id, **({"probing": i - 1} if i else {})} for i, a in enumerate(PROBE_ACTIONS)]
    stepped = audit.seq(probe)
    done_actions: list[Any] = []
    for i, a in enumerate(PROBE_ACTIONS, start=1):
        try:
            ret = audit.call_of(stepped[i - 1], "step", "step", action=a, seed=42, env=env.id)
        except (Hang, StepFailed) as e:
            why = _timed_out(e) if isinstance(e, Hang) else _exc_text(e)
            return fail("spade.step", f"Game step() failed on action {i} '{a}': {why}", e, seed=42, actions=done_actions + [a])
        done_actions.append(a)
        bad = harness.step_problem(ret)
        if bad:
            return fail("spade.step", f"Game step() failed on action {i} '{a}': {bad}", seed=42, actions=done_actions, line=audit.line_of("step"), observed=clip(harness.plain(ret)))
        if ret[2] or ret[3]:
            break
    audit.put("spade.step", "pass", f"{len(done_actions)} probe step(s) return valid 5-tuples", seed=42, actions=done_actions)

    audit.phase("spade.reset2")
    try:
        audit.call("reset", "reset", seed=123, env=env.id)
    except (Hang, StepFailed) as e:
        why = _timed_out(e) if isinstance(e, Hang) else _exc_text(e)
        return fail("spade.reset2", f"Game reset() failed on second call: {why}", e, seed=123)
    audit.put("spade.reset2", "pass", "reset(seed=123) succeeds", seed=123)

    audit.phase("spade.admission")
    check_admission(audit)
    gate_if_admitted(audit)
    return env


def _exc_text(e: Any) -> Any:
    """str(exception) as SPADE formats it (error_info falls back to repr only for an empty str)."""
    return e.info.get("text", e.info.get("message", ""))


def check_admission(audit: Audit) -> Any:
    """SPADE's validate_game (played by the executor: a legacy load with budget 1000, the wrapper's
    reset(), raw steps "1", "2", "test" whose errors the wrapper swallows, then close()); 60 s for all."""
    audit.call_limit = audit.admission_limit
    try:
        audit.call("admission", "admission")
    except LoadError as e:
        return _spade_fail(audit, "spade.admission", f"Game validation failed: {e}", e)
    except Hang as e:
        return _spade_fail(audit, "spade.admission", f"validate_game timed out after {e.limit:g}s", e)
    except StepFailed as e:
        return _spade_fail(audit, "spade.admission", f"Game validation failed: {_exc_text(e)}", e, line=e.info.get("line"))
    finally:
        audit.call_limit = audit.spade_limit
    audit.put("spade.admission", "pass", "Pool admission (legacy load, budget 1000, reset, steps \"1\" \"2\" \"test\", close) succeeds")


def gate_if_admitted(audit: Audit) -> None:
    """The reset gate where the design round asks for it, after validate_game passed (SPADE's order)."""
    if audit.opt.get("resetGate") and audit.results.get("spade.admission", {}).get("status") == "pass":
        check_reset_gate(audit, audit.opt["resetGate"])


def check_reset_gate(audit: Audit, gate: Any) -> Any:
    """SPADE's reset-solvability gate (criteria_throw_at_reset; run by the trainer after
    validate_game where SPADE_RESET_GATE is set and rollout_id > 0, orchestrator.py:1140-1154),
    asked only when the design round's recipe turns it on: `resetGate: {maxTurns}`. Its id is
    not one of SPADE_CHECKS: only such an audit has it."""
    cid = "spade.reset-gate"
    turns = gate.get("maxTurns") if isinstance(gate, dict) else None
    turns = turns if isinstance(turns, int) and not isinstance(turns, bool) and turns > 0 else 25
    audit.phase(cid)
    audit.call_limit = audit.admission_limit
    try:
        got = audit.call("reset_gate", "reset_gate", seeds=[0, 1, 2], maxTurns=turns)
    except Hang as e:
        return audit.put(cid, "fail", f"The reset gate did not return within {e.limit:g} s", call=e.call, hang=True, observed=f"no return within {e.limit:g} s")
    except (StepFailed, LoadError) as e:
        return audit.put(cid, "skip", f"The reset gate could not run: {clip(str(e), 200)}")
    finally:
        audit.call_limit = audit.spade_limit
    ev = {"seed": [0, 1, 2], "observed": {k: got.get(k) for k in ("checked", "threw", "criteria")}, "maxTurns": turns}
    if got.get("rejects"):
        return audit.put(cid, "fail", "Reset-solvability gate: a success criterion raises on the initial state at every tested seed (unsolvable step).", **ev)
    audit.put(cid, "pass", "No success criterion raises at every tested seed" if got.get("criteria") else "No _message_criteria: the reset gate keeps the game", **ev)


def _ev(e: Any) -> Any:
    if isinstance(e, Hang):
        return {"call": e.call, "hang": True, "observed": f"no return within {e.limit:g} s"}
    info = e.info
    return {"call": e.call, "line": info.get("line"), "traceback": clip(info.get("traceback", ""), 4000), "observed": f"{info.get('type')}: {clip(info.get('message', ''), 300)}"}
