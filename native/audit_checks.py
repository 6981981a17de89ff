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

import collections
import json
import math
import os
import re
import time

SPADE_CHECKS = ["spade.exec", "spade.class", "spade.instantiate", "spade.methods", "spade.reset", "spade.step", "spade.reset2", "spade.admission"]
PLAY_CHECKS = ["determinism", "seed-ignored", "reset-leak", "crash-on-action", "types", "solution", "too-easy", "max-turns", "hint-leak", "timing"]
TOOL_CHECKS = ["tool.schema", "tool.methods", "tool.params", "tool.reset_gate", "tool.criteria_at_reset", "tool.done_reachable"]
# Over the whole audit, whether or not the game loaded: what it wrote to stdout and stderr.
OUTPUT_CHECKS = ["output-flood"]
ALL_CHECKS = SPADE_CHECKS + PLAY_CHECKS + TOOL_CHECKS + OUTPUT_CHECKS

PROBE_ACTIONS = ["\\boxed{1}", "\\boxed{test}", "\\boxed{42}"]
REWARD_RANGE = (-10.0, 10.0)
# SPADE's own limits apply to its checks: 30 s per env call (ENV_CALL_TIMEOUT_SEC / ENV_STEP_TIMEOUT),
# 60 s for the whole pool admission (VALIDATE_GAME_TIMEOUT). The workbench's checks keep their own.
SPADE_CALL_SEC = 30.0
SPADE_ADMISSION_SEC = 60.0
EV_STR = 400  # evidence strings are cut here: enough to see, small enough for 2,000 environments


class Hang(Exception):
    """A call into environment code ran past the per-call limit."""

    def __init__(self, call, action, seed, limit):
        super().__init__(f"{call} did not return within {limit:g} s")
        self.call, self.action, self.seed, self.limit = call, action, seed, limit


class StepFailed(Exception):
    def __init__(self, call, action, seed, info):
        super().__init__(info.get("message", ""))
        self.call, self.action, self.seed, self.info = call, action, seed, info


def _cut(s, n=EV_STR):
    s = s if isinstance(s, str) else repr(s)
    return s if len(s) <= n else s[:n] + f"\u2026[+{len(s) - n}]"


# ---------------------------------------------------------------- the executor, over a channel


class ExecutorGone(BaseException):
    """The interpreter running the game stopped answering (it exited, crashed or was killed).
    A BaseException: no check may swallow it and go on as if the game had answered."""


class LoadError(Exception):
    """SPADE's factory refused the game at `stage`; str() is SPADE's message, `cause` what was raised."""

    def __init__(self, stage, message, cause=None):
        super().__init__(message)
        self.stage, self.cause = stage, cause


_SUBTYPES = {}


def forget():
    """Drops what an earlier audit's values left here (types named by its game)."""
    _SUBTYPES.clear()


class Opaque:
    """A value of a type the checks cannot rebuild (numpy.int64, a game's class): its type's name,
    repr, str, truth and float as the game's interpreter computed them."""

    __slots__ = ("_r", "_s", "_f", "_t", "_p")

    def __init__(self, d):
        self._r, self._s, self._f, self._t, self._p = d.get("r", ""), d.get("s"), d.get("f"), d.get("t"), d.get("p")

    def __repr__(self):
        return self._r

    def __str__(self):
        return self._s if isinstance(self._s, str) else self._r

    def __float__(self):
        if self._f is None:
            raise TypeError(f"float() argument must be a string or a real number, not '{type(self).__qualname__}'")
        return decode(self._f)

    def __bool__(self):
        return True if self._t is None else self._t

    def __eq__(self, other):
        return type(other) is type(self) and other._r == self._r

    def __hash__(self):
        return hash(self._r)

    def item(self):  # what harness.plain asks numpy scalars for
        return self._p


def _subtype(base, module, qualname):
    key = (base, module, qualname)
    t = _SUBTYPES.get(key)
    if t is None:
        t = _SUBTYPES[key] = type(qualname.rsplit(".", 1)[-1], (base,), {"__module__": module, "__qualname__": qualname, **({} if base is not Opaque else {"__slots__": ()})})
    return t


_BASES = {"int": int, "float": float, "str": str, "tuple": tuple, "list": list, "dict": dict}
_FLOATS = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def decode(x):
    """The value audit_exec.encode described, with the same types (subclasses by name)."""
    if type(x) is not dict:
        return x
    # Items that are not dicts are their own values (as at the top): tested here, not in a call each.
    if "T" in x:
        return tuple([v if type(v) is not dict else decode(v) for v in x["T"]])
    if "L" in x:
        return [v if type(v) is not dict else decode(v) for v in x["L"]]
    if "D" in x:
        return {(k if type(k) is str else _key(decode(k))): (v if type(v) is not dict else decode(v)) for k, v in x["D"]}
    if "F" in x:
        return _FLOATS[x["F"]]
    o = x["O"]
    base = _BASES.get(o.get("b"))
    if base is None:
        return _subtype(Opaque, o.get("m", "builtins"), o.get("q", "object"))(o)
    t = _subtype(base, o.get("m", "builtins"), o.get("q", base.__name__))
    inner = o.get("x")
    if base is dict:
        v = t()
        dict.update(v, {_key(decode(k)): decode(w) for k, w in inner})
        return v
    if base in (tuple, list):
        items = [decode(w) for w in inner]
        return tuple.__new__(t, items) if base is tuple else t(items)
    return t(decode(inner))


def _key(k):
    try:
        hash(k)
        return k
    except TypeError:
        return repr(k)


class Env:
    """An instance living in the executor; `globals` says whether its module's globals count as its state."""

    __slots__ = ("id", "globals")

    def __init__(self, eid, with_globals):
        self.id, self.globals = eid, with_globals


# ---------------------------------------------------------------- the audit context


class Audit:
    def __init__(self, hm, transport, source, options):
        self.hm = hm  # this interpreter's harness: SPADE's return-shape rules, type names, plain()
        self.transport = transport
        self.source = source
        self.opt = options
        mt = options.get("maxTurns")
        self.budget = mt if isinstance(mt, int) and not isinstance(mt, bool) and mt > 0 else hm.DEFAULT_BUDGET
        self.mode = options.get("mode") or "respect"
        self.limit = float(options.get("callTimeoutSec") or 5)
        self.spade_limit = float(options.get("spadeCallTimeoutSec") or SPADE_CALL_SEC)
        self.admission_limit = float(options.get("spadeAdmissionTimeoutSec") or SPADE_ADMISSION_SEC)
        self.call_limit = self.limit
        wanted = options.get("checks")
        self.wanted = set(wanted) if wanted else None
        self.results = {}
        self.lines = {}
        self.class_name = None
        self.tool_use = False
        self.durations = []  # (seconds, call, action, seed), timed here, never by the game's process
        self.type_issues = []
        self.type_steps = 0
        self.hung = None
        self.printed = 0  # bytes the game wrote to stdout and stderr, as the executor last counted them
        self.first_obs = None
        self.current = None
        self.ahead = collections.deque()
        # json's C encoder and scanner without the per-call wrappers (harness_values._fast_codec):
        # an audit's requests and answers come to ~100 KB. This interpreter runs no game code.
        self.dumps = hm._fast_dumps or json.dumps
        self.loads = hm._fast_loads or json.loads

    # -- results
    def want(self, cid):
        if self.wanted is None:
            return True
        return cid in self.wanted or any(w.endswith(".*") and cid.startswith(w[:-1]) for w in self.wanted)

    def phase(self, cid):
        """Tells the host (on stderr) which check runs, so a dead process can be blamed precisely."""
        self.current = cid
        if self.opt.get("phases"):
            try:
                os.write(2, f"\n@audit-phase {cid}\n".encode())
            except Exception:
                pass

    def put(self, cid, status, message, **evidence):
        ev = {k: v for k, v in evidence.items() if v is not None}
        self.results[cid] = {"id": cid, "status": status, "message": message, "evidence": ev}

    # -- the executor
    def x(self, op, **args):
        """One operation in the game's interpreter; its tagged answer ({v} | {raise} | {hang} | {load})."""
        ahead = self.ahead
        if ahead:
            # Answers played ahead (ahead_of): taken only for exactly the request they answer, in
            # order; at the first request they do not answer, the rest are dropped and asked live.
            want, got = ahead[0]
            if want == {"op": op, **args} and isinstance(got, dict):
                ahead.popleft()
                return got
            ahead.clear()
        try:
            reply = self.transport(self.dumps({"cmd": "x", "op": op, **args}))
        except ExecutorGone:
            raise
        except Exception as e:
            raise ExecutorGone(f"the environment's interpreter stopped answering: {type(e).__name__}: {e}")
        if reply is None or reply == "":
            raise ExecutorGone("the environment's interpreter exited")
        msg = self.loads(reply)
        if not msg.get("ok"):
            err = msg.get("error") or {}
            raise RuntimeError(f"{err.get('type')}: {_cut(err.get('message', ''), 300)}")
        result = msg["result"]
        printed = result.pop("printed", None) if type(result) is dict else None
        if type(printed) is int and printed > self.printed:
            self.printed = printed
        return result

    def value(self, op, **args):
        """An operation that runs no environment method: its value, or a RuntimeError."""
        r = self.x(op, **args)
        if "v" not in r:
            raise RuntimeError(f"{op} failed: {r}")
        return decode(r["v"])

    def ahead_of(self, op, **args):
        """Has the executor play a whole check ahead (audit_exec: op_solve), in one crossing: its
        records ([request, answer], in order) answer the check's own requests as they come (x)."""
        got = self.x(op, **args).get("records")
        self.ahead = collections.deque(r for r in got if isinstance(r, list) and len(r) == 2) if isinstance(got, list) else collections.deque()

    def seq(self, items):
        """Operations played in one crossing (audit_exec.Executor.op_seq), in order, up to the first
        that did not return; each answer is then read with value_of()/outcome() exactly as if it
        had been asked alone. None: not played (an earlier one failed, or its `when` was false)."""
        got = self.x("seq", items=items).get("items") or []
        return list(got[: len(items)]) + [None] * (len(items) - len(got))

    def value_of(self, tagged, op, **args):
        """value() of an answer from seq(), or asked now when it was not played."""
        if tagged is None:
            return self.value(op, **args)
        if "v" not in tagged:
            raise RuntimeError(f"{op} failed: {tagged}")
        return decode(tagged["v"])

    def call(self, label, op, action=None, seed=None, **args):
        """An operation that calls environment code: its value, or Hang / StepFailed / LoadError."""
        r = self.x(op, limit=self.call_limit, action=action, seed=seed, **args)
        return self.outcome(label, r, action, seed)

    def outcome(self, label, r, action=None, seed=None):
        """A tagged answer of the executor as the value, or the exception the call amounts to."""
        limit = self.call_limit
        if label in ("step", "reset"):
            self.durations.append((_seconds(r), label, action, seed))
        if "v" in r:
            return decode(r["v"])
        label = r.get("at", label)
        if "hang" in r:
            raise Hang(label, action, seed, limit)
        if "load" in r:
            e = r["load"]
            raise LoadError(e.get("stage"), e.get("message", ""), e.get("cause"))
        raise StepFailed(label, action, seed, r.get("raise") or {})

    def line_of(self, method):
        return self.lines.get(method)

    # -- a fresh instance in a fresh namespace (module-level state included)
    def fresh(self, label="__init__"):
        return Env(self.call(label, "fresh", mode=self.mode, budget=self.budget), True)

    def turns(self, env):
        mt = self.value("attr", env=env.id, name="max_turns")
        return mt if isinstance(mt, int) and not isinstance(mt, bool) and 0 < mt <= 10_000 else self.budget

    def episodes(self, env, items, max_raises=None):
        """Resets and steps played in one crossing (audit_exec.Executor.op_episodes); what comes
        back is then read answer by answer with reset()/step(), exactly as if asked one by one."""
        extra = {"maxRaises": max_raises} if max_raises else {}
        got = self.x("episodes", env=env.id, limit=self.call_limit, items=items, **extra)
        return got["raw"] + [{} for _ in range(len(items) - len(got["raw"]))]

    def reset(self, env, seed, preseed=False, tagged=None):
        if tagged is not None:
            ret = self.outcome("reset", tagged, None, seed)
        else:
            ret = self.call("reset", "reset", seed=seed, env=env.id, preseed=preseed)
        obs = ret[0] if isinstance(ret, tuple) and len(ret) == 2 else ret
        info = ret[1] if isinstance(ret, tuple) and len(ret) == 2 else {}
        if not isinstance(obs, str):
            self.type_issue("reset returned a non-str observation", seed, [], {"observed": self.hm.type_name(obs)})
        elif not isinstance(info, dict):
            self.type_issue("reset returned a non-dict info", seed, [], {"observed": self.hm.type_name(info)})
        return obs, info

    def type_issue(self, what, seed, actions, extra):
        self.type_issues.append({"what": what, "seed": seed, "actions": [_cut(a, 200) for a in actions], **extra})

    def step(self, env, action, seed, history, tagged=None):
        """One step with every type rule applied; returns (obs, reward, terminated, truncated).
        `tagged`: the executor's answer from a batch; without it the step is asked for now."""
        if tagged is not None:
            ret = self.outcome("step", tagged, action, seed)
        else:
            ret = self.call("step", "step", action=action, seed=seed, env=env.id)
        self.type_steps += 1
        acts = history + [action]
        hm = self.hm
        if not (isinstance(ret, tuple) and len(ret) == 5):
            self.type_issue("step did not return a 5-tuple", seed, acts, {"observed": hm.type_name(ret)})
            return None, 0.0, True, False
        obs, reward, term, trunc, info = ret
        tn = hm.type_name
        if not isinstance(obs, str):
            self.type_issue("observation is not a str", seed, acts, {"observed": tn(obs)})
        if not isinstance(reward, (int, float)) or type(reward).__module__ != "builtins":
            self.type_issue("reward is not a builtin int or float", seed, acts, {"expected": "int | float", "observed": tn(reward)})
        try:
            r = float(reward)
        except Exception:
            r = 0.0
        if not math.isfinite(r):
            self.type_issue("reward is NaN or infinite", seed, acts, {"observed": hm.plain(r)})
            r = 0.0
        elif not (REWARD_RANGE[0] <= r <= REWARD_RANGE[1]):
            self.type_issue("reward outside SPADE's [-10, 10]", seed, acts, {"observed": r})
        for flag, v in (("terminated", term), ("truncated", trunc)):
            if not isinstance(v, bool):
                self.type_issue(f"{flag} is not a bool", seed, acts, {"expected": "bool", "observed": tn(v)})
        if term is True and trunc is True:
            self.type_issue("terminated and truncated are both true", seed, acts, {"level": "warn"})
        if not isinstance(info, dict):
            self.type_issue("info is not a dict", seed, acts, {"observed": tn(info)})
        return obs, r, bool(term), bool(trunc)

    def play(self, env, seed, actions, preseed=False, stop=True):
        """reset + a script; the trace is [obs0, (action, obs, reward, term, trunc)...]."""
        got = self.episodes(env, [{"seed": seed, "preseed": preseed, "reset": True, "actions": list(actions), "stop": stop}])[0]
        obs, _ = self.reset(env, seed, preseed, tagged=got.get("reset"))
        trace = [_plainobs(obs)]
        done_by = []
        answers = got.get("steps", [])
        for i, a in enumerate(actions):
            try:
                o, r, te, tr = self.step(env, a, seed, done_by, tagged=answers[i] if i < len(answers) else None)
            except StepFailed as e:
                # A crash is part of the trace: the same crash twice is still deterministic.
                trace.append((a, f"raised {e.info.get('type')}: {e.info.get('message')}", None, True, False))
                break
            done_by.append(a)
            trace.append((a, _plainobs(o), r, te, tr))
            if stop and (te or tr):
                break
        return trace


def _seconds(r):
    """How long the executor's call took (its answer's `ns`), in seconds; 0 if it says nothing usable."""
    ns = r.get("ns")
    return ns / 1e9 if type(ns) is int and ns >= 0 else 0.0


def _plainobs(o):
    return o if isinstance(o, str) else repr(o)[:2000]


def _norm(s):
    return " ".join(re.sub(r"[^0-9a-z\u00c0-\uffff.\-]+", " ", str(s).lower()).split()).strip(" .")


def _won(r, te):
    return te and r > 0


# ---------------------------------------------------------------- SPADE's load checks (section 5)


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
        ev.update(line=cause.get("line"), observed=_cut(f"{cause.get('type')}: {cause.get('message', '')}", 300))
        if "syntax" in cause:
            ev["line"] = cause["syntax"]
        else:
            ev["traceback"] = _cut(cause.get("traceback", ""), 4000)
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
        return fail("spade.reset", f"Game reset() failed: {bad}", seed=42, line=A.line_of("reset"), observed=_cut(hm.plain(ret)))
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
            return fail("spade.step", f"Game step() failed on action {i} '{a}': {bad}", seed=42, actions=done_actions, line=A.line_of("step"), observed=_cut(hm.plain(ret)))
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
    return {"call": e.call, "line": info.get("line"), "traceback": _cut(info.get("traceback", ""), 4000), "observed": f"{info.get('type')}: {_cut(info.get('message', ''), 300)}"}


# ---------------------------------------------------------------- checks SPADE lacks


def script_base(A):
    """SPADE's probes, then plausible guesses (tool use: an answer, no tags, an unknown tool)."""
    if A.tool_use:
        return ["<answer>0</answer>", "no tags", '<tool_call>{"name": "none", "arguments": {}}</tool_call>']
    return PROBE_ACTIONS + ["\\boxed{7}", "\\boxed{0}", "\\boxed{up}", "\\boxed{A}", "\\boxed{13}", "\\boxed{yes}", "\\boxed{2 3}"]


def script_for(A, env, n):
    """A fixed action script: script_base cycled to n actions."""
    base = script_base(A)
    return [base[i % len(base)] for i in range(n)]


def played_ahead(A, op, fn, *args, **ahead):
    """fn(A, *args) with the executor playing its requests ahead in one crossing (Audit.ahead_of)."""
    A.ahead_of(op, **ahead)
    try:
        return fn(A, *args)
    finally:
        A.ahead.clear()  # what this check did not take is never an answer to another's request


def check_determinism(A):
    played_ahead(A, "twice", _determinism, seed=7, limit=A.call_limit, mode=A.mode, budget=A.budget, script=script_base(A))


def _determinism(A):
    seed = 7
    runs = []
    for _ in range(2):
        env = A.fresh()
        runs.append(A.play(env, seed, script_for(A, env, A.turns(env))))
    a, b = runs
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        if x != y:
            acts = [s[0] for s in a[1:i + 1]]
            what = "the first observation" if i == 0 else f"step {i}"
            return A.put("determinism", "fail", f"Same seed and actions gave different results at {what}", seed=seed, step=i, actions=acts, expected=_cut(_show(x)), observed=_cut(_show(y)), line=A.line_of("reset"))
    A.put("determinism", "pass", f"Two runs with seed {seed} agree over {len(a) - 1} steps", seed=seed)


def _show(x):
    if x is None:
        return "(episode already over)"
    if isinstance(x, str):
        return x
    a, o, r, te, tr = x
    return f"obs={o!r} reward={r} terminated={te} truncated={tr}"


def check_seed_ignored(A, env):
    seeds = [0, 1, 2, 3, 4]
    firsts, states = [], []
    plan = []
    for s in seeds:
        plan += [{"op": "reset", "seed": s, "env": env.id, "limit": A.call_limit}, {"op": "fields", "env": env.id, "globals": env.globals}]
    got = A.seq(plan)
    for i, s in enumerate(seeds):
        obs, _ = A.reset(env, s, tagged=got[2 * i])
        firsts.append(_plainobs(obs))
        states.append(json.dumps(A.value_of(got[2 * i + 1], "fields", env=env.id, globals=env.globals), sort_keys=True))
    if len(set(firsts)) == 1:
        if len(set(states)) > 1:
            # Games with a hidden secret show the same opening text for every seed; the state tells.
            return A.put("seed-ignored", "pass", f"Same first observation for seeds {seeds[0]}-{seeds[-1]}, but the hidden state differs", seed=seeds)
        return A.put("seed-ignored", "warn", f"Seeds {seeds[0]}-{seeds[-1]} all give the same first observation and state", seed=seeds, observed=_cut(firsts[0]), line=A.line_of("reset"))
    A.put("seed-ignored", "pass", f"{len(set(firsts))} distinct first observations over {len(seeds)} seeds", seed=seeds)


def _fields(A, env):
    """The instance's state as the executor read it: attributes, module globals, and the shared
    state the reset-leak check also compares (audit_exec.fields, `shared`)."""
    return A.value("fields", env=env.id, globals=env.globals, shared=True)


MUTATORS = frozenset(("append", "extend", "insert", "add", "update", "setdefault", "pop", "popitem", "remove", "discard", "clear", "appendleft", "extendleft", "sort", "reverse"))
SCOPE_ORDER = {"class": 0, "module": 1, "default": 2, "closure": 3, "instance": 4}
_HIDDEN_KEY = re.compile(r"^(default|closure) (.+)\.([^.\s]+)(?: #\d+)?$")


def leak_scope(key, class_name):
    """Where a compared key lives: (scope, name, owner). Scopes: "instance" (self.x), "module"
    (global x), "class" (C.x; owner the class's qualified name), "default" (default F.p) and
    "closure" (closure F.v), whose owner is the function's qualified name."""
    if key.startswith("self."):
        return "instance", key[5:], class_name
    if key.startswith("global "):
        return "module", key[7:], None
    m = _HIDDEN_KEY.match(key)
    if m:
        return m.group(1), m.group(3), m.group(2)
    owner, _, name = key.rpartition(".")
    return "class", name, owner or class_name


def _subclasses(tree, name):
    """`name` and the classes of the source that derive from it (by the names in their bases)."""
    import ast

    bases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bases[node.name] = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else None for b in node.bases}
    out, grew = {name}, True
    while grew:
        grew = False
        for c, bs in bases.items():
            if c not in out and bs & out:
                out.add(c)
                grew = True
    return out


def growth_sites(tree, lines, scope, name, class_name, owner=None):
    """The lines that change a leaking value in place or rebind it, found in the game's source
    (parsed once, `tree`; `lines` its text) without running it. Each site is {line, method, text}.

    A change is a mutating method call (`x.append(...)`), an augmented assignment (`x += ...`), an
    item or attribute assignment or deletion (`x[k] = v`), on the value or on anything reached from
    it (`x["k"].update(...)`, `x.entries.setdefault(...)`), also through a local alias (`y = x;
    y.add(...)`); rebinding counts where it changes what is kept: `self.x = ...` outside __init__
    (where instance state starts), a global under `global`, a cell under `nonlocal`. Where the
    value is named: a class attribute as self./cls./type(self)./self.__class__. or by its class
    (or a subclass); a module global by name; a default argument by its parameter inside its
    function; a closure cell by its name inside the functions nested in the one that made it."""
    if scope == "class":
        classes = _subclasses(tree, owner.rsplit(".", 1)[-1]) if owner else set()
        return (_sites(tree, lines, scope, name, class_name, classes, None, False)
                # reached some other way (through another object holding the instance, say)
                or _sites(tree, lines, scope, name, class_name, classes, None, True))
    if scope == "closure":
        # The cell belongs to one of the functions enclosing the closure: the nearest first.
        parts = (owner or "").split(".<locals>.")
        for i in range(len(parts) - 1, 0, -1):
            found = _sites(tree, lines, scope, name, class_name, set(), ".<locals>.".join(parts[:i]), False)
            if found:
                return found
        return []
    return _sites(tree, lines, scope, name, class_name, set(), owner if scope == "default" else None, False)


def _sites(tree, lines, scope, name, class_name, classes, region, loose):
    """growth_sites for one reading of the value; `region`: the qualified name of the function
    whose body (default) or nested functions (closure) alone can reach it."""
    import ast

    owners = {"self", "cls"} | ({class_name} if class_name else set()) | classes
    bare = scope in ("module", "default", "closure")  # the value is a plain name there
    scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)

    def owner_expr(node):
        if isinstance(node, ast.Name):
            return node.id in owners
        if isinstance(node, ast.Attribute) and node.attr == "__class__":
            return isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type" and len(node.args) == 1:
            return isinstance(node.args[0], ast.Name) and node.args[0].id in ("self", "cls")
        return False

    def names_it(node, ctx):
        if isinstance(node, ast.Name):
            return (bare and node.id == name) or node.id in ctx["aliases"]
        return not bare and isinstance(node, ast.Attribute) and node.attr == name and (loose or owner_expr(node.value))

    def reaches(node, ctx):
        """The value itself, or something reached from it: its items, attributes, what its own
        methods return (`x.setdefault(k, [])`)."""
        while True:
            if names_it(node, ctx):
                return True
            if isinstance(node, (ast.Subscript, ast.Attribute)):
                node = node.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                node = node.func.value
            else:
                return False

    def target_hits(t, ctx, rebind):
        if isinstance(t, (ast.Tuple, ast.List)):
            return any(target_hits(x, ctx, rebind) for x in t.elts)
        if isinstance(t, ast.Starred):
            return target_hits(t.value, ctx, rebind)
        if isinstance(t, ast.Name):
            # A bare name is a local unless declared global/nonlocal; a parameter rebound leaves
            # its default as it was.
            return scope in ("module", "closure") and t.id == name and t.id in ctx["declared"]
        if isinstance(t, ast.Attribute) and names_it(t, ctx):
            return rebind
        return isinstance(t, (ast.Subscript, ast.Attribute)) and reaches(t.value, ctx)

    def own(fn):
        """The nodes of a function's own body, not those of the functions and classes inside it."""
        todo = list(ast.iter_child_nodes(fn))
        while todo:
            node = todo.pop()
            yield node
            if not isinstance(node, scopes + (ast.ClassDef,)):
                todo.extend(ast.iter_child_nodes(node))

    def context(fn):
        """A function's aliases of the value (`seen = self.seen_items`) and declared names."""
        ctx = {"aliases": set(), "declared": set()}
        kind = ast.Global if scope == "module" else ast.Nonlocal if scope == "closure" else None
        for node in own(fn):
            if kind is not None and isinstance(node, kind):
                ctx["declared"].update(node.names)
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and not (bare and node.targets[0].id == name):
                v = node.value
                while isinstance(v, ast.Subscript):
                    v = v.value
                if names_it(v, ctx):
                    ctx["aliases"].add(node.targets[0].id)
        return ctx

    sites = []
    # where: 0 outside the region, 1 in the region function's own body, 2 nested inside it
    inside = 2 if region is None else 0
    counts = 1 if scope == "default" else 2

    def visit(node, method, qual, ctx, where):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, scopes):
                fname = "<lambda>" if isinstance(child, ast.Lambda) else child.name
                q = f"{qual}.{fname}" if qual else fname
                w = 2 if where else (1 if q == region else 0)
                visit(child, method if isinstance(child, ast.Lambda) else child.name, q + ".<locals>", context(child), w)
                continue
            if isinstance(child, ast.ClassDef):
                visit(child, method, f"{qual}.{child.name}" if qual else child.name, ctx, where)
                continue
            hit = False
            if where >= counts and method is not None:
                if isinstance(child, ast.AugAssign):
                    hit = target_hits(child.target, ctx, True) or (scope == "default" and isinstance(child.target, ast.Name) and child.target.id == name)
                elif not (scope == "instance" and method == "__init__") and isinstance(child, (ast.Assign, ast.AnnAssign, ast.Delete)):
                    targets = child.targets if isinstance(child, (ast.Assign, ast.Delete)) else [child.target]
                    hit = any(target_hits(t, ctx, not bare) for t in targets)
                elif isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) and child.func.attr in MUTATORS:
                    hit = reaches(child.func.value, ctx)
            if hit:
                ln = child.lineno
                sites.append({"line": ln, "method": method, "text": _cut(lines[ln - 1].strip(), 160) if 0 < ln <= len(lines) else ""})
            visit(child, method, qual, ctx, where)

    visit(tree, None, "", {"aliases": set(), "declared": set()}, inside)
    seen, out = set(), []
    for site in sorted(sites, key=lambda x: x["line"]):
        if site["line"] not in seen:
            seen.add(site["line"])
            out.append(site)
    return out


def name_leak(A, differing):
    """The leaking state to name (shared state first: it is what every instance inherits) and
    the lines that change it."""
    import ast

    try:
        tree = ast.parse(A.source)
    except SyntaxError:
        tree = None
    lines = A.source.split("\n")
    best = None
    for key in differing:
        scope, name, owner = leak_scope(key, A.class_name)
        sites = growth_sites(tree, lines, scope, name, A.class_name, owner) if tree is not None else []
        rank = (0 if sites else 1, SCOPE_ORDER[scope])
        if best is None or rank < best[0]:
            best = (rank, key, scope, sites)
    if best is None:
        return {}
    _rank, key, scope, sites = best
    return {"attribute": key, "scope": scope, "sites": sites[:5]}


def _shape(text):
    """What of a compared value does not depend on which items a fresh instance drew: its
    containers' sizes and its scalars' types (the executor's JSON text, read back)."""
    try:
        v = json.loads(text)
    except Exception:
        return "text"

    def sh(x):
        if isinstance(x, list):
            return "[" + ",".join(sh(y) for y in x) + "]"
        if isinstance(x, dict):
            return "{" + ",".join(sorted(sh(y) for y in x.values())) + "}"
        return type(x).__name__

    return sh(v)


def check_reset_leak(A, solution_actions):
    played_ahead(A, "leak", _reset_leak, solution_actions, seed=5, firstSeed=3, limit=A.call_limit, mode=A.mode, budget=A.budget, toolUse=A.tool_use, script=script_base(A))


def _reset_leak(A, solution_actions):
    first_seed, seed = 3, 5

    def snapshot_fresh():
        env = A.fresh()
        obs, _ = A.reset(env, seed, preseed=True)
        return _plainobs(obs), _fields(A, env)

    ref_obs, ref = snapshot_fresh()
    ref2_obs, ref2 = snapshot_fresh()
    stable = {k for k in ref if ref2.get(k) == ref[k]}

    env = A.fresh()
    A.reset(env, first_seed, preseed=True)
    acts = solution_actions(env) or script_for(A, env, A.turns(env))
    acts = acts[: A.turns(env) + 2]
    answers = A.episodes(env, [{"actions": acts, "stop": True}])[0].get("steps", [])
    played = []
    for i, a in enumerate(acts):
        try:
            _o, _r, te, tr = A.step(env, a, first_seed, played, tagged=answers[i] if i < len(answers) else None)
        except StepFailed:
            break  # crash-on-action reports crashes; here only the state left behind matters
        played.append(a)
        if te or tr:
            break
    obs, _ = A.reset(env, seed, preseed=True)
    after = _fields(A, env)
    differing = sorted(k for k in stable if after.get(k) != ref[k])
    differing += sorted(k for k in after if k not in ref and k.startswith("self."))
    if A.tool_use and "_call_history" not in A.source:
        # SPADE's base class appends every tool call to _call_history and never clears it; a game
        # that never reads it behaves the same, so that is not this game's leak.
        differing = [k for k in differing if k != "self._call_history"]
    obs_differs = ref_obs == ref2_obs and _plainobs(obs) != ref_obs
    if differing or obs_differs:
        # State two fresh instances already disagree on (drawn unseeded in __init__, say) cannot
        # be compared by value; where it agrees in size and the episode changed its size, it is
        # named too. It only names a leak the comparisons above found, never makes one.
        unstable = sorted(k for k in ref if k not in stable and k in ref2 and k in after and k not in differing)
        differing += [k for k in unstable if _shape(ref[k]) == _shape(ref2[k]) != _shape(after[k])]
        names = ", ".join(differing) if differing else "(no attribute; the observation differs)"
        named = name_leak(A, differing)
        sites = named.get("sites") or []
        where = f"; {sites[0]['text']} (line {sites[0]['line']}, in {sites[0]['method']}) grows it" if sites else ""
        return A.put(
            "reset-leak", "fail", f"State leaks across reset: {names}{where}", seed=first_seed, actions=played, resetSeed=seed,
            attributes=differing, expected={k: _cut(ref.get(k, "(absent)"), 200) for k in differing[:10]} if differing else _cut(ref_obs),
            observed={k: _cut(after.get(k, "(absent)"), 200) for k in differing[:10]} if differing else _cut(_plainobs(obs)),
            line=sites[0]["line"] if sites else A.line_of("reset"), **{k: v for k, v in named.items() if k != "sites"}, **({"growth": sites} if sites else {}))
    A.put("reset-leak", "pass", f"After an episode, reset(seed={seed}) matches a fresh instance ({len(stable)} attributes compared)", seed=seed)


def fuzz_actions(A, first_obs):
    acts = ["", " ", "   \n\t ", "no box here", "\\boxed{}", "\\boxed{ }", "\\boxed{{1}}", "\\boxed{1", "\\boxed{1}}", "}{", "\\boxed{\\boxed{1}}",
            "\\boxed{{{}", "\\boxed{é漢字🙂\u202e}", "\\boxed{" + "9" * 9992 + "}", "\\boxed{-1}", "\\boxed{-99999}", "\\boxed{99999999999999999999999999}",
            "\\boxed{1e308}", "\\boxed{2.5}", "\\boxed{-0.0}", "\\boxed{nan}", "\\boxed{1/0}", "\\boxed{1 2 3 4 5 6 7 8 9}", "\\boxed{a,b}"]
    words = []
    for w in re.findall(r"[A-Za-z]{3,}", first_obs or ""):
        if w.lower() not in words:
            words.append(w.lower())
    acts += [f"\\boxed{{{w}}}" for w in words[:4]]
    if A.tool_use:
        acts += ["<answer></answer>", "<tool_call>{not json</tool_call>", '<tool_call>{"name": "nope", "arguments": {}}</tool_call>',
                 '<tool_call>{"name": 5, "arguments": []}</tool_call>', "<function=x><parameter=y>z</parameter></function>"]
    return acts


def fuzz_items(fuzz):
    """Each fuzz action on its own episode, from reset(seed k % 3); up to five may raise."""
    return [{"seed": k % 3, "reset": True, "actions": [a], "tolerate": True} for k, a in enumerate(fuzz)]


def check_crash(A, first_obs):
    items = fuzz_items(fuzz_actions(A, first_obs))
    played_ahead(A, "fuzz", _crash, first_obs, limit=A.call_limit, mode=A.mode, budget=A.budget, items=items, maxRaises=5)


def _crash(A, first_obs):
    crashes = []
    tried = 0
    env = A.fresh()
    fuzz = fuzz_actions(A, first_obs)
    answers = A.episodes(env, fuzz_items(fuzz), max_raises=5)
    for k, a in enumerate(fuzz):
        env_seed = k % 3
        got = answers[k]
        A.reset(env, env_seed, tagged=got.get("reset"))
        tried += 1
        steps = got.get("steps", [])
        try:
            A.step(env, a, env_seed, [], tagged=steps[0] if steps else None)
        except StepFailed as e:
            crashes.append({"action": _cut(a, 200), "seed": env_seed, "type": e.info.get("type"), "message": _cut(e.info.get("message", ""), 300), "line": e.info.get("line"), "traceback": _cut(e.info.get("traceback", ""), 3000)})
            if len(crashes) >= 5:
                break
    if crashes:
        c = crashes[0]
        return A.put("crash-on-action", "fail", f"step raises {c['type']} on {len(crashes)} fuzz action(s), e.g. {_cut(repr(c['action']), 80)} (SPADE turns this into a silent -1)",
                     seed=c["seed"], actions=[c["action"]], line=c["line"], traceback=c["traceback"], observed=f"{c['type']}: {c['message']}", crashes=crashes)
    A.put("crash-on-action", "pass", f"No exception on {tried} fuzz actions")


def solution_fn(A, env):
    """The game's own solution(), or None (SPADE's tool-use base class only has one that raises)."""
    return True if A.value("has_solution", env=env.id) else None


def get_solution(A, env, seed):
    fn = solution_fn(A, env)
    if fn is None:
        return None
    return A.hm.solution_actions(A.call("solution", "solution", seed=seed, env=env.id), A.tool_use)


def check_solution(A, env):
    played_ahead(A, "solve", _solution, env, env=env.id, seeds=[0, 1, 2], limit=A.call_limit, budget=A.budget, toolUse=A.tool_use)


def _solution(A, env):
    if solution_fn(A, env) is None:
        if A.tool_use:
            return A.put("solution", "skip", "No solution(); tool-use environments are checked by tool.done_reachable")
        return A.put("solution", "warn", "The game defines no solution(): winnability cannot be checked")
    for seed in (0, 1, 2):
        A.reset(env, seed)
        played, last = [], None
        limit = A.turns(env)
        won = False
        while len(played) < limit + 1:
            acts = get_solution(A, env, seed)
            if not acts:
                break
            for a in acts:
                o, r, te, tr = A.step(env, a, seed, played)
                played.append(a)
                last = (o, r, te, tr)
                if te or tr or len(played) > limit:
                    break
            if last and (last[2] or last[3]):
                won = _won(last[1], last[2])
                break
        if not won:
            obs = "no steps" if last is None else f"obs={_cut(_plainobs(last[0]), 300)!r} reward={last[1]} terminated={last[2]} truncated={last[3]}"
            return A.put("solution", "fail", f"Playing solution() does not win within {limit} turns (seed {seed}): unsolvable or a state error",
                         seed=seed, actions=[_cut(a, 200) for a in played], expected="terminated with reward > 0", observed=obs, line=A.line_of("solution"))
    A.put("solution", "pass", "solution() wins on seeds 0, 1, 2", seed=[0, 1, 2])


def check_too_easy(A):
    """SPADE's offline too-easy test, as SPADE runs it (audit_exec.Executor.op_guess plays it):
    a fresh load, 20 runs of up to 5 guesses drawn from the game's process-global random, a run
    won at the first reward above 0; the game fails above a 15% win rate."""
    if A.tool_use:
        return A.put("too-easy", "skip", "SPADE's random-guess test applies to games")
    runs, tries = A.hm.GUESS_RUNS, A.hm.GUESS_TRIES
    r = A.x("guess", runs=runs, tries=tries, budget=A.budget, limit=A.call_limit, loadLimit=A.spade_limit)
    if "runs" not in r:
        try:
            A.outcome("load", r)
        except LoadError as e:
            return A.put("too-easy", "fail", f"SPADE's test loads the game again, and that load failed: {_cut(e.message, 300)}", stage=e.stage)
        raise RuntimeError("the executor gave no runs")
    got = r["runs"]
    if not isinstance(got, list) or not got or len(got) > runs:
        raise RuntimeError("the executor's runs do not follow the test")
    wins, first = 0, None
    for seed, run in enumerate(got):
        A.outcome("reset", run["reset"], None, seed)  # timed; raises at a hang (or an exit) in the wrapper's reset
        played, end = [], None
        for s in run["steps"]:
            a = s.get("a")
            if end is not None or len(played) >= tries or not (isinstance(a, str) or (a is None and "v" not in s)):
                raise RuntimeError("the executor's runs do not follow the test")
            if "v" not in s:
                # a hang, or an exception the wrapper does not catch, in the step or in drawing the guess
                A.outcome("step" if a is not None else "random.randint", s, a, seed)
            A.durations.append((_seconds(s), "step", a, seed))
            played.append(a)
            end = A.hm.spade_guess_end(s["v"])
        if end is None and len(played) < tries:
            raise RuntimeError("the executor's runs do not follow the test")
        if end == "won":
            wins += 1
            first = first or {"seed": seed, "actions": played}
    if len(got) < runs:
        raise RuntimeError("the executor's runs do not follow the test")
    rate = wins / runs
    if rate > 0.15:
        return A.put("too-easy", "fail", f"Random guesses win {wins}/{runs} episodes ({rate:.0%} > 15%)", expected="<= 0.15", observed=rate, **(first or {}))
    A.put("too-easy", "pass", f"Random guesses win {wins}/{runs} episodes ({rate:.0%})", observed=rate)


def check_max_turns(A, env, answers):
    ans = {_norm(x) for x in answers}
    wrong = next(c for c in ("0", "-7", "zz", "31415") if _norm(c) not in ans)
    a = f"<answer>{wrong}</answer>" if A.tool_use else f"\\boxed{{{wrong}}}"
    played_ahead(A, "truncate", _max_turns, env, a, env=env.id, limit=A.call_limit, seed=11, budget=A.budget, action=a)


def _max_turns(A, env, a):
    seed = 11
    A.reset(env, seed)
    limit = A.turns(env)
    played = []
    answers = A.episodes(env, [{"actions": [a] * (limit + 5), "stop": True}])[0].get("steps", [])
    for i in range(limit + 5):
        o, r, te, tr = A.step(env, a, seed, played, tagged=answers[i] if i < len(answers) else None)
        played.append(a)
        if tr or te:
            if te and r > 0:
                return A.put("max-turns", "skip", f"The never-winning policy {a} won; cannot test truncation", seed=seed, actions=[a])
            n = len(played)
            if n > limit:
                return A.put("max-turns", "fail", f"Episode ended after {n} turns, past max_turns={limit}", seed=seed, actions=played, expected=f"<= {limit}", observed=n, line=A.line_of("step"))
            how = "truncated" if tr else "terminated (loss)"
            return A.put("max-turns", "pass", f"A never-winning policy ends ({how}) after {n} of {limit} turns", seed=seed, observed=n)
    A.put("max-turns", "fail", f"A never-winning policy ({a}) never reaches truncation: {len(played)} turns with max_turns={limit}", seed=seed, actions=played, expected=f"truncated within {limit}", observed=f"still running after {len(played)}", line=A.line_of("step"))


def check_hint_leak(A, answers_by_seed):
    hint = A.opt.get("hint")
    if not isinstance(hint, str) or not hint.strip():
        return A.put("hint-leak", "skip", "No hint for this environment")
    if not answers_by_seed:
        return A.put("hint-leak", "skip", "No answer to compare: no solution() (games) or expected answer (tool use)")
    h = f" {_norm(hint)} "
    full, partial = [], []
    for seed, ans in answers_by_seed:
        n = _norm(ans)
        if not n:
            continue
        if f" {n} " in h:
            full.append((seed, ans))
            continue
        toks = n.split()
        if len(toks) >= 2:
            found = sum(1 for t in toks if f" {t} " in h)
            if found / len(toks) >= 0.6:
                partial.append((seed, ans, f"{found}/{len(toks)} tokens"))
        elif len(n) >= 5:
            k = max(4, int(len(n) * 0.7))
            if any(n[i:i + k] in h for i in range(0, len(n) - k + 1)):
                partial.append((seed, ans, f"a {k}-character part"))
    varies = len({_norm(a) for _, a in answers_by_seed}) > 1
    if full and (not varies or len(full) == len(answers_by_seed) or len(_norm(full[0][1])) >= 3):
        s, a = full[0]
        return A.put("hint-leak", "fail", f"The hint contains the answer {_cut(str(a), 80)!r} (seed {s})", seed=s, expected="hint without the answer", observed=_cut(hint), answer=_cut(str(a), 200))
    if partial:
        s, a = partial[0][:2]
        why = f"most of the answer ({partial[0][2]})"
        return A.put("hint-leak", "warn", f"The hint contains {why}: {_cut(str(a), 80)!r} (seed {s})", seed=s, observed=_cut(hint), answer=_cut(str(a), 200))
    if full:
        # A one- or two-character answer that varies by seed and shows up for some seeds only is a coincidence ("modulo 4").
        return A.put("hint-leak", "pass", f"The hint does not state the answer (short answer {_cut(str(full[0][1]), 20)!r} appears by coincidence for {len(full)} of {len(answers_by_seed)} seeds)")
    A.put("hint-leak", "pass", f"The hint does not contain the answer for {len(answers_by_seed)} seeds")


def check_types(A):
    if not A.type_issues:
        return A.put("types", "pass", f"{A.type_steps} steps checked: builtin types, rewards in [-10, 10], dict info")
    fails = [t for t in A.type_issues if t.get("level") != "warn"]
    first = (fails or A.type_issues)[0]
    kinds = sorted({t["what"] for t in A.type_issues})
    ev = {k: v for k, v in first.items() if k not in ("what", "level")}
    A.put("types", "fail" if fails else "warn", f"{first['what']} ({len(A.type_issues)} of {A.type_steps} steps; {'; '.join(kinds)})", line=A.line_of("step"), issues=kinds, **ev)


def check_timing(A):
    if A.hung is not None:
        h = A.hung
        return A.put("timing", "fail", f"{h.call} hung (no return within {h.limit:g} s)" + (f" on action {_cut(repr(h.action), 80)}" if h.action is not None else ""),
                     call=h.call, seed=h.seed, actions=[_cut(h.action, 200)] if h.action is not None else None, observed=f"> {h.limit:g} s", line=A.line_of("step" if h.call == "step" else "reset"))
    d = sorted(x[0] for x in A.durations)
    if not d:
        return A.put("timing", "skip", "No calls were timed")
    med = d[len(d) // 2]
    slow = max(A.durations, key=lambda x: x[0])
    ev = {"medianMs": round(med * 1000, 3), "maxMs": round(slow[0] * 1000, 3), "calls": len(d), "call": slow[1], "seed": slow[3]}
    if slow[2] is not None:
        ev["actions"] = [_cut(slow[2], 200)]
    status = "warn" if slow[0] > 1.0 else "pass"
    A.put("timing", status, f"median {ev['medianMs']:.3f} ms, max {ev['maxMs']:.3f} ms ({slow[1]})", **ev)


# Past this many bytes written to stdout and stderr in one audit, printing is a finding. A game that
# prints a line a step stays far below it (an audit makes a few hundred calls); what passes it would
# fill a SPADE run's log, where a game's prints land (SPADE neither captures nor bounds them).
OUTPUT_FLOOD_BYTES = 1 << 20


def check_output_flood(A):
    """`output-flood`: a warning, not a failure: SPADE plays such a game as it plays any other (what
    is printed reaches neither the agent nor a return), but every episode pays for the writing and
    the training log fills with it. The harness keeps 64 KiB a call and drops the rest, so the
    count is the executor's, of every byte written."""
    n = A.printed
    ev = {"bytes": n, "bound": OUTPUT_FLOOD_BYTES}
    if n > OUTPUT_FLOOD_BYTES:
        A.put("output-flood", "warn", f"The game wrote {n} bytes ({n / (1 << 20):.1f} MiB) to stdout and stderr during the audit, past the bound of {OUTPUT_FLOOD_BYTES} bytes", **ev)
    else:
        A.put("output-flood", "pass", f"The game wrote {n} bytes to stdout and stderr during the audit", **ev)


# ---------------------------------------------------------------- tool-use checks (section 4)

JSON_TYPES = {"string", "number", "integer", "boolean", "array", "object", "null"}


def _schema_problem(schema, path="parameters"):
    if not isinstance(schema, dict):
        return f"{path} is not an object"
    t = schema.get("type")
    ts = t if isinstance(t, list) else [t] if t is not None else []
    if t is not None and (not ts or any(x not in JSON_TYPES for x in ts)):
        return f"{path}.type {t!r} is not a JSON Schema type"
    props = schema.get("properties")
    if props is not None:
        if not isinstance(props, dict):
            return f"{path}.properties is not an object"
        for k, v in props.items():
            p = _schema_problem(v, f"{path}.properties.{k}")
            if p:
                return p
    req = schema.get("required")
    if req is not None:
        if not isinstance(req, list) or not all(isinstance(r, str) for r in req):
            return f"{path}.required is not a list of names"
        missing = [r for r in req if not isinstance(props, dict) or r not in props]
        if missing:
            return f"{path}.required names {missing} that are not in properties"
    if "items" in schema:
        return _schema_problem(schema["items"], f"{path}.items")
    if "enum" in schema and not isinstance(schema["enum"], list):
        return f"{path}.enum is not a list"
    return None


_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.S)
_JSON_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)


def rollout_turn(A, env, action, seed, history):
    """One agent turn of a tool-use game as SPADE's rollout plays it: an <answer> goes to step(),
    JSON <tool_call>s go to execute_tool() (never to step), anything else to step()."""
    if _ANSWER_TAG.search(action) is None:
        calls = []
        for body in _JSON_CALL.findall(action):
            try:
                obj = json.loads(body)
            except ValueError:
                continue
            if isinstance(obj, dict) and isinstance(obj.get("name"), str):
                args = obj.get("arguments", {})
                calls.append((obj["name"], args if isinstance(args, dict) else {}))
        if calls:
            out = []
            for name, args in calls:
                ret = A.call("execute_tool", "execute_tool", action=action, seed=seed, env=env.id, name=name, args=args)
                out.append(str(ret.get("output", "")) if isinstance(ret, dict) else repr(ret))
            return "\n".join(out), 0.0, False, False
    return A.step(env, action, seed, history)


def tool_checks(A, env):
    A.reset(env, 0)
    tools = A.value("attr", env=env.id, name="_tools")
    if not isinstance(tools, dict) or not tools:
        A.put("tool.schema", "fail", "reset() leaves self._tools empty or not a dict", seed=0, observed=A.hm.type_name(tools), line=A.line_of("reset"))
        for c in ("tool.methods", "tool.params"):
            A.put(c, "skip", "No tools to check")
    else:
        bad = []
        for name, spec in tools.items():
            if not isinstance(spec, dict) or not isinstance(spec.get("description", ""), str):
                bad.append((name, "entry must be {description: str, parameters: schema}"))
                continue
            params = spec.get("parameters", {"type": "object", "properties": {}})
            p = _schema_problem(params)
            if p is None and params.get("type") not in (None, "object"):
                p = "parameters.type must be 'object'"
            if p:
                bad.append((name, p))
        if bad:
            A.put("tool.schema", "fail", f"Invalid tool schema for {bad[0][0]}: {bad[0][1]}", seed=0, observed=[f"{n}: {p}" for n, p in bad[:10]], line=A.line_of("reset"))
        else:
            A.put("tool.schema", "pass", f"{len(tools)} tool schemas are valid", seed=0)
        methods = A.value("tool_methods", env=env.id, names=[str(n) for n in tools])
        missing = [n for n in tools if not methods[str(n)]["callable"]]
        if missing:
            A.put("tool.methods", "fail", f"No method for tool(s): {', '.join('tool_' + n for n in missing)}", observed=missing, line=A.line_of("reset"))
        else:
            A.put("tool.methods", "pass", "Every tool has its tool_<name> method")
        mism = []
        for n, spec in tools.items():
            m = methods[str(n)]
            if not m["callable"] or not isinstance(spec, dict) or m.get("params") is None:
                continue
            ps = m["params"]  # [name, kind, required]
            if any(kind == "VAR_KEYWORD" for _, kind, _ in ps):
                continue
            named = ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY")
            accepted = {p for p, kind, _ in ps if kind in named}
            needed = {p for p, kind, req in ps if kind in named and req}
            props = set(((spec.get("parameters") or {}).get("properties") or {}).keys()) if isinstance(spec.get("parameters"), dict) else set()
            extra, lacking = sorted(props - accepted), sorted(needed - props)
            if extra or lacking:
                mism.append({"tool": n, "schemaOnly": extra, "methodOnly": lacking, "line": m.get("line")})
        if mism:
            m = mism[0]
            A.put("tool.params", "fail", f"tool_{m['tool']}: schema parameters {m['schemaOnly']} vs method keywords {m['methodOnly']} do not match (every call fails)",
                  expected=m["methodOnly"], observed=m["schemaOnly"], line=m["line"], mismatches=mism)
        else:
            A.put("tool.params", "pass", "Schema parameter names match the methods' keywords")

    crit_errors, true_at_reset, have_criteria = {}, {}, False
    for seed in (0, 1, 2):
        A.reset(env, seed)
        results = A.value("criteria", env=env.id, limit=A.call_limit)
        if not results:
            continue
        have_criteria = True
        for i, r in enumerate(results):
            if "hang" in r:
                raise Hang("criterion", None, seed, A.call_limit)
            if "raise" in r:
                crit_errors.setdefault(i, []).append((seed, r["raise"]))
                continue
            if "load" in r:
                raise LoadError(r["load"].get("stage"), r["load"].get("message", ""))
            if r.get("v"):
                true_at_reset.setdefault(i, []).append(seed)
    if not have_criteria:
        A.put("tool.reset_gate", "skip", "No _message_criteria (single-answer tool use)")
        A.put("tool.criteria_at_reset", "skip", "No _message_criteria")
    else:
        always = [i for i, errs in crit_errors.items() if len(errs) == 3]
        if always:
            i = always[0]
            info = crit_errors[i][0][1]
            A.put("tool.reset_gate", "fail", f"Criterion {i} raises at reset for seeds 0, 1, 2 (SPADE's reset gate rejects)", seed=[0, 1, 2], observed=f"{info.get('type')}: {_cut(info.get('message', ''), 200)}", line=info.get("line"), traceback=_cut(info.get("traceback", ""), 3000))
        elif crit_errors:
            i = next(iter(crit_errors))
            A.put("tool.reset_gate", "warn", f"Criterion {i} raises at reset for some seeds", seed=[s for s, _ in crit_errors[i]])
        else:
            A.put("tool.reset_gate", "pass", "No criterion raises at reset (seeds 0, 1, 2)")
        if true_at_reset:
            i = next(iter(true_at_reset))
            A.put("tool.criteria_at_reset", "fail" if i == 0 else "warn", f"Criterion {i} is already satisfied at reset", seed=true_at_reset[i], observed=sorted(true_at_reset))
        else:
            A.put("tool.criteria_at_reset", "pass", "No criterion is satisfied at reset")

    seed = 0
    A.reset(env, seed)
    acts = get_solution(A, env, seed) if solution_fn(A, env) is not None else None
    how = "solution()"
    if not acts:
        how = "the expected answer"
        acts = [f"<answer>{A.value('attr', env=env.id, name='_expected_answer')}</answer>"]
    played, last = [], None
    for a in acts[: 200]:
        last = rollout_turn(A, env, a, seed, played)
        played.append(a)
        if last[2] or last[3]:
            break
    if last and _won(last[1], last[2]):
        A.put("tool.done_reachable", "pass", f"Playing {how} finishes the task", seed=seed)
    else:
        A.put("tool.done_reachable", "fail", f"Playing {how} does not finish the task", seed=seed, actions=[_cut(a, 200) for a in played],
              expected="terminated with reward > 0", observed=None if last is None else f"obs={_cut(_plainobs(last[0]), 300)!r} reward={last[1]}")


# ---------------------------------------------------------------- the command


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
            A.put(cid, "fail", f"{e.call} hung (no return within {e.limit:g} s)" + (f" on action {_cut(repr(e.action), 80)}" if e.action is not None else ""), call=e.call, seed=e.seed, actions=[_cut(e.action, 200)] if e.action is not None else None, hang=True)
        except StepFailed as e:
            A.put(cid, "fail", f"{e.call} raised {e.info.get('type')}: {_cut(e.info.get('message', ''), 200)}", call=e.call, seed=e.seed,
                  actions=[_cut(e.action, 200)] if e.action is not None else None, line=e.info.get("line"), traceback=_cut(e.info.get("traceback", ""), 3000))
        except Exception as e:  # a bug of ours must not lose the other checks
            A.put(cid, "skip", f"Audit error in this check: {type(e).__name__}: {_cut(str(e), 200)}")

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
