"""The audit context: one audit's options, limits, results, and every call to the executor."""

from __future__ import annotations

import collections
import json
import math
import os
import re

import spade_rules
from judge_channel import Env, ExecutorGone, Hang, LoadError, StepFailed, Uncarried, clip, decode
from typing import Any, Callable
from types import ModuleType

# The rules live once in core/api/spadeRules.ts (generated into spade_rules); lists here, as the
# judge joins and extends them.
SPADE_CHECKS = list(spade_rules.SPADE_CHECKS)
PLAY_CHECKS = list(spade_rules.PLAY_CHECKS)
TOOL_CHECKS = list(spade_rules.TOOL_CHECKS)
# Over the whole audit, whether or not the game loaded: what it wrote to stdout and stderr.
OUTPUT_CHECKS = list(spade_rules.OUTPUT_CHECKS)
ALL_CHECKS = SPADE_CHECKS + PLAY_CHECKS + TOOL_CHECKS + OUTPUT_CHECKS

PROBE_ACTIONS = list(spade_rules.PROBE_ACTIONS)
REWARD_RANGE = spade_rules.REWARD_RANGE
# SPADE's own limits apply to its checks: 30 s per env call (ENV_CALL_TIMEOUT_SEC / ENV_STEP_TIMEOUT),
# 60 s for the whole pool admission (VALIDATE_GAME_TIMEOUT). The workbench's checks keep their own.
SPADE_CALL_SEC = spade_rules.SPADE_CALL_SEC
SPADE_ADMISSION_SEC = spade_rules.SPADE_ADMISSION_SEC


# The checks the executor may play ahead (exec_ahead), by name: the judge's own functions, which
# the executor runs too, so that each check is written once.
AHEAD_CHECKS: dict[str, Callable[..., Any]] = {}


def plays_ahead(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Marks fn(audit, *args) as a check the executor may play ahead; its arguments are instances
    (Env) and JSON values."""
    AHEAD_CHECKS[fn.__name__] = fn
    return fn


def to_wire(arg: Any) -> Any:
    """A played-ahead check's argument as it crosses to the executor: an instance by its id."""
    return {"Env": [arg.id, arg.globals]} if isinstance(arg, Env) else arg


def from_wire(arg: Any) -> Any:
    if isinstance(arg, dict) and isinstance(arg.get("Env"), list) and len(arg["Env"]) == 2:
        return Env(arg["Env"][0], bool(arg["Env"][1]))
    return arg


class Audit:
    def __init__(self, harness: ModuleType, transport: Callable[[str], str], source: str, options: dict[str, Any]) -> None:
        self.harness = harness  # this interpreter's harness: SPADE's return-shape rules, type names, plain()
        self.transport = transport
        self.source = source
        self.opt = options
        mt = options.get("maxTurns")
        self.budget = mt if isinstance(mt, int) and not isinstance(mt, bool) and mt > 0 else harness.DEFAULT_BUDGET
        self.mode = options.get("mode") or "respect"
        self.limit = float(options.get("callTimeoutSec") or spade_rules.WORKBENCH_CALL_SEC)
        self.spade_limit = float(options.get("spadeCallTimeoutSec") or SPADE_CALL_SEC)
        self.admission_limit = float(options.get("spadeAdmissionTimeoutSec") or SPADE_ADMISSION_SEC)
        self.call_limit = self.limit
        wanted = options.get("checks")
        self.wanted = set(wanted) if wanted else None
        self.results: dict[Any, Any] = {}
        self.lines: dict[Any, Any] = {}
        self.class_name: Any = None
        self.tool_use = False
        self.durations: list[Any] = []  # (seconds, call, action, seed), timed here, never by the game's process
        self.type_issues: list[Any] = []
        self.type_steps = 0
        self.hung: Any = None
        self.printed = 0  # bytes the game wrote to stdout and stderr, as the executor last counted them
        self.first_obs: Any = None
        self.current: Any = None
        self.ahead: collections.deque[list[Any]] = collections.deque()
        # json's C encoder and scanner without the per-call wrappers (harness_values._fast_codec):
        # an audit's requests and answers come to ~100 KB. This interpreter runs no game code.
        self.dumps = harness._fast_dumps or json.dumps
        self.loads = harness._fast_loads or json.loads

    # -- results
    def want(self, cid: str) -> Any:
        if self.wanted is None:
            return True
        return cid in self.wanted or any(w.endswith(".*") and cid.startswith(w[:-1]) for w in self.wanted)

    def phase(self, cid: str) -> None:
        """Tells the host (on stderr) which check runs, so a dead process can be blamed precisely.
        With `phases: "lasting"` (a pool's audits, which no one watches check by check) a transport
        that waits for the game in another process may hold the line back until one of the check's
        crossings has waited a moment (`transport.note_phase`, the native judge): an audit's ~20
        lines, each relayed through the fork server to the host, were a tenth of its CPU, while
        only a check that lasts is ever blamed for a kill."""
        self.current = cid
        phases = self.opt.get("phases")
        if phases:
            line = f"\n@audit-phase {cid}\n".encode()
            if phases == "lasting":
                note = getattr(self.transport, "note_phase", None)
                if note is not None:
                    note(line)
                    return
            try:
                os.write(2, line)
            except Exception:
                pass

    def put(self, cid: str, status: str, message: str, **evidence: Any) -> None:
        ev = {k: v for k, v in evidence.items() if v is not None}
        r = self.results[cid] = {"id": cid, "status": status, "message": message, "evidence": ev}
        if self.opt.get("streamResults"):
            # Pyodide: the judge dies with the game's interpreter (one worker), so each result goes
            # to the host as it is decided, and a check that passed before a restart keeps it.
            try:
                os.write(2, ("\n@audit-result " + json.dumps(r, default=str) + "\n").encode())
            except Exception:
                pass

    # -- the executor
    def gone(self, why: str) -> ExecutorGone:
        """The executor's end, naming the check it came in: the host may not have heard of that
        check yet (a pool's audits announce only checks that last, see phase)."""
        e = ExecutorGone(why)
        e.phase = self.current  # type: ignore[attr-defined]
        return e

    def x(self, op: str, **args: Any) -> Any:
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
        request = {"cmd": "x", "op": op, **args}
        try:
            line = self.dumps(request)
        except ValueError:
            # NaN or Infinity in a request (a tool call named NaN in a game's solution: SPADE passes
            # nan to execute_tool): the fast encoder refuses them, json.dumps writes them and the
            # executor's json reads them back.
            line = json.dumps(request)
        try:
            reply = self.transport(line)
        except ExecutorGone:
            raise
        except Exception as e:
            raise self.gone(f"the environment's interpreter stopped answering: {type(e).__name__}: {e}")
        if reply is None or reply == "":
            raise self.gone("the environment's interpreter exited")
        msg = self.loads(reply)
        if not msg.get("ok"):
            err = msg.get("error") or {}
            if err.get("type") == "Unencodable":
                raise Uncarried(op, clip(err.get("message", ""), 300))
            raise RuntimeError(f"{err.get('type')}: {clip(err.get('message', ''), 300)}")
        result = msg["result"]
        printed = result.pop("printed", None) if type(result) is dict else None
        if type(printed) is int and printed > self.printed:
            self.printed = printed
        return result

    def value(self, op: str, **args: Any) -> Any:
        """An operation that runs no environment method: its value, or a RuntimeError."""
        r = self.x(op, **args)
        if "v" not in r:
            raise RuntimeError(f"{op} failed: {r}")
        return decode(r["v"])

    def ahead_of(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        """Has the executor run the check fn(audit, *args) in one crossing (exec_ahead.op_ahead: the
        same function against an audit that asks the executor directly): its records ([request,
        answer], in order) answer this run's own requests as they come (x)."""
        try:
            got = self.x("ahead", check=fn.__name__, args=[to_wire(a) for a in args], budget=self.budget, mode=self.mode, limit=self.call_limit, toolUse=self.tool_use).get("records")
        except Uncarried:
            got = None  # the records as a whole could not be carried: the check asks live, one by one
        self.ahead = collections.deque(r for r in got if isinstance(r, list) and len(r) == 2) if isinstance(got, list) else collections.deque()

    def played_ahead(self, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(self, *args) with the executor playing its requests ahead in one crossing (ahead_of);
        fn is one of AHEAD_CHECKS."""
        self.ahead_of(fn, args)
        try:
            return fn(self, *args)
        finally:
            self.ahead.clear()  # what this check did not take is never an answer to another's request

    def seq(self, items: list[Any]) -> Any:
        """Operations played in one crossing (audit_exec.Executor.op_seq), in order, up to the first
        that did not return; each answer is then read with value_of()/outcome() exactly as if it
        had been asked alone. None: not played (an earlier one failed, or its `when` was false)."""
        got = self.x("seq", items=items).get("items") or []
        return list(got[: len(items)]) + [None] * (len(items) - len(got))

    def value_of(self, tagged: Any, op: str, **args: Any) -> Any:
        """value() of an answer from seq(), or asked now when it was not played."""
        if tagged is None:
            return self.value(op, **args)
        if "v" not in tagged:
            raise RuntimeError(f"{op} failed: {tagged}")
        return decode(tagged["v"])

    def call_of(self, tagged: Any, label: str, op: str, action: str | None=None, seed: int | None=None, **args: Any) -> Any:
        """call() of an answer from seq(), or asked now when it was not played."""
        if tagged is None:
            return self.call(label, op, action, seed, **args)
        return self.outcome(label, tagged, action, seed)

    def call(self, label: str, op: str, action: str | None=None, seed: int | None=None, **args: Any) -> Any:
        """An operation that calls environment code: its value, or Hang / StepFailed / LoadError."""
        r = self.x(op, limit=self.call_limit, action=action, seed=seed, **args)
        return self.outcome(label, r, action, seed)

    def outcome(self, label: str, r: Any, action: str | None=None, seed: int | None=None) -> Any:
        """A tagged answer of the executor as the value, or the exception the call amounts to."""
        limit = self.call_limit
        if label in ("step", "reset"):
            self.durations.append((call_seconds(r), label, action, seed))
        if "v" in r:
            return decode(r["v"])
        label = r.get("at", label)
        if "hang" in r:
            raise Hang(label, action, seed, limit)
        if "load" in r:
            e = r["load"]
            raise LoadError(e.get("stage"), e.get("message", ""), e.get("cause"))
        raise StepFailed(label, action, seed, r.get("raise") or {})

    def line_of(self, method: Any) -> Any:
        return self.lines.get(method)

    # -- a fresh instance in a fresh namespace (module-level state included)
    def fresh(self, label: str="__init__") -> Any:
        return Env(self.call(label, "fresh", mode=self.mode, budget=self.budget), True)

    def turns(self, env: Env) -> Any:
        mt = self.value("attr", env=env.id, name="max_turns")
        return mt if isinstance(mt, int) and not isinstance(mt, bool) and 0 < mt <= 10_000 else self.budget

    def episodes(self, env: Env, items: list[Any], max_raises: int | None=None) -> Any:
        """Resets and steps played in one crossing (audit_exec.Executor.op_episodes); what comes
        back is then read answer by answer with reset()/step(), exactly as if asked one by one."""
        extra = {"maxRaises": max_raises} if max_raises else {}
        got = self.x("episodes", env=env.id, limit=self.call_limit, items=items, **extra)
        return got["raw"] + [{} for _ in range(len(items) - len(got["raw"]))]

    def reset(self, env: Env, seed: int | None, preseed: bool=False, tagged: Any=None) -> Any:
        if tagged is not None:
            ret = self.outcome("reset", tagged, None, seed)
        else:
            ret = self.call("reset", "reset", seed=seed, env=env.id, preseed=preseed)
        obs = ret[0] if isinstance(ret, tuple) and len(ret) == 2 else ret
        info = ret[1] if isinstance(ret, tuple) and len(ret) == 2 else {}
        if not isinstance(obs, str):
            self.type_issue("reset returned a non-str observation", seed, [], {"observed": self.harness.type_name(obs)})
        elif not isinstance(info, dict):
            self.type_issue("reset returned a non-dict info", seed, [], {"observed": self.harness.type_name(info)})
        return obs, info

    def type_issue(self, what: str, seed: int | None, actions: list[str], extra: dict[str, Any]) -> None:
        self.type_issues.append({"what": what, "seed": seed, "actions": [clip(a, 200) for a in actions], **extra})

    def step(self, env: Env, action: str, seed: int | None, history: list[str], tagged: Any=None) -> Any:
        """One step with every type rule applied; returns (obs, reward, terminated, truncated).
        `tagged`: the executor's answer from a batch; without it the step is asked for now."""
        if tagged is not None:
            ret = self.outcome("step", tagged, action, seed)
        else:
            ret = self.call("step", "step", action=action, seed=seed, env=env.id)
        self.type_steps += 1
        acts = history + [action]
        harness = self.harness
        if not (isinstance(ret, tuple) and len(ret) == 5):
            self.type_issue("step did not return a 5-tuple", seed, acts, {"observed": harness.type_name(ret)})
            return None, 0.0, True, False
        obs, reward, term, trunc, info = ret
        tn = harness.type_name
        if not isinstance(obs, str):
            self.type_issue("observation is not a str", seed, acts, {"observed": tn(obs)})
        if not isinstance(reward, (int, float)) or type(reward).__module__ != "builtins":
            self.type_issue("reward is not a builtin int or float", seed, acts, {"expected": "int | float", "observed": tn(reward)})
        try:
            r = float(reward)
        except Exception as e:
            r = 0.0
            if isinstance(reward, (int, float)):  # an int past float's range: SPADE's float(reward) raises
                self.type_issue("reward cannot be converted with float()", seed, acts, {"observed": clip(f"{type(e).__name__}: {e}", 200)})
        if not math.isfinite(r):
            self.type_issue("reward is NaN or infinite", seed, acts, {"observed": harness.plain(r)})
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

    def play(self, env: Env, seed: int | None, actions: list[str], preseed: bool=False, stop: bool=True) -> Any:
        """reset + a script; the trace is [obs0, (action, obs, reward, term, trunc)...]."""
        got = self.episodes(env, [{"seed": seed, "preseed": preseed, "reset": True, "actions": list(actions), "stop": stop}])[0]
        obs, _ = self.reset(env, seed, preseed, tagged=got.get("reset"))
        trace = [plain_obs(obs)]
        done_by: list[Any] = []
        answers = got.get("steps", [])
        for i, a in enumerate(actions):
            try:
                o, r, te, tr = self.step(env, a, seed, done_by, tagged=answers[i] if i < len(answers) else None)
            except StepFailed as e:
                # A crash is part of the trace: the same crash twice is still deterministic.
                trace.append((a, f"raised {e.info.get('type')}: {e.info.get('message')}", None, True, False))
                break
            done_by.append(a)
            trace.append((a, plain_obs(o), r, te, tr))
            if stop and (te or tr):
                break
        return trace


def call_seconds(r: Any) -> Any:
    """How long the executor's call took (its answer's `ns`), in seconds; 0 if it says nothing usable."""
    ns = r.get("ns")
    return ns / 1e9 if type(ns) is int and ns >= 0 else 0.0


def plain_obs(o: Any) -> Any:
    return o if isinstance(o, str) else repr(o)[:2000]


def normalized(s: Any) -> Any:
    return " ".join(re.sub(r"[^0-9a-z\u00c0-\uffff.\-]+", " ", str(s).lower()).split()).strip(" .")


def is_win(r: Any, te: Any) -> Any:
    return te and r > 0
