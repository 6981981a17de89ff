"""SPADE's load checks (docs/spade-formats.md section 5): SPADE's own stages, limits and messages."""

from judge_channel import Env, Hang, LoadError, StepFailed, clip
from judge_context import PROBE_ACTIONS, SPADE_CHECKS


def spade_checks(A):
    """SPADE's load, as every SPADE play does it, then SPADE's pool admission; SPADE's limits."""
    A.call_limit = A.spade_limit
    try:
        return _spade_checks(A)
    finally:
        A.call_limit = A.limit


def _timed_out(e):
    # SPADE's alarm raises TimeoutError("env call timed out after 30s") inside the game call,
    # which the surrounding check reports like any other exception.
    return f"env call timed out after {e.limit:g}s"


def _spade_fail(A, cid, message, e=None, **evidence):
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
    A.put(cid, "fail", message, **ev)


def _spade_checks(A):
    hm = A.hm
    order = SPADE_CHECKS

    def stop_after(cid):
        i = order.index(cid)
        for later in order[i + 1:]:
            A.put(later, "skip", "Not reached: SPADE stops at the first failed check")

    def fail(cid, message, e=None, **ev):
        _spade_fail(A, cid, message, e, **ev)
        stop_after(cid)
        return None

    # SPADE's first check is one exec of the source: compiling it (a SyntaxError has its own
    # wording) and running the module's code. Two operations here, one check.
    A.phase("spade.exec")
    try:
        A.call("compile", "compile")
        A.call("exec", "exec")
    except LoadError as e:
        return fail("spade.exec", str(e), e)
    except Hang as e:
        return fail("spade.exec", f"Failed to execute game code: {_timed_out(e)}", e)

    A.put("spade.exec", "pass", "Source compiles and its module code runs")

    try:
        found = A.call("class", "class")
    except LoadError as e:
        return fail("spade.class", str(e))
    name = found["name"]
    A.class_name, A.tool_use, A.lines = name, bool(found["toolUse"]), found["lines"]
    first_env_name = found["candidates"]
    A.put("spade.class", "pass", f"Found {name}", observed=name, candidates=first_env_name[:5] if len(first_env_name) > 1 else None)

    A.phase("spade.instantiate")
    try:
        env = Env(A.call("__init__", "instantiate", budget=A.budget, legacy=A.mode == "legacy"), False)
    except LoadError as e:
        if e.stage == "missing_method":
            A.put("spade.instantiate", "pass", f"{name}() instantiates", line=A.line_of("__init__"))
            return fail("spade.methods", str(e), observed=str(e).rsplit(": ", 1)[-1])
        return fail("spade.instantiate", str(e), e, line=A.line_of("__init__"))
    except Hang as e:
        return fail("spade.instantiate", f"Failed to instantiate game class: {_timed_out(e)}", e)
    A.put("spade.instantiate", "pass", f"{name}() instantiates", line=A.line_of("__init__"))
    A.put("spade.methods", "pass", "reset and step are defined")

    # Validation, on the instance the play checks then use (as SPADE plays the validated instance).
    A.phase("spade.reset")
    try:
        ret = A.call("reset", "reset", seed=42, env=env.id)
        bad = hm.reset_problem(ret)
    except (Hang, StepFailed) as e:
        why = _timed_out(e) if isinstance(e, Hang) else _exc_text(e)
        return fail("spade.reset", f"Game reset() failed: {why}", e, seed=42)
    if bad:
        return fail("spade.reset", f"Game reset() failed: {bad}", seed=42, line=A.line_of("reset"), observed=clip(hm.plain(ret)))
    A.first_obs = ret if isinstance(ret, str) else ret[0]
    A.put("spade.reset", "pass", "reset(seed=42) returns a non-empty str and a dict", seed=42)

    A.phase("spade.step")
    done_actions = []
    for i, a in enumerate(PROBE_ACTIONS, start=1):
        try:
            ret = A.call("step", "step", action=a, seed=42, env=env.id)
        except (Hang, StepFailed) as e:
            why = _timed_out(e) if isinstance(e, Hang) else _exc_text(e)
            return fail("spade.step", f"Game step() failed on action {i} '{a}': {why}", e, seed=42, actions=done_actions + [a])
        done_actions.append(a)
        bad = hm.step_problem(ret)
        if bad:
            return fail("spade.step", f"Game step() failed on action {i} '{a}': {bad}", seed=42, actions=done_actions, line=A.line_of("step"), observed=clip(hm.plain(ret)))
        if ret[2] or ret[3]:
            break
    A.put("spade.step", "pass", f"{len(done_actions)} probe step(s) return valid 5-tuples", seed=42, actions=done_actions)

    A.phase("spade.reset2")
    try:
        A.call("reset", "reset", seed=123, env=env.id)
    except (Hang, StepFailed) as e:
        why = _timed_out(e) if isinstance(e, Hang) else _exc_text(e)
        return fail("spade.reset2", f"Game reset() failed on second call: {why}", e, seed=123)
    A.put("spade.reset2", "pass", "reset(seed=123) succeeds", seed=123)

    A.phase("spade.admission")
    check_admission(A)
    return env


def _exc_text(e):
    """str(exception) as SPADE formats it (error_info falls back to repr only for an empty str)."""
    return e.info.get("text", e.info.get("message", ""))


def check_admission(A):
    """SPADE's validate_game (played by the executor: a legacy load with budget 1000, the wrapper's
    reset(), raw steps "1", "2", "test" whose errors the wrapper swallows, then close()); 60 s for all."""
    A.call_limit = A.admission_limit
    try:
        A.call("admission", "admission")
    except LoadError as e:
        return _spade_fail(A, "spade.admission", f"Game validation failed: {e}", e)
    except Hang as e:
        return _spade_fail(A, "spade.admission", f"validate_game timed out after {e.limit:g}s", e)
    except StepFailed as e:
        return _spade_fail(A, "spade.admission", f"Game validation failed: {_exc_text(e)}", e, line=e.info.get("line"))
    finally:
        A.call_limit = A.spade_limit
    A.put("spade.admission", "pass", "Pool admission (legacy load, budget 1000, reset, steps \"1\" \"2\" \"test\", close) succeeds")


def _ev(e):
    if isinstance(e, Hang):
        return {"call": e.call, "hang": True, "observed": f"no return within {e.limit:g} s"}
    info = e.info
    return {"call": e.call, "line": info.get("line"), "traceback": clip(info.get("traceback", ""), 4000), "observed": f"{info.get('type')}: {clip(info.get('message', ''), 300)}"}
