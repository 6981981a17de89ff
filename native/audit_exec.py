"""SPADE Workbench audit, the executor half: runs one environment's code and returns raw values.

The audit's checks (native/audit_checks.py) decide statuses and verdicts in another interpreter:
a process of their own next to this one (native CPython, see cpython_main.py) or a second Pyodide
interpreter in the same worker (core/runtime/child.ts). They ask this module, one operation at a
time, to load the source, make instances, reset, step, call solution() or a tool, and read state;
each answer is the value the game returned, encoded with its exact types, or what it raised, or
that it hung. Nothing here judges: a game that patches this module can only change what it itself
appears to return, never how a check reads it or another environment's trace.

Installed into every harness as the "x" command; its state is this interpreter's one audited
environment (each audit gets a fresh interpreter).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import spade_rules
from exec_ahead import PlayedAhead
from exec_alias import ReturnedValues
from exec_fields import fields
from exec_values import STR_CAP, _ended, _probe_goes_on, _tagged, encode, load_error, long_str  # noqa: F401  (encode: audit_exec.encode is the codec's name)
from typing import TYPE_CHECKING, Any, Callable
from types import ModuleType

# Bound at import, before any game runs: a game that replaces os.write must not silence the
# deadline lines this executor sends its host (host_lines.py binds its own the same way).
_os_write = os.write

if TYPE_CHECKING:
    from harness import Harness

_ns = time.perf_counter_ns


class Timer:
    """Interrupts a runaway call. CPython main thread: the process's call alarm (harness_alarm),
    raising the harness's CallTimeout. Pyodide: the host's watchdog, told each call's deadline by a
    line on stderr (its interrupt arrives as KeyboardInterrupt)."""

    def __init__(self, harness: ModuleType) -> None:
        # arm/disarm are chosen once here, not tested at every call (~200 calls an audit).
        host = sys.platform == "emscripten"
        if hasattr(signal, "setitimer") and not host and threading.current_thread() is threading.main_thread():
            alarm = harness.call_alarm(harness.CallTimeout)
            self.arm, self.disarm = alarm.arm, alarm.disarm
        elif host:
            self.arm = lambda limit: self._tell_host(max(1, int(limit * 1000)))
            self.disarm = lambda: self._tell_host(0)
        else:
            self.arm = lambda limit: None  # no alarm off the main thread: the host's wall-clock limit remains
            self.disarm = lambda: None

    def _tell_host(self, ms: int) -> None:
        try:
            _os_write(2, f"\n@call-deadline {ms}\n".encode())
        except Exception:
            pass


# ---------------------------------------------------------------- the one audited environment


class Executor(PlayedAhead, ReturnedValues):
    OPS: dict[str, Callable[..., Any]]  # set below, once the class exists

    def __init__(self, h: Harness, harness: ModuleType) -> None:
        self.h, self.harness = h, harness
        self.timer: Any = None
        self.modules: Any = None
        self.source: Any = None
        self.code: Any = None
        self.ns: Any = None
        self.cls: Any = None
        self.envs: dict[Any, Any] = {}  # id -> (env, namespace)

    def start(self, req: dict[str, Any]) -> None:
        harness = self.harness
        self.timer = self.timer or Timer(harness)
        self.source = req.get("source")
        if not isinstance(self.source, str):
            raise harness.HarnessError("protocol", "the audit needs a source string")
        self.modules = {"random": harness.fresh_module("random"), "tool_use_base_env": harness._tool_module()}
        self.code = self.ns = self.cls = None
        self.envs = {}
        self.h.out.written = 0  # what this audit's game writes, from here on

    def call(self, fn: Callable[..., Any], *args: Any, limit: float=5.0) -> Any:
        """One call into environment code, as the audit always made it: the audit's own modules,
        output swallowed, a time limit; the outcome tagged ok / raised / hung / refused by SPADE."""
        harness = self.harness
        modules = sys.modules
        saved = [(name, modules.get(name)) for name in self.modules]
        modules.update(self.modules)
        out, err = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = self.h.out
        self.timer.arm(limit)
        # Nanoseconds, an int: a float's shortest repr cost a third of encoding an audit's answers.
        t0 = _ns()
        try:
            return {"v": fn(*args), "ns": _ns() - t0}
        except (harness.CallTimeout, KeyboardInterrupt):
            return {"hang": True, "ns": _ns() - t0}
        except harness.SpadeLoadError as e:
            return {"load": load_error(harness, e), "ns": _ns() - t0}
        except BaseException as e:  # SystemExit too: an exit in a game is a failure of that call
            ns = _ns() - t0
            info = harness.error_info(e)
            info["text"] = harness.str_safe(e)
            return {"raise": info, "ns": ns}
        finally:
            self.timer.disarm()
            sys.stdout, sys.stderr = out, err
            for name, mod in saved:
                if mod is None:
                    modules.pop(name, None)
                else:
                    modules[name] = mod
            self.h.out.take()  # what games print is not evidence; drop it so a flood costs nothing

    def env(self, req: dict[str, Any]) -> Any:
        e = self.envs.get(req.get("env"))
        if e is None:
            raise self.harness.HarnessError("protocol", f"no environment {req.get('env')!r}")
        return e

    def keep(self, env: Any, ns: dict[str, Any]) -> Any:
        eid = len(self.envs)
        self.envs[eid] = (env, ns)
        return eid

    # -- SPADE's load, one stage an operation
    def op_compile(self, req: dict[str, Any]) -> Any:
        try:
            self.code = self.harness.spade_compile(self.source)
        except self.harness.SpadeLoadError as e:
            return {"load": load_error(self.harness, e)}
        return {"v": None}

    def op_exec(self, req: dict[str, Any]) -> Any:
        mod, ns = self.harness.spade_namespace(self.modules)
        self.modules["dynamic_game"] = mod
        self.ns = ns
        return self.call(self.harness.spade_exec, self.code, ns, limit=req["limit"])

    def op_class(self, req: dict[str, Any]) -> Any:
        harness = self.harness
        try:
            name, cls = harness.spade_class(self.ns)
        except harness.SpadeLoadError as e:
            return {"load": load_error(harness, e)}
        self.cls = cls
        ns = self.ns
        candidates = [n for n in ns if n.endswith(spade_rules.ENV_CLASS_SUFFIX) and n not in spade_rules.ENV_CLASS_EXCLUDED and callable(ns[n])]
        lines = {}
        for m in ("__init__", "reset", "step", "solution"):
            fn = getattr(cls, m, None)
            code = getattr(fn, "__code__", None)
            if code is not None and code.co_filename == harness.ENV_FILENAME:
                lines[m] = code.co_firstlineno
        tool_use = isinstance(cls, type) and issubclass(cls, harness.ToolUseBaseEnv)
        return {"v": {"name": name, "toolUse": tool_use, "candidates": candidates, "lines": lines}}

    def op_instantiate(self, req: dict[str, Any]) -> Any:
        r = self.call(self.harness.spade_instantiate, self.cls, req["budget"], req["legacy"], limit=req["limit"])
        if "v" in r:
            r["v"] = self.keep(r["v"], self.ns)
        return r

    def op_fresh(self, req: dict[str, Any]) -> Any:
        harness = self.harness
        _mod, ns = harness.spade_namespace(self.modules)
        r = self.call(exec, self.code, ns, limit=req["limit"])
        if "v" not in r:
            return {**r, "at": "exec"}
        _name, cls = harness.find_env_class(ns)
        r = self.call(harness._instantiate, cls, req["mode"], req["budget"], limit=req["limit"])
        if "v" in r:
            r["v"] = self.keep(r["v"], ns)
        return r

    # -- playing
    def op_reset(self, req: dict[str, Any]) -> Any:
        env, _ns = self.env(req)
        seed = req.get("seed")
        if req.get("preseed"):
            self.modules["random"].seed(seed)
        return self.call(lambda: env.reset(seed=seed), limit=req["limit"])

    def op_step(self, req: dict[str, Any]) -> Any:
        env, _ns = self.env(req)
        return self.call(env.step, req["action"], limit=req["limit"])

    def op_solution(self, req: dict[str, Any]) -> Any:
        env, _ns = self.env(req)
        return self.call(env.solution, limit=req["limit"])

    def op_execute_tool(self, req: dict[str, Any]) -> Any:
        env, _ns = self.env(req)
        return self.call(env.execute_tool, req["name"], req["args"], limit=req["limit"])

    def op_admission(self, req: dict[str, Any]) -> Any:
        """SPADE's validate_game: a legacy load with budget 1000, the wrapper's reset(), raw steps
        "1", "2", "test" whose errors the wrapper swallows, then close(). Raw: did anything escape."""
        harness = self.harness

        def admit() -> None:
            modules = dict(self.modules)
            _mod, _ns, _name, env = harness.spade_load(self.source, modules, harness.ADMISSION_BUDGET, legacy=True, code=self.code)
            try:
                env.reset(seed=None)
            except Exception:
                pass  # the wrapper answers "Error during reset. Starting new game."
            for action in harness.ADMISSION_ACTIONS:
                try:
                    view = harness.spade_step_view(env.step(action))
                except Exception as e:
                    view = harness.spade_step_error(e)
                if view["terminated"] or view["truncated"]:
                    break
            if hasattr(env, "close"):
                env.close()

        r = self.call(admit, limit=req["limit"])
        return {"v": None} if "v" in r else r

    def op_episodes(self, req: dict[str, Any]) -> Any:
        """Several resets and steps in one crossing, each answer as op_reset/op_step give it.

        Items: {seed, preseed, reset, actions, stop, tolerate}. An item ends at an exception (the
        next item follows only when `tolerate`, up to `maxRaises` of them), and where `stop` is set
        at the end of its episode, judged as the checks judge it (`_ended`), so this never plays a
        step the checks would not have asked for; a hang ends the whole batch.
        """
        env, _ns = self.env(req)
        harness, limit = self.harness, req["limit"]
        out, raises = [], 0
        for item in req["items"]:
            got: dict[Any, Any] = {}
            out.append(got)
            if item.get("reset"):
                seed = item.get("seed")
                if item.get("preseed"):
                    self.modules["random"].seed(seed)
                r = self.call(lambda: env.reset(seed=seed), limit=limit)
                got["reset"] = _tagged(r, harness)
                if "v" not in r:
                    return {"raw": out}
            steps = got["steps"] = []
            for a in item.get("actions", ()):
                r = self.call(env.step, a, limit=limit)
                t = _tagged(r, harness)
                steps.append(t)
                if "hang" in r or "load" in r:
                    return {"raw": out}
                if "raise" in r:
                    raises += 1
                    if not item.get("tolerate") or raises >= req.get("maxRaises", 1 << 30):
                        return {"raw": out}
                    break
                if item.get("stop") and _ended(t["v"]):
                    break
        return {"raw": out}

    def op_seq(self, req: dict[str, Any]) -> Any:
        """Several operations in one crossing, in order, each answer exactly what the operation
        alone gives (tagged). It ends after the first that did not return (raised, hung, refused),
        where the checks stop; `when: k` / `unless: k` play an item only if answer k was / was not
        the value True (has_solution's answer, say), `probing: k` only if answer k was a step after
        which SPADE's probe goes on (exec_values._probe_goes_on). Skipped items answer None."""
        harness = self.harness
        out: list[Any] = []
        for item in req["items"]:
            if not isinstance(item, dict) or item.get("op") in SEQ_EXCLUDED or item.get("op") not in OPS:
                raise harness.HarnessError("protocol", f"operation {item.get('op') if isinstance(item, dict) else item!r} cannot be sequenced")
            probing = item.get("probing")
            if probing is not None:
                prev = out[probing] if isinstance(probing, int) and 0 <= probing < len(out) else None
                if prev is None or "v" not in prev or not _probe_goes_on(prev["v"]):
                    out.append(None)
                    continue
            cond = item.get("when", item.get("unless"))
            if cond is not None:
                prev = out[cond] if isinstance(cond, int) and 0 <= cond < len(out) else None
                hit = prev is not None and prev.get("v") is True
                if hit != ("when" in item):
                    out.append(None)
                    continue
            r = _tagged(OPS[item["op"]](self, item), harness)
            out.append(r)
            if "v" not in r:
                break
        return {"v": None, "items": out}

    def op_guess(self, req: dict[str, Any]) -> Any:
        """check_too_easy: SPADE's offline too-easy test (test_game_difficulty), played whole as
        SPADE plays it. A fresh SPADE load (its own validation included); then for each run the
        wrapper's reset(seed=run), whose exceptions the wrapper swallows, and up to `tries` wrapper
        steps, each with \\boxed{randint(1, 100)} drawn from the game's own process-global random
        just before the step (a game that seeds it at reset decides the guesses, as in SPADE),
        until harness.spade_guess_end says the run is over. Raw views only; the judge counts.

        Answers {runs: [{reset: {v: None, ns}, steps: [{a, v: {reward, terminated, truncated}, ns}]}]}; a call that did not
        return ends everything, its tagged outcome in place of `v`. A failed load answers as a
        call does (load / hang / raise)."""
        harness, limit = self.harness, req["limit"]
        # `legacy`: the load generate_and_validate_games.py makes (make_synthetic_env with SPADE's
        # default max_steps 1000, max_turns forced: synthetic_game_env.py:129, 240-246).
        loaded = self.call(lambda: harness.spade_load(self.source, dict(self.modules), req["budget"], legacy=bool(req.get("legacy")), code=self.code)[3], limit=req["loadLimit"])
        if "v" not in loaded:
            return loaded
        env, rnd = loaded["v"], self.modules["random"]
        runs = []

        def reset(seed: int | None) -> None:
            try:
                harness.spade_reset_view(env.reset(seed=seed))  # the wrapper's reading of it, side effects and all
            except Exception:
                pass  # the wrapper answers "Error during reset. Starting new game."

        def guessed(drawn: Any) -> Any:
            a = "\\boxed{" + str(rnd.randint(1, 100)) + "}"  # the game may have patched randint: inside the call
            drawn.append(a)
            try:
                view = harness.spade_step_view(env.step(a))
            except Exception as e:
                view = harness.spade_step_error(e)
            return {k: view[k] for k in ("reward", "terminated", "truncated")}

        for run in range(req["runs"]):
            steps: list[Any] = []
            r = self.call(reset, run, limit=limit)
            runs.append({"reset": r, "steps": steps})
            if "v" not in r:
                break
            for _ in range(req["tries"]):
                drawn: list[Any] = []
                r = self.call(guessed, drawn, limit=limit)
                steps.append({**r, "a": drawn[0] if drawn else None})  # None: the draw itself did not return
                if "v" not in r:
                    return {"v": None, "runs": runs}
                if harness.spade_guess_end(r["v"]):
                    break
        return {"v": None, "runs": runs}

    def op_reset_gate(self, req: dict[str, Any]) -> Any:
        """SPADE's reset-solvability gate as its trainer runs it (criteria_throw_at_reset,
        spade/core/envs/synthetic_game_env.py:487-545 at 9b2b813): per seed a fresh legacy load at
        the recipe's max_turns, the wrapper's reset(seed) (errors swallowed), then every criterion
        of `_message_criteria` on `_state` until one raises. Answers {rejects, checked, threw,
        criteria}; like SPADE it never raises on its own account (a load failure skips the seed)."""
        harness = self.harness

        def gate() -> Any:
            checked = threw = 0
            try:
                for seed in req["seeds"]:
                    try:
                        env = harness.spade_load(self.source, dict(self.modules), req["maxTurns"], legacy=True, code=self.code)[3]
                        try:
                            harness.spade_reset_view(env.reset(seed=seed))
                        except Exception:
                            pass  # the wrapper's reset answers "Error during reset. Starting new game."
                    except Exception:
                        continue
                    crits = getattr(env, "_message_criteria", None)
                    state = getattr(env, "_state", None)
                    if not crits or state is None:
                        return {"rejects": False, "checked": checked, "threw": threw, "criteria": False}
                    checked += 1
                    for c in crits:
                        try:
                            c(state)
                        except Exception:
                            threw += 1
                            break
                return {"rejects": checked > 0 and threw == checked, "checked": checked, "threw": threw, "criteria": True}
            except Exception:
                return {"rejects": False, "checked": checked, "threw": threw, "criteria": None}

        return self.call(gate, limit=req["limit"])

    # -- reading an instance
    def op_attr(self, req: dict[str, Any]) -> Any:
        env, _ns = self.env(req)
        return {"v": getattr(env, req["name"], None)}

    def op_has_solution(self, req: dict[str, Any]) -> Any:
        env, _ns = self.env(req)
        fn = getattr(env, "solution", None)
        return {"v": callable(fn) and getattr(type(env), "solution", None) is not self.harness.ToolUseBaseEnv.solution}

    def op_fields(self, req: dict[str, Any]) -> Any:
        env, ns = self.env(req)
        got = fields(self.harness, env, ns if req.get("globals") else {}, bool(req.get("shared")))
        # Each field's JSON text, bounded as every value is (exec_values): equal exactly when equal.
        return {"v": {k: t if len(t) <= STR_CAP else long_str(t) for k, t in got.items()}}

    def op_tool_methods(self, req: dict[str, Any]) -> Any:
        import inspect

        env, _ns = self.env(req)
        out = {}
        for n in req["names"]:
            fn = getattr(env, f"tool_{n}", None)
            info: dict[str, Any] = {"callable": callable(fn)}
            if callable(fn):
                try:
                    sig = inspect.signature(fn)
                    info["params"] = [[p.name, p.kind.name, p.default is p.empty] for p in sig.parameters.values()]
                except (TypeError, ValueError):
                    info["params"] = None
                code = getattr(fn, "__code__", None)
                info["line"] = code.co_firstlineno if code else None
            out[str(n)] = info
        return {"v": out}

    def op_criteria(self, req: dict[str, Any]) -> Any:
        env, _ns = self.env(req)
        crits = getattr(env, "_message_criteria", None) or []
        if not isinstance(crits, list) or not crits:
            return {"v": None}
        state = getattr(env, "_state", {})
        results = []
        for c in crits:
            r = self.call(lambda: bool(c(state)), limit=req["limit"])
            results.append(r)
            if "hang" in r:
                break
        return {"v": results}



OPS = {name[3:]: fn for cls in (PlayedAhead, ReturnedValues, Executor) for name, fn in vars(cls).items() if name.startswith("op_")}
Executor.OPS = OPS  # the checks played ahead (exec_ahead) ask their operations through it
# What a sequence may not hold: batches, whole checks, and the loading stages that begin a check
# of their own (instantiate, admission): the judge announces each check before its first
# operation, so that an interpreter that dies is blamed on the check it died in. compile, exec and
# class are all SPADE's first check (spade.exec) and may go in one sequence.
SEQ_EXCLUDED = frozenset(("seq", "instantiate", "admission", "reset_gate", "episodes", "ahead", "guess", "returned"))


def cmd_x(h: Harness, req: dict[str, Any], harness: ModuleType, ex: Executor) -> Any:
    op: Any = req.get("op")
    if op == "start":
        ex.start(req)
        return {"v": None}
    fn = OPS.get(op)
    if fn is None:
        raise harness.HarnessError("protocol", f"unknown audit operation {op!r}")
    r = _tagged(fn(ex, req), harness)
    # Bytes the game has written to stdout and stderr in this audit so far (each call's output is
    # dropped after it): every answer carries the running total, the judge keeps the largest.
    printed = ex.h.out.written
    if printed:
        r["printed"] = printed
    return r


def install(h: Harness, harness: ModuleType) -> Any:
    """Adds the executor's "x" command to a harness that runs environment code."""
    ex = Executor(h, harness)
    h.register("x", lambda hh, req: cmd_x(hh, req, harness, ex))
    return h
