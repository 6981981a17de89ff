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

import json
import math
import os
import signal
import sys
import threading
import time

# Containers deeper or longer than this arrive cut: enough for every check's comparisons (which
# read observations, rewards and flags) and for evidence, bounded against hostile values.
MAX_DEPTH = 12
MAX_ITEMS = 5000

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


# ---------------------------------------------------------------- values with their types


def _safe(fn, v, default=None):
    try:
        return fn(v)
    except BaseException:
        return default


# Values that are their own encoding. Containers test their items against it before recursing:
# a step's answer is mostly these, and a call per item was most of encoding one.
_PLAIN = frozenset((str, bool, int, type(None)))


def encode(v, hm, depth=0):
    """A JSON tree that the checks turn back into a value of the same types (see audit_checks.decode)."""
    t = type(v)
    if t in _PLAIN:
        return v
    if t is float:
        if math.isfinite(v):
            return v
        return {"F": "nan" if v != v else ("inf" if v > 0 else "-inf")}
    if depth >= MAX_DEPTH:
        return _opaque(v, hm, None, None)
    d = depth + 1
    if t is tuple:
        return {"T": [x if type(x) in _PLAIN else encode(x, hm, d) for x in v[:MAX_ITEMS]]}
    if t is list:
        return {"L": [x if type(x) in _PLAIN else encode(x, hm, d) for x in list(v)[:MAX_ITEMS]]}
    if t is dict:
        return {"D": [[k if type(k) in _PLAIN else encode(k, hm, d), x if type(x) in _PLAIN else encode(x, hm, d)] for k, x in list(v.items())[:MAX_ITEMS]]}
    base, inner = None, None
    for b in (int, float, str, tuple, list, dict):
        if isinstance(v, b):
            base = b.__name__
            try:
                if b is int:
                    inner = int.__int__(v)
                elif b is float:
                    inner = encode(float.__float__(v), hm)
                elif b is str:
                    inner = str.__str__(v)
                elif b is dict:
                    inner = [[encode(k, hm, depth + 1), encode(x, hm, depth + 1)] for k, x in list(dict.items(v))[:MAX_ITEMS]]
                else:
                    inner = [encode(x, hm, depth + 1) for x in list(b.__iter__(v))[:MAX_ITEMS]]
            except BaseException:
                base, inner = None, None
            break
    return _opaque(v, hm, base, inner)


def _opaque(v, hm, base, inner):
    t = type(v)
    out = {"m": _safe(lambda x: str(type(x).__module__), v, "builtins"), "q": _safe(lambda x: str(getattr(type(x), "__qualname__", type(x).__name__)), v, "object")}
    if base is not None:
        out["b"], out["x"] = base, inner
    r = _safe(repr, v)
    out["r"] = r if isinstance(r, str) else f"<unrepresentable {hm.type_name(v)}>"
    if base is None:
        s = _safe(str, v)
        if isinstance(s, str) and s != out["r"]:
            out["s"] = s
        f = _safe(float, v)
        if isinstance(f, float):
            out["f"] = encode(f, hm)
        b = _safe(bool, v)
        if isinstance(b, bool):
            out["t"] = b
        if getattr(t, "__module__", "") == "numpy":
            p = _safe(hm.plain, v)
            if p is not None:
                out["p"] = p
    return {"O": out}


# ---------------------------------------------------------------- the one audited environment


class Executor:
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

    # -- whole checks played ahead: each answers with the operations that check asks, in its order,
    # as [the request the checks send, its tagged answer], for the checks to take in turn (Audit.x).
    # Every choice (a turn limit, actions from solution()'s value, the end and win of an episode)
    # is made on the encoded answers exactly as the checks make it on decoded ones; where that is
    # not certain (a value of an unusual type) the play stops and the checks ask the rest
    # themselves. None of them plays an operation the checks would not ask next.

    def op_solve(self, req):
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
            played, last, won = 0, None, False
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

    def op_leak(self, req):
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

    def op_twice(self, req):
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

    def op_fuzz(self, req):
        """check_crash: a fresh instance, then its fuzz episodes (given: they follow from nothing it answers)."""
        rec = _Recorder(self)
        eid = rec.fresh(req)
        if eid is not None:
            rec.ask(op="episodes", env=eid, limit=req["limit"], items=req["items"], maxRaises=req["maxRaises"])
        return rec.done()

    def op_truncate(self, req):
        """check_max_turns: reset, max_turns, then the never-winning action played max_turns + 5 times."""
        eid, limit, rec = req["env"], req["limit"], _Recorder(self)
        if rec.reset(eid, req["seed"], limit):
            turns = rec.turns(eid, req["budget"])
            if turns is not None:
                rec.episode(eid, limit, {"actions": [req["action"]] * (turns + 5), "stop": True})
        return rec.done()

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


def _tagged(r, hm):
    """The answer with its value encoded, in place: every answer is a dict made for this one reply."""
    if "v" in r:
        r["v"] = encode(r["v"], hm)
    return r


def _truthy(x):
    """bool() of the value an encoding describes, as the checks will see it after decoding."""
    if not isinstance(x, dict):
        return bool(x)
    if "F" in x:
        return True
    for k in ("T", "L", "D"):
        if k in x:
            return len(x[k]) > 0
    o = x["O"]
    if "b" in o:
        inner = o.get("x")
        return len(inner) > 0 if isinstance(inner, list) else _truthy(inner)
    t = o.get("t")
    return True if t is None else t


def _ended(enc):
    """Whether the checks end an episode on this step's encoded return (see audit_checks.Audit.step)."""
    items = None
    if isinstance(enc, dict):
        if "T" in enc:
            items = enc["T"]
        elif "O" in enc and enc["O"].get("b") == "tuple":
            items = enc["O"].get("x")
    if not isinstance(items, list) or len(items) != 5:
        return True
    return _truthy(items[2]) or _truthy(items[3])


class _Recorder:
    """The operations a check played ahead asks, each kept with its tagged answer."""

    def __init__(self, ex):
        self.ex, self.out = ex, []

    def ask(self, **r):
        got = _tagged(OPS[r["op"]](self.ex, r), self.ex.hm)
        self.out.append([r, got])
        return got

    def done(self):
        return {"v": None, "records": self.out}

    # The requests below are built exactly as audit_checks.Audit builds them (x compares them whole).
    def fresh(self, req):
        """Audit.fresh(): the new instance's id, or None where the checks stop."""
        got = self.ask(op="fresh", limit=req["limit"], action=None, seed=None, mode=req["mode"], budget=req["budget"])
        return got["v"] if "v" in got and type(got["v"]) is int else None

    def reset(self, eid, seed, limit, preseed=False):
        """Audit.reset(): whether it returned (the checks stop where it did not)."""
        return "v" in self.ask(op="reset", limit=limit, action=None, seed=seed, env=eid, preseed=preseed)

    def fields(self, eid):
        return "v" in self.ask(op="fields", env=eid, globals=True, shared=True)

    def episode(self, eid, limit, item):
        """Audit.episodes() of one item: whether the checks go on after it (no failed reset, no hang
        or refusal; a step that raised ends the episode, not the check)."""
        got = (self.ask(op="episodes", env=eid, limit=limit, items=[item]).get("raw") or [{}])[0]
        if item.get("reset") and "v" not in (got.get("reset") or {}):
            return False
        return not any("hang" in t or "load" in t for t in got.get("steps", []))

    def turns(self, eid, budget):
        """Audit.turns(): max_turns read and judged, or None where the checks stop or it is uncertain."""
        got = self.ask(op="attr", env=eid, name="max_turns")
        return _turns_of(got["v"], budget) if "v" in got else None

    def solution(self, eid, limit, seed, tool_use):
        """get_solution(): its actions ([] where solution_fn says none), or None where the checks stop."""
        has = self.ask(op="has_solution", env=eid)
        if "v" not in has:
            return None
        if has["v"] is not True:
            return []
        got = self.ask(op="solution", limit=limit, action=None, seed=seed, env=eid)
        return _actions_of(got["v"], tool_use, self.ex.hm) if "v" in got else None


def _cycled(base, n):
    return [base[i % len(base)] for i in range(n)] if base else []


def _turns_of(enc, budget):
    """Audit.turns() of an encoded max_turns, or None where the encoding leaves it uncertain."""
    if isinstance(enc, dict):
        return None if "O" in enc and enc["O"].get("b") == "int" else budget
    return enc if type(enc) is int and 0 < enc <= 10_000 else budget


def _actions_of(enc, tool_use, hm):
    """get_solution()'s actions for an encoded solution() value, or None where uncertain: plain
    values (and lists or tuples of them) decode to themselves, so the checks' rule applies as is."""
    plain = lambda x: x is None or type(x) in (str, int, float, bool)
    if isinstance(enc, dict):
        enc = enc.get("T", enc.get("L"))
        if not isinstance(enc, list) or not all(map(plain, enc)):
            return None
    elif not plain(enc):
        return None
    return hm.solution_actions(enc, tool_use)


def _won_of(enc):
    """audit_checks._won of an ended step's encoded return: True, False, or None where uncertain."""
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


def load_error(hm, e):
    out = {"stage": e.stage, "message": str(e)}
    cause = e.cause
    if cause is not None:
        info = hm.error_info(cause)
        out["cause"] = {"type": info.get("type"), "message": info.get("message", ""), "line": info.get("line"), "traceback": info.get("traceback", "")}
        if isinstance(cause, SyntaxError):
            out["cause"]["syntax"] = cause.lineno
    return out


# json.dumps(v, sort_keys=True, default=str) makes an encoder a call; fields() made ~70 an audit.
_FIELD_JSON = json.JSONEncoder(sort_keys=True, default=str).encode


def fields(hm, env, ns, shared=False):
    """Every attribute, module global and class attribute, as JSON text: the state to compare.

    `shared` (the reset-leak check) adds the other places state outlives an instance, where
    `self.x` and `global x` do not show it: attributes of the game's other classes (a base
    class's list is every subclass's), mutable default arguments and closure cells of the game's
    functions, and the attributes of the game's own objects held anywhere in that state (a
    module-level helper whose dict grows is shown by its contents, not a repr)."""
    import types as _t

    dumps = _FIELD_JSON
    out = {}
    cls = type(env)
    ours = _game_classes(hm, cls, ns) if shared else ()
    ids = frozenset(map(id, ours))  # by identity: a metaclass's __eq__ is game code
    plain = (lambda v: _plain_ours(hm, v, ids, 0)) if shared else hm.plain
    for k, v in list(getattr(env, "__dict__", {}).items()):
        try:
            out[f"self.{k}"] = dumps(plain(v))
        except Exception:
            out[f"self.{k}"] = hm.repr_safe(v)[:2000]
    for k, v in list(ns.items()):
        try:  # isinstance() may read a hostile __class__: that value is left out, not the check
            if k.startswith("__") or isinstance(v, (_t.ModuleType, _t.FunctionType, type)) or callable(v):
                continue
            out[f"global {k}"] = dumps(plain(v))
        except Exception:
            pass
    for c in (cls, *[c for c in ours if c is not cls]):
        # The game's class keeps its plain name (what SPADE picked); others their qualified one.
        name = cls.__name__ if c is cls else _qualname(c)
        for k, v in list(vars(c).items()):
            try:
                if k.startswith("__") or callable(v) or isinstance(v, (staticmethod, classmethod, property)):
                    continue
                out.setdefault(f"{name}.{k}", dumps(plain(v)))
            except Exception:
                pass
    if shared:
        _hidden_fields(hm, env, ns, ours, plain, out)
    return out


_IMMUTABLE = (type(None), bool, int, float, complex, str, bytes, tuple, frozenset, range)
MAX_FUNCTIONS = 500  # functions looked into for defaults and cells: bounded against hostile code


def _qualname(c):
    try:
        q = type.__dict__["__qualname__"].__get__(c, type)  # past any metaclass of the game's
    except Exception:
        q = None
    return q if isinstance(q, str) else "?"


def _game_classes(hm, cls, ns):
    """The classes the game's code defined (by module name): the game class's bases first, then
    the namespace's classes and the classes nested in them, each once, in a fixed order."""
    mod = ns.get("__name__")
    out, seen = [], set()

    def add(c):
        if id(c) not in seen and vars(c).get("__module__") == mod:
            seen.add(id(c))
            out.append(c)
            for v in list(vars(c).values()):
                if issubclass(type(v), type):
                    add(v)

    try:
        for c in cls.__mro__:
            add(c)
        for v in list(ns.values()):
            if issubclass(type(v), type):
                add(v)
    except Exception:
        pass
    return tuple(out)


def _plain_ours(hm, v, ours, depth):
    """hm.plain, except that an instance of one of the game's classes (`ours`: their ids) is
    described by its attributes ({"<Class>": {...}}) instead of a repr that never changes."""
    t = type(v)
    if t in (str, int, float, bool) or v is None or depth > 8:
        return hm.plain(v, depth)
    if id(t) in ours:
        try:
            d = object.__getattribute__(v, "__dict__")
        except Exception:
            d = None
        if isinstance(d, dict):
            return {f"<{_qualname(t)}>": {str(k): _plain_ours(hm, x, ours, depth + 1) for k, x in list(d.items())[:1000]}}
        return hm.plain(v, depth)
    if t is dict:
        return {(k if type(k) is str else str(k)): _plain_ours(hm, x, ours, depth + 1) for k, x in list(v.items())[:1000]}
    if t in (list, tuple, set, frozenset):
        return [_plain_ours(hm, x, ours, depth + 1) for x in list(v)[:1000]]
    return hm.plain(v, depth)


def _hidden_fields(hm, env, ns, ours, plain, out):
    """Mutable default arguments ("default F.p") and closure cells ("closure F.v") of the game's
    functions: module functions, methods, functions kept on the instance, and the functions those
    cells hold in turn (decorators, factories)."""
    import types as _t

    fn_type = _t.FunctionType
    fns = [v for v in list(ns.values()) if type(v) is fn_type]
    for c in ours:
        for v in list(vars(c).values()):
            # By exact type throughout: isinstance() may read a hostile __class__ (game code).
            if type(v) in (staticmethod, classmethod):
                v = v.__func__
            if type(v) is property:
                fns += [v.fget, v.fset, v.fdel]
            else:
                fns.append(v)
    for v in list(getattr(env, "__dict__", {}).values()):
        fns.append(v.__func__ if type(v) is _t.MethodType else v)
    seen_fn, seen_cell, i = set(), set(), 0
    while i < len(fns) and len(seen_fn) < MAX_FUNCTIONS:
        f = fns[i]
        i += 1
        if type(f) is not fn_type or id(f) in seen_fn or f.__code__.co_filename != hm.ENV_FILENAME:
            continue
        seen_fn.add(id(f))
        code, qual = f.__code__, f.__qualname__
        defaults = f.__defaults__ or ()
        pos = code.co_varnames[: code.co_argcount]
        pairs = list(zip(pos[len(pos) - len(defaults):], defaults)) + list((f.__kwdefaults__ or {}).items())
        for p, d in pairs:
            if type(d) not in _IMMUTABLE:
                _put(out, f"default {qual}.{p}", d, plain, hm)
        for n, cell in zip(code.co_freevars, f.__closure__ or ()):
            if n == "__class__" or id(cell) in seen_cell:
                continue
            seen_cell.add(id(cell))
            try:
                c = cell.cell_contents
            except ValueError:
                continue  # not bound yet
            if type(c) is fn_type:
                fns.append(c)
            elif type(c) is not _t.ModuleType and not callable(c):  # classes are callable
                _put(out, f"closure {qual}.{n}", c, plain, hm)


def _put(out, key, v, plain, hm):
    """out[key] = v as JSON text; a second value under the same name (two closures from one
    factory) gets " #2", and so on, in the order they were found."""
    k, n = key, 1
    while k in out:
        n += 1
        k = f"{key} #{n}"
    try:
        out[k] = _FIELD_JSON(plain(v))
    except Exception:
        out[k] = hm.repr_safe(v)[:2000]


OPS = {name[3:]: fn for name, fn in vars(Executor).items() if name.startswith("op_")}
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
