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

import time

from judge_channel import ExecutorGone, Hang, StepFailed, clip, forget
from judge_context import ALL_CHECKS, OUTPUT_CHECKS, PLAY_CHECKS, SPADE_CHECKS, TOOL_CHECKS, Audit
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
    get_solution,
    solution_fn,
)
from judge_spade import spade_checks
from judge_tools import tool_checks


def run_audit(hm, transport, source, options):
    forget()  # a judge serves audit after audit (both runtimes): the last one's types are not this one's
    A = Audit(hm, transport, source, options)
    t0 = time.perf_counter()
    A.x("start", source=source)
    env = spade_checks(A)
    if env is not None:
        play_checks(A, env)
    check_output_flood(A)
    checks = []
    order = ALL_CHECKS if A.tool_use else SPADE_CHECKS + PLAY_CHECKS + OUTPUT_CHECKS
    for cid in order:
        r = A.results.get(cid)
        if r is None:
            if env is not None or cid in SPADE_CHECKS:
                continue
            r = {"id": cid, "status": "skip", "message": "Not run: the environment did not pass SPADE's load checks", "evidence": {}}
        if A.want(cid):
            checks.append(r)
    return {"className": A.class_name, "toolUse": A.tool_use, "checks": checks, "elapsedMs": round((time.perf_counter() - t0) * 1000, 3)}


def play_checks(A, env):
    """The checks SPADE lacks, each isolated: a crash or hang in one is that check's result."""
    answers = []

    def guarded(cid, fn, *args):
        A.phase(cid)
        if A.hung is not None:
            if cid not in A.results:
                A.put(cid, "skip", f"Not run: {A.hung.call} hung earlier")
            return
        try:
            fn(*args)
        except Hang as e:
            A.hung = e
            A.put(cid, "fail", f"{e.call} hung (no return within {e.limit:g} s)" + (f" on action {clip(repr(e.action), 80)}" if e.action is not None else ""), call=e.call, seed=e.seed, actions=[clip(e.action, 200)] if e.action is not None else None, hang=True)
        except StepFailed as e:
            A.put(cid, "fail", f"{e.call} raised {e.info.get('type')}: {clip(e.info.get('message', ''), 200)}", call=e.call, seed=e.seed,
                  actions=[clip(e.action, 200)] if e.action is not None else None, line=e.info.get("line"), traceback=clip(e.info.get("traceback", ""), 3000))
        except Exception as e:  # a bug of ours must not lose the other checks
            A.put(cid, "skip", f"Audit error in this check: {type(e).__name__}: {clip(str(e), 200)}")

    def collect_answers():
        plan = []
        for seed in range(5):
            has = len(plan) + 1
            plan += [{"op": "reset", "seed": seed, "env": env.id, "limit": A.call_limit}, {"op": "has_solution", "env": env.id},
                     {"op": "solution", "env": env.id, "limit": A.call_limit, "when": has}]
            if A.tool_use:
                plan.append({"op": "attr", "env": env.id, "name": "_expected_answer", "unless": has})
        got = iter(A.seq(plan))
        for seed in range(5):
            A.reset(env, seed, tagged=next(got))
            has, sol, attr = next(got), next(got), next(got) if A.tool_use else None
            if A.value_of(has, "has_solution", env=env.id):
                v = A.call("solution", "solution", seed=seed, env=env.id) if sol is None else A.outcome("solution", sol, None, seed)
                answers.append((seed, " ".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)))
            elif A.tool_use:
                expected = A.value_of(attr, "attr", env=env.id, name="_expected_answer")
                if expected is not None:
                    answers.append((seed, str(expected)))

    def sol_actions(e):
        if solution_fn(A, e) is None:
            return None
        return get_solution(A, e, None)

    run = lambda cid, fn, *a: guarded(cid, fn, *a) if A.want(cid) or cid in ("types", "timing") else None
    run("determinism", check_determinism, A)
    run("seed-ignored", check_seed_ignored, A, env)
    run("reset-leak", check_reset_leak, A, sol_actions)
    if A.want("crash-on-action"):
        guarded("crash-on-action", check_crash, A, A.first_obs)
    run("solution", check_solution, A, env)
    run("too-easy", check_too_easy, A)
    guarded("hint-leak", collect_answers) if (A.want("hint-leak") or A.want("max-turns")) else None
    if "hint-leak" not in A.results:
        run("hint-leak", check_hint_leak, A, answers)
    run("max-turns", check_max_turns, A, env, [a for _, a in answers])
    if A.tool_use:
        def tools():
            tool_checks(A, env)
        guarded("tool.schema", tools)
        for cid in TOOL_CHECKS:
            if cid not in A.results:
                A.put(cid, "skip", "Not run: an earlier tool check stopped")
    check_types(A)
    check_timing(A)


def cmd_audit(h, req, hm, transport):
    source = req.get("source")
    if not isinstance(source, str):
        raise hm.HarnessError("protocol", "audit needs a source string")
    try:
        return run_audit(hm, transport, source, req.get("options") or {})
    except ExecutorGone as e:
        raise hm.HarnessError("crash", str(e))


def install_judge(h, hm, transport):
    """Adds the "audit" command to a harness that never runs environment code: the checks, which
    reach the game only through `transport` (a request line in, the executor's reply line out)."""
    h.register("audit", lambda hh, req: cmd_audit(hh, req, hm, transport))
    return h
