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

import os
import signal
import sys
import threading
import time

from exec_ahead import PlayedAhead
from exec_fields import fields
from exec_values import _ended, _tagged, encode, load_error  # noqa: F401  (encode: audit_exec.encode is the codec's name)

_ns = time.perf_counter_ns


class Timer:
    """Interrupts a runaway call. CPython main thread: the process's call alarm (harness_alarm),
    raising the harness's CallTimeout. Pyodide: the host's watchdog, told each call's deadline by a
    line on stderr (its interrupt arrives as KeyboardInterrupt)."""

    def __init__(self, hm):
        # arm/disarm are chosen once here, not tested at every call (~200 calls an audit).
        host = sys.platform == "emscripten"
        if hasattr(signal, "setitimer") and not host and threading.current_thread() is threading.main_thread():
            alarm = hm.call_alarm(hm.CallTimeout)
            self.arm, self.disarm = alarm.arm, alarm.disarm
        elif host:
            self.arm = lambda limit: self._tell_host(max(1, int(limit * 1000)))
            self.disarm = lambda: self._tell_host(0)
        else:
            self.arm = lambda limit: None  # no alarm off the main thread: the host's wall-clock limit remains
            self.disarm = lambda: None

    def _tell_host(self, ms):
        try:
            os.write(2, f"\n@call-deadline {ms}\n".encode())
        except Exception:
            pass


# ---------------------------------------------------------------- the one audited environment


class Executor(PlayedAhead):
    def __init__(self, h, hm):
        self.h, self.hm = h, hm
        self.timer = None
        self.modules = None
        self.source = None
        self.code = None
        self.ns = None
        self.cls = None
        self.envs = {}  # id -> (env, namespace)

    def start(self, req):
        hm = self.hm
        self.timer = self.timer or Timer(hm)
        self.source = req.get("source")
        if not isinstance(self.source, str):
            raise hm.HarnessError("protocol", "the audit needs a source string")
        self.modules = {"random": hm.fresh_module("random"), "tool_use_base_env": hm._tool_module()}
        self.code = self.ns = self.cls = None
        self.envs = {}
        self.h.out.written = 0  # what this audit's game writes, from here on

    def call(self, fn, *args, limit=5.0):
        """One call into environment code, as the audit always made it: the audit's own modules,
        output swallowed, a time limit; the outcome tagged ok / raised / hung / refused by SPADE."""
        hm = self.hm
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
        except (hm.CallTimeout, KeyboardInterrupt):
            return {"hang": True, "ns": _ns() - t0}
        except hm.SpadeLoadError as e:
            return {"load": load_error(hm, e), "ns": _ns() - t0}
        except BaseException as e:  # SystemExit too: an exit in a game is a failure of that call
            ns = _ns() - t0
            info = hm.error_info(e)
            info["text"] = hm.str_safe(e)
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

    def env(self, req):
        e = self.envs.get(req.get("env"))
        if e is None:
            raise self.hm.HarnessError("protocol", f"no environment {req.get('env')!r}")
        return e

    def keep(self, env, ns):
        eid = len(self.envs)
        self.envs[eid] = (env, ns)
        return eid

    # -- SPADE's load, one stage an operation
    def op_compile(self, req):
        try:
            self.code = self.hm.spade_compile(self.source)
        except self.hm.SpadeLoadError as e:
            return {"load": load_error(self.hm, e)}
        return {"v": None}

    def op_exec(self, req):
        mod, ns = self.hm.spade_namespace(self.modules)
        self.modules["dynamic_game"] = mod
        self.ns = ns
        return self.call(self.hm.spade_exec, self.code, ns, limit=req["limit"])

    def op_class(self, req):
        hm = self.hm
        try:
            name, cls = hm.spade_class(self.ns)
        except hm.SpadeLoadError as e:
            return {"load": load_error(hm, e)}
        self.cls = cls
        ns = self.ns
        candidates = [n for n in ns if n.endswith("Env") and n not in ("Env", "ToolUseBaseEnv") and callable(ns[n])]
        lines = {}
        for m in ("__init__", "reset", "step", "solution"):
            fn = getattr(cls, m, None)
            code = getattr(fn, "__code__", None)
            if code is not None and code.co_filename == hm.ENV_FILENAME:
                lines[m] = code.co_firstlineno
        tool_use = isinstance(cls, type) and issubclass(cls, hm.ToolUseBaseEnv)
        return {"v": {"name": name, "toolUse": tool_use, "candidates": candidates, "lines": lines}}

    def op_instantiate(self, req):
        r = self.call(self.hm.spade_instantiate, self.cls, req["budget"], req["legacy"], limit=req["limit"])
        if "v" in r:
            r["v"] = self.keep(r["v"], self.ns)
        return r

    def op_fresh(self, req):
        hm = self.hm
        _mod, ns = hm.spade_namespace(self.modules)
        r = self.call(exec, self.code, ns, limit=req["limit"])
        if "v" not in r:
            return {**r, "at": "exec"}
        _name, cls = hm.find_env_class(ns)
        r = self.call(hm._instantiate, cls, req["mode"], req["budget"], limit=req["limit"])
        if "v" in r:
            r["v"] = self.keep(r["v"], ns)
        return r

    # -- playing
    def op_reset(self, req):
        env, _ns = self.env(req)
        seed = req.get("seed")
        if req.get("preseed"):
            self.modules["random"].seed(seed)
        return self.call(lambda: env.reset(seed=seed), limit=req["limit"])

    def op_step(self, req):
        env, _ns = self.env(req)
        return self.call(env.step, req["action"], limit=req["limit"])

    def op_solution(self, req):
        env, _ns = self.env(req)
        return self.call(env.solution, limit=req["limit"])

    def op_execute_tool(self, req):
        env, _ns = self.env(req)
        return self.call(env.execute_tool, req["name"], req["args"], limit=req["limit"])

    def op_admission(self, req):
        """SPADE's validate_game: a legacy load with budget 1000, the wrapper's reset(), raw steps
        "1", "2", "test" whose errors the wrapper swallows, then close(). Raw: did anything escape."""
        hm = self.hm

        def admit():
            modules = dict(self.modules)
            _mod, _ns, _name, env = hm.spade_load(self.source, modules, hm.ADMISSION_BUDGET, legacy=True, code=self.code)
            try:
                env.reset(seed=None)
            except Exception:
                pass  # the wrapper answers "Error during reset. Starting new game."
            for action in hm.ADMISSION_ACTIONS:
                try:
                    view = hm.spade_step_view(env.step(action))
                except Exception as e:
                    view = hm.spade_step_error(e)
                if view["terminated"] or view["truncated"]:
                    break
            if hasattr(env, "close"):
                env.close()

        r = self.call(admit, limit=req["limit"])
        return {"v": None} if "v" in r else r

    def op_episodes(self, req):
        """Several resets and steps in one crossing, each answer as op_reset/op_step give it.

        Items: {seed, preseed, reset, actions, stop, tolerate}. An item ends at an exception (the
        next item follows only when `tolerate`, up to `maxRaises` of them), and where `stop` is set
        at the end of its episode, judged as the checks judge it (`_ended`), so this never plays a
        step the checks would not have asked for; a hang ends the whole batch.
        """
        env, _ns = self.env(req)
        hm, limit = self.hm, req["limit"]
        out, raises = [], 0
        for item in req["items"]:
            got = {}
            out.append(got)
            if item.get("reset"):
                seed = item.get("seed")
                if item.get("preseed"):
                    self.modules["random"].seed(seed)
                r = self.call(lambda: env.reset(seed=seed), limit=limit)
                got["reset"] = _tagged(r, hm)
                if "v" not in r:
                    return {"raw": out}
            steps = got["steps"] = []
            for a in item.get("actions", ()):
                r = self.call(env.step, a, limit=limit)
                t = _tagged(r, hm)
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

    def op_seq(self, req):
        """Several operations in one crossing, in order, each answer exactly what the operation
        alone gives (tagged). It ends after the first that did not return (raised, hung, refused),
        where the checks stop; `when: k` / `unless: k` play an item only if answer k was / was not
        the value True (has_solution's answer, say). Skipped items answer None."""
        hm = self.hm
        out = []
        for item in req["items"]:
            if not isinstance(item, dict) or item.get("op") in SEQ_EXCLUDED or item.get("op") not in OPS:
                raise hm.HarnessError("protocol", f"operation {item.get('op') if isinstance(item, dict) else item!r} cannot be sequenced")
            cond = item.get("when", item.get("unless"))
            if cond is not None:
                prev = out[cond] if isinstance(cond, int) and 0 <= cond < len(out) else None
                hit = prev is not None and prev.get("v") is True
                if hit != ("when" in item):
                    out.append(None)
                    continue
            r = _tagged(OPS[item["op"]](self, item), hm)
            out.append(r)
            if "v" not in r:
                break
        return {"v": None, "items": out}

    def op_guess(self, req):
        """check_too_easy: SPADE's offline too-easy test (test_game_difficulty), played whole as
        SPADE plays it. A fresh SPADE load (its own validation included); then for each run the
        wrapper's reset(seed=run), whose exceptions the wrapper swallows, and up to `tries` wrapper
        steps, each with \\boxed{randint(1, 100)} drawn from the game's own process-global random
        just before the step (a game that seeds it at reset decides the guesses, as in SPADE),
        until harness.spade_guess_end says the run is over. Raw views only; the judge counts.

        Answers {runs: [{reset: {v: None, ns}, steps: [{a, v: {reward, terminated, truncated}, ns}]}]}; a call that did not
        return ends everything, its tagged outcome in place of `v`. A failed load answers as a
        call does (load / hang / raise)."""
        hm, limit = self.hm, req["limit"]
        loaded = self.call(lambda: hm.spade_load(self.source, dict(self.modules), req["budget"], code=self.code)[3], limit=req["loadLimit"])
        if "v" not in loaded:
            return loaded
        env, rnd = loaded["v"], self.modules["random"]
        runs = []

        def reset(seed):
            try:
                hm.spade_reset_view(env.reset(seed=seed))  # the wrapper's reading of it, side effects and all
            except Exception:
                pass  # the wrapper answers "Error during reset. Starting new game."

        def guessed(drawn):
            a = "\\boxed{" + str(rnd.randint(1, 100)) + "}"  # the game may have patched randint: inside the call
            drawn.append(a)
            try:
                view = hm.spade_step_view(env.step(a))
            except Exception as e:
                view = hm.spade_step_error(e)
            return {k: view[k] for k in ("reward", "terminated", "truncated")}

        for run in range(req["runs"]):
            steps = []
            r = self.call(reset, run, limit=limit)
            runs.append({"reset": r, "steps": steps})
            if "v" not in r:
                break
            for _ in range(req["tries"]):
                drawn = []
                r = self.call(guessed, drawn, limit=limit)
                steps.append({**r, "a": drawn[0] if drawn else None})  # None: the draw itself did not return
                if "v" not in r:
                    return {"v": None, "runs": runs}
                if hm.spade_guess_end(r["v"]):
                    break
        return {"v": None, "runs": runs}

    # -- reading an instance
    def op_attr(self, req):
        env, _ns = self.env(req)
        return {"v": getattr(env, req["name"], None)}

    def op_has_solution(self, req):
        env, _ns = self.env(req)
        fn = getattr(env, "solution", None)
        return {"v": callable(fn) and getattr(type(env), "solution", None) is not self.hm.ToolUseBaseEnv.solution}

    def op_fields(self, req):
        env, ns = self.env(req)
        return {"v": fields(self.hm, env, ns if req.get("globals") else {}, bool(req.get("shared")))}

    def op_tool_methods(self, req):
        import inspect

        env, _ns = self.env(req)
        out = {}
        for n in req["names"]:
            fn = getattr(env, f"tool_{n}", None)
            info = {"callable": callable(fn)}
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

    def op_criteria(self, req):
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



OPS = {name[3:]: fn for cls in (PlayedAhead, Executor) for name, fn in vars(cls).items() if name.startswith("op_")}
Executor.OPS = OPS  # the played-ahead checks (exec_ahead) ask their operations through it
# What a sequence may not hold: loading stages (one at a time, by design), batches and whole checks.
SEQ_EXCLUDED = frozenset(("seq", "compile", "exec", "class", "instantiate", "admission", "episodes", "solve", "leak", "twice", "fuzz", "truncate", "guess"))


def cmd_x(h, req, hm, ex):
    op = req.get("op")
    if op == "start":
        ex.start(req)
        return {"v": None}
    fn = OPS.get(op)
    if fn is None:
        raise hm.HarnessError("protocol", f"unknown audit operation {op!r}")
    r = _tagged(fn(ex, req), hm)
    # Bytes the game has written to stdout and stderr in this audit so far (each call's output is
    # dropped after it): every answer carries the running total, the judge keeps the largest.
    printed = ex.h.out.written
    if printed:
        r["printed"] = printed
    return r


def install(h, hm):
    """Adds the executor's "x" command to a harness that runs environment code."""
    ex = Executor(h, hm)
    h.register("x", lambda hh, req: cmd_x(hh, req, hm, ex))
    return h
