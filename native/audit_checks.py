"""SPADE Workbench audit, the judge: every check over one environment, and its verdict.

This module never runs in the interpreter that runs the game. It runs in a process of its own
next to the game's (native CPython: native/cpython_main.py forks both for one audit) or in a second
Pyodide interpreter of the worker (core/runtime/child.ts), and reaches the game only through
native/audit_exec.py, one operation at a time over a line channel: load, instantiate, reset, step,
solution(), tools, state. What comes back are raw values with their exact types (`decode`); every
rule that turns them into a status, and every time measured, lives here, where a game that patches
its own interpreter cannot reach. `install_judge(harness, harness_module, transport)` adds the
"audit" command to a harness that runs no environment code.

Check ids are stable (scripts depend on them). Each result: {id, status: pass|warn|fail|skip,
message, evidence: {seed?, actions?, expected?, observed?, line?, traceback?, ...}}.
Written from docs/spade-formats.md sections 2-5; SPADE's own messages are kept for the spade.* checks.
"""

from __future__ import annotations

import time

from judge_channel import ExecutorGone, Hang, StepFailed, Uncarried, clip, forget
from judge_context import ALL_CHECKS, OUTPUT_CHECKS, PLAY_CHECKS, SPADE_CHECKS, TOOL_CHECKS, Audit
from judge_alias import check_aliasing
from judge_leak import check_reset_leak
from judge_play import (
    check_crash,
    check_determinism,
    check_hint_leak,
    check_max_turns,
    check_output_flood,
    check_seed_ignored,
    check_solution,
    check_timing,
    check_too_easy,
    check_types,
)
from judge_spade import spade_checks
from judge_tools import tool_checks
from typing import TYPE_CHECKING, Any, Callable
from types import ModuleType

if TYPE_CHECKING:
    from harness import Harness
    from harness_messages import AuditRequest
    from judge_channel import Env


def run_audit(harness: ModuleType, transport: Callable[[str], str], source: str, options: dict[str, Any]) -> Any:
    forget()  # a judge serves audit after audit (both runtimes): the last one's types are not this one's
    audit = Audit(harness, transport, source, options)
    t0 = time.perf_counter()
    try:
        audit.x("start", source=source)
        env = guarded_spade(audit)
        if env is not None:
            play_checks(audit, env)
        elif audit.opt.get("guessLoad") == "legacy" and audit.hung is None and audit.want("too-easy") and not _hung_in_spade(audit):
            # SPADE's random-guess test makes its own legacy load (generate_and_validate_games.py:41):
            # advice for a game whose respect-mode load failed, as the design round's SPADE mode shows it.
            audit.phase("too-easy")
            try:
                check_too_easy(audit)
            except Hang as e:
                audit.put("too-easy", "fail", f"{e.call} hung (no return within {e.limit:g} s)", call=e.call, seed=e.seed, hang=True)
            except StepFailed as e:
                audit.put("too-easy", "fail", f"{e.call} raised {e.info.get('type')}: {clip(e.info.get('message', ''), 200)}", call=e.call, seed=e.seed)
            except Exception as e:
                audit.put("too-easy", "skip", f"Audit error in this check: {type(e).__name__}: {clip(str(e), 200)}")
        check_output_flood(audit)
    except ExecutorGone as e:
        # The game's process died: what was decided before goes with the news (native: the judge
        # outlives it), so checks that passed keep their result and only the one it died in fails.
        e.results = list(audit.results.values())  # type: ignore[attr-defined]
        raise
    checks = []
    order = ALL_CHECKS if audit.tool_use else SPADE_CHECKS + PLAY_CHECKS + OUTPUT_CHECKS
    for cid in order:
        r = audit.results.get(cid)
        if r is None:
            if env is not None or cid in SPADE_CHECKS:
                continue
            r = {"id": cid, "status": "skip", "message": "Not run: the environment did not pass SPADE's load checks", "evidence": {}}
        if audit.want(cid):
            checks.append(r)
    if "spade.reset-gate" in audit.results:  # asked for by a design round only (judge_spade.check_reset_gate)
        checks.append(audit.results["spade.reset-gate"])
    return {"className": audit.class_name, "toolUse": audit.tool_use, "checks": checks, "elapsedMs": round((time.perf_counter() - t0) * 1000, 3)}


def _hung_in_spade(audit: Audit) -> bool:
    return any(r.get("evidence", {}).get("hang") for cid, r in audit.results.items() if str(cid).startswith("spade."))


def guarded_spade(audit: Audit) -> Any:
    """SPADE's checks; an answer they could not read (Uncarried, or an error of ours) fails the
    SPADE check it came in, as SPADE's load would stop there, instead of the whole audit dying
    and being blamed on whichever check the host heard of last (natively, spade.exec)."""
    try:
        return spade_checks(audit)
    except Exception as e:
        cid = audit.current if audit.current in SPADE_CHECKS else SPADE_CHECKS[0]
        audit.put(cid, "fail", uncarried_message(e), **uncarried_evidence(e))
        for later in SPADE_CHECKS[SPADE_CHECKS.index(cid) + 1:]:
            if later not in audit.results:
                audit.put(later, "skip", "Not reached: SPADE stops at the first failed check")
        return None


def uncarried_message(e: Exception) -> str:
    if isinstance(e, Uncarried):
        return f"The game's answer could not be carried to the checks ({clip(e.why, 200)}), so this check cannot pass"
    return f"Audit error in this check: {type(e).__name__}: {clip(str(e), 200)}"


def uncarried_evidence(e: Exception) -> dict[str, Any]:
    return {"call": e.op, "observed": clip(e.why, 300)} if isinstance(e, Uncarried) else {"observed": clip(f"{type(e).__name__}: {e}", 300)}


def play_checks(audit: Audit, env: Env) -> None:
    """The checks SPADE lacks, each isolated: a crash or hang in one is that check's result."""
    answers = []

    def guarded(cid: str, fn: Callable[..., Any], *args: Any) -> None:
        audit.phase(cid)
        if audit.hung is not None:
            if cid not in audit.results:
                audit.put(cid, "skip", f"Not run: {audit.hung.call} hung earlier")
            return
        try:
            fn(*args)
        except Hang as e:
            audit.hung = e
            audit.put(cid, "fail", f"{e.call} hung (no return within {e.limit:g} s)" + (f" on action {clip(repr(e.action), 80)}" if e.action is not None else ""), call=e.call, seed=e.seed, actions=[clip(e.action, 200)] if e.action is not None else None, hang=True)
        except StepFailed as e:
            audit.put(cid, "fail", f"{e.call} raised {e.info.get('type')}: {clip(e.info.get('message', ''), 200)}", call=e.call, seed=e.seed,
                  actions=[clip(e.action, 200)] if e.action is not None else None, line=e.info.get("line"), traceback=clip(e.info.get("traceback", ""), 3000))
        except Uncarried as e:  # never dropped: a check that could not read an answer cannot pass
            audit.put(cid, "fail", uncarried_message(e), **uncarried_evidence(e))
        except Exception as e:  # a bug of ours must not lose the other checks
            audit.put(cid, "skip", f"Audit error in this check: {type(e).__name__}: {clip(str(e), 200)}")

    def collect_answers() -> None:
        plan: list[Any] = []
        for seed in range(5):
            has = len(plan) + 1
            plan += [{"op": "reset", "seed": seed, "env": env.id, "limit": audit.call_limit}, {"op": "has_solution", "env": env.id},
                     {"op": "solution", "env": env.id, "limit": audit.call_limit, "when": has}]
            if audit.tool_use:
                plan.append({"op": "attr", "env": env.id, "name": "_expected_answer", "unless": has})
        got = iter(audit.seq(plan))
        for seed in range(5):
            audit.reset(env, seed, tagged=next(got))
            has, sol, attr = next(got), next(got), next(got) if audit.tool_use else None
            if audit.value_of(has, "has_solution", env=env.id):
                v = audit.call("solution", "solution", seed=seed, env=env.id) if sol is None else audit.outcome("solution", sol, None, seed)
                answers.append((seed, " ".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)))
            elif audit.tool_use:
                expected = audit.value_of(attr, "attr", env=env.id, name="_expected_answer")
                if expected is not None:
                    answers.append((seed, str(expected)))

    run = lambda cid, fn, *a: guarded(cid, fn, *a) if audit.want(cid) or cid in ("types", "timing") else None
    run("determinism", check_determinism, audit)
    run("seed-ignored", check_seed_ignored, audit, env)
    run("reset-leak", check_reset_leak, audit)
    run("aliasing", check_aliasing, audit)
    if audit.want("crash-on-action"):
        guarded("crash-on-action", check_crash, audit, audit.first_obs)
    run("solution", check_solution, audit, env)
    run("too-easy", check_too_easy, audit)
    guarded("hint-leak", collect_answers) if (audit.want("hint-leak") or audit.want("max-turns")) else None
    if "hint-leak" not in audit.results:
        run("hint-leak", check_hint_leak, audit, answers)
    run("max-turns", check_max_turns, audit, env, [a for _, a in answers])
    if audit.tool_use:
        def tools() -> None:
            tool_checks(audit, env)
        guarded("tool.schema", tools)
        for cid in TOOL_CHECKS:
            if cid not in audit.results:
                audit.put(cid, "skip", "Not run: an earlier tool check stopped")
    check_types(audit)
    check_timing(audit)


def cmd_audit(h: Harness, req: AuditRequest, harness: ModuleType, transport: Callable[[str], str]) -> Any:
    source = req.get("source")
    if not isinstance(source, str):
        raise harness.HarnessError("protocol", "audit needs a source string")
    try:
        return run_audit(harness, transport, source, req.get("options") or {})
    except ExecutorGone as e:
        phase = getattr(e, "phase", None)
        extra: dict[str, Any] = {"phase": phase} if isinstance(phase, str) else {}
        results = getattr(e, "results", None)
        if isinstance(results, list):
            extra["results"] = results
        raise harness.HarnessError("crashed", str(e), **extra)


def install_judge(h: Harness, harness: ModuleType, transport: Callable[[str], str]) -> Any:
    """Adds the "audit" command to a harness that never runs environment code: the checks, which
    reach the game only through `transport` (a request line in, the executor's reply line out)."""
    h.register("audit", lambda hh, req: cmd_audit(hh, req, harness, transport))
    return h
