"""SPADE Workbench environment harness.

Runs inside an interpreter (Pyodide or native CPython) and answers a small JSON protocol:
load, reset, step, play, state, snapshot, restore, close, check_syntax, ping. Environment
programs are loaded the way SPADE's loader does it (see docs/spade-formats.md sections 2, 4, 5),
written here from that description. Environment code is hostile: everything it returns is
described, never trusted, and every failure comes back as data with a traceback into "<env>".

Extend with `register(name)`; a command is `fn(harness, request_dict) -> JSON-safe value`.

The pieces it is built from, each a module: harness_values (describing values and errors: the
codec), harness_loader (SPADE's loader and its return-shape rules), harness_episode (reset and step:
their returns described, and SPADE's wrapper conversion), harness_baseline (shared modules put back
between games), harness_tool_base (SPADE's ToolUseBaseEnv), harness_output (captured output). This
module keeps sessions and the commands.
"""

from __future__ import annotations

import ast
import builtins
import copy
import importlib
import importlib.util
import json
import linecache
import sys
import types
from collections.abc import Mapping

from harness_loader import (  # noqa: F401  (re-exported: harness.X is the harness's interface)
    ADMISSION_ACTIONS, ADMISSION_BUDGET, DEFAULT_BUDGET, INJECTED_MODULES, PROBE_ACTIONS, STATEFUL_MODULES, TYPING_NAMES,
    SpadeLoadError, _hash_seed, cmd_check_syntax, _instantiate, _load_error, _may_have_tools, _syntax_extra, find_env_class, fresh_module, injected_names, reset_problem, spade_class, spade_compile,
    solution_actions, spade_exec, spade_instantiate, spade_load, spade_namespace, spade_validate, step_problem, warm,
)
from harness_alarm import call_alarm  # noqa: F401
from harness_baseline import GUARDED_MODULES, SharedBaseline  # noqa: F401
from harness_episode import (  # noqa: F401
    GUESS_RUNS, GUESS_TRIES, RESET_ERROR_OBS, _mark_spade, _reset, _SeedWatch, _step, describe_reset, describe_step, sanitize_info,
    spade_guess_end, spade_reset_view, spade_step_error, spade_step_view,
)
from harness_output import CappedOutput  # noqa: F401
from harness_solution import with_plan
from harness_tool_base import ToolUseBaseEnv, _tool_module  # noqa: F401
from harness_tool_call import read_call
from harness_values import (  # noqa: F401
    ENV_FILENAME, MAX_ACTION_CHARS, OUTPUT_CAP, STATE_MAX_DEPTH, STATE_MAX_ITEMS, STATE_MAX_STR, VALUE_MAX_STR, CallTimeout,
    HarnessError, _SAFE_INT, _fast_dumps, _fast_loads, json_number, cut, describe, describe_fields, env_traceback, error_info, plain, repr_safe,
    shared_state, state_of, str_safe, type_name,
)
from typing import TYPE_CHECKING, Any, Callable, Literal, TypeVar

if TYPE_CHECKING:  # the contract's shapes (generated from core/runtime/harnessMessages.ts), for mypy only
    from harness_messages import CloseRequest, CloseResult, FailedReset, FailedStep, GetToolsRequest, LoadOptions, LoadRequest  # noqa: F401
    from harness_messages import LoadResult, PingRequest, PingResult, PlayRequest, PlayResult, ResetRequest, ResetResult, RestoreRequest, RestoreResult, SnapshotRequest, SnapshotResult  # noqa: F401
    from harness_messages import SolutionRequest, SolutionResult, SpadeValidation, StateRequest, StepRequest, StepResult, ToolRequest, ToolResult  # noqa: F401
T = TypeVar("T")

# Private references: a game may patch builtins or shared modules (undone at the next episode
# boundary, see SharedBaseline); until then the harness must keep answering with the originals.
if not TYPE_CHECKING:  # mypy reads the builtins themselves; at run time these are the originals
    len, isinstance, type, str, repr, int, float, bool = len, isinstance, type, str, repr, int, float, bool  # noqa: A001
    list, dict, tuple, set, frozenset, getattr, callable, id = list, dict, tuple, set, frozenset, getattr, callable, id  # noqa: A001
    sorted, min, max, range, any, all, next, hasattr, print = sorted, min, max, range, any, all, next, hasattr, print  # noqa: A001
_json_dumps, _json_loads = json.dumps, json.loads


class Session:
    def __init__(self, sid: str, source: str, options: LoadOptions) -> None:
        self.sid = sid
        self.source = source
        # Tracebacks read the source through linecache; split once, not at every call.
        self.linecache_entry = (len(source), None, source.splitlines(True), ENV_FILENAME)
        self.options = options
        self.spade = options.get("spadeMode", True) is not False
        self.deterministic = bool(options.get("deterministic", False))
        if self.deterministic:
            # Workbench determinism (an option): a private random per session, seeded at reset.
            self.modules = {name: fresh_module(name) for name in STATEFUL_MODULES}
        else:
            # SPADE: the game's `random` is the process's own, shared with every game that runs here.
            self.modules = {name: importlib.import_module(name) for name in STATEFUL_MODULES}
        self.modules["tool_use_base_env"] = _tool_module()
        self.ns: Any = None
        self.env: Any = None
        self.class_name: Any = None
        self.max_turns: Any = None
        self.snapshots: dict[Any, Any] = {}
        self.snap_counter = 0


class Harness:
    def __init__(self) -> None:
        self.baseline = SharedBaseline()
        self.tampered: list[Any] = []
        self.sessions: dict[Any, Any] = {}
        self.commands: dict[str, Callable[..., Any]] = dict(BUILTIN_COMMANDS)
        self.out = CappedOutput()
        self.runtime: Literal["pyodide", "cpython"] = "pyodide" if sys.platform == "emscripten" else "cpython"
        self.before_call: Any = None  # set by the host: arms a per-call timer (CPython)
        self.after_call: Any = None
        self.call_timeout: Any = None
        self._saved_modules: dict[Any, Any] = {}

    # -- the extension point
    def register(self, name: str, fn: Callable[..., Any]) -> None:
        self.commands[name] = fn

    # -- the wire
    def dispatch(self, line: str) -> Any:
        # Builtins are checked after each call (in encode): game code runs only inside calls.
        try:
            req = _fast_loads(line) if _fast_loads else _json_loads(line)
        except Exception:
            self.guard()  # a game may have broken json's own modules: put them back and retry once
            req = None
        if req is None:
            try:
                req = _json_loads(line)
            except Exception as e:
                return _json_dumps({"id": None, "ok": False, "error": {"kind": "protocol", "type": "BadRequest", "message": f"not JSON: {e}"}})
        rid = req.get("id") if isinstance(req, dict) else None
        return self.encode(rid, self.handle(req))

    def encode(self, rid: Any, outcome: tuple[bool, Any]) -> Any:
        ok, value = outcome
        msg = {"id": rid, "ok": ok, ("result" if ok else "error"): value}
        if self.out.parts or self.out.dropped:
            msg["output"] = self.out.take()
        if not self.baseline.builtins_intact():
            self.guard()  # the call just made patched builtins: encode with the originals
        try:
            if _fast_dumps:
                return _fast_dumps(msg)
            return _json_dumps(msg, allow_nan=False)
        except Exception:
            self.guard()
        try:
            return _json_dumps(msg, allow_nan=False)
        except Exception:
            return _json_dumps({"id": rid, "ok": False, "error": {"kind": "protocol", "type": "Unencodable", "message": "result could not be encoded"}})

    def handle(self, req: dict[str, Any]) -> Any:
        if not isinstance(req, dict) or not isinstance(req.get("cmd"), str):
            return False, {"kind": "protocol", "type": "BadRequest", "message": "request must be an object with a cmd"}
        timeout = req.get("timeoutSec")
        self.call_timeout = timeout if isinstance(timeout, (int, float)) and timeout > 0 else None
        fn = self.commands.get(req["cmd"])
        if fn is None:
            return False, {"kind": "protocol", "type": "UnknownCommand", "message": f"unknown command {req['cmd']!r}"}
        try:
            return True, fn(self, req)
        except HarnessError as e:
            return False, {"kind": e.kind, "type": "HarnessError", "message": str(e), **e.extra}
        except (CallTimeout, KeyboardInterrupt) as e:
            err = error_info(e)
            if self.call_timeout:
                err["limitSec"] = self.call_timeout
            return False, err
        except RecursionError as e:
            return False, error_info(e)
        except BaseException as e:  # SystemExit included: sys.exit in a game must not end the harness
            return False, error_info(e)

    # -- running environment code
    def session(self, req: Mapping[str, object]) -> Session:
        s = self.sessions.get(req.get("session"))
        if s is None:
            raise HarnessError("unknown_session", f"no session {req.get('session')!r}")
        return s

    def enter(self, s: Session) -> None:
        """Route stateful modules and stdout to this session for the duration of one call."""
        for name, mod in s.modules.items():
            self._saved_modules[name] = sys.modules.get(name)
            sys.modules[name] = mod
        linecache.cache[ENV_FILENAME] = s.linecache_entry
        self._stdout, self._stderr = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = self.out
        if self.before_call:
            self.before_call(self.call_timeout or s.options.get("timeoutSec"))

    def leave(self, s: Session) -> None:
        if self.after_call:
            self.after_call()
        sys.stdout, sys.stderr = self._stdout, self._stderr
        for name, mod in self._saved_modules.items():
            if mod is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = mod
        self._saved_modules = {}

    def guard(self) -> Any:
        """Undo changes games made to shared modules; remember what was changed for the reply."""
        fixed = self.baseline.restore()
        if fixed:
            self.tampered = (self.tampered + fixed)[-50:]
        return fixed

    def run(self, s: Session, fn: Callable[..., T], *args: Any) -> T:
        self.enter(s)
        try:
            return fn(*args)
        finally:
            self.leave(s)


# ---------------------------------------------------------------- commands


def cmd_ping(h: Harness, req: PingRequest) -> PingResult:
    return {"runtime": h.runtime, "python": sys.version.split()[0], "numpy": _has_numpy()}


def _has_numpy() -> bool:
    return importlib.util.find_spec("numpy") is not None


def cmd_load(h: Harness, req: LoadRequest) -> LoadResult:
    sid = req.get("session")
    source = req.get("source")
    options: LoadOptions = req.get("options") or {}
    if not isinstance(sid, str) or not isinstance(source, str):
        raise HarnessError("protocol", "load needs a session id and a source string")
    if sid in h.sessions:
        raise HarnessError("protocol", f"session {sid!r} already exists")
    mt = options.get("maxTurns")
    budget = mt if isinstance(mt, int) and not isinstance(mt, bool) and mt > 0 else DEFAULT_BUDGET
    legacy = options.get("mode") == "legacy"
    restored = h.guard()
    s = Session(sid, source, options)
    validation: SpadeValidation | None = None
    h.enter(s)
    try:
        try:
            code = spade_compile(source)
            mod, ns = spade_namespace(s.modules)
            s.modules["dynamic_game"] = mod
            # Registered before exec, as SPADE does (leave() puts back what was there).
            h._saved_modules.setdefault("dynamic_game", sys.modules.get("dynamic_game"))
            sys.modules["dynamic_game"] = mod
            spade_exec(code, ns)
            name, cls = spade_class(ns)
            env = spade_instantiate(cls, budget, legacy)
            s.ns, s.env, s.class_name = ns, env, name
            if s.spade:
                # Validation runs on the very instance that is then played, as SPADE's load does.
                bad = spade_validate(env)
                validation = {"ok": bad is None, "message": None if bad is None else bad[1], "stage": None if bad is None else bad[0]}
        except SpadeLoadError as e:
            raise _load_error(e)
        s.max_turns = getattr(env, "max_turns", None)
    finally:
        h.leave(s)
    h.sessions[sid] = s
    mt = s.max_turns
    out: LoadResult = {
        "className": s.class_name,
        "maxTurns": mt if isinstance(mt, int) and not isinstance(mt, bool) else (int(mt) if isinstance(mt, bool) else None),
        "budget": budget,
        "toolUse": isinstance(s.env, ToolUseBaseEnv),
        "hasSolution": callable(getattr(s.env, "solution", None)),
        "mayHaveTools": _may_have_tools(s.env),
        "runtime": h.runtime,
        "python": sys.version.split()[0],
        "spadeMode": s.spade,
        "deterministic": s.deterministic,
        # A fixed hash seed makes set order repeat between runs; SPADE sets none.
        "hashSeed": _hash_seed(),
    }
    if validation is not None:
        out["validation"] = validation
    if restored:
        out["restoredShared"] = restored[:50]
    return out


def _action(a: object) -> str:
    if not isinstance(a, str):
        raise HarnessError("protocol", "an action must be a string")
    return a[:MAX_ACTION_CHARS]


def cmd_reset(h: Harness, req: ResetRequest) -> ResetResult:
    s = h.session(req)
    seed = req.get("seed")
    if seed is not None and not isinstance(seed, int):
        raise HarnessError("protocol", "seed must be an integer or null")
    if (preseed := req.get("preseed")) is not None and (type(preseed) is not int or seed is not None):
        raise HarnessError("protocol", "preseed must be an integer, and only with seed null")
    h.guard()
    return h.run(s, _reset, s, seed, preseed)


def cmd_step(h: Harness, req: StepRequest) -> StepResult:
    s = h.session(req)
    action = _action(req.get("action"))
    return h.run(s, _step, s, action)


def cmd_play(h: Harness, req: PlayRequest) -> PlayResult:
    """A whole action script in one call: optional reset, then steps until done or the script ends."""
    s = h.session(req)
    actions = req.get("actions")
    if not isinstance(actions, list):
        raise HarnessError("protocol", "actions must be a list of strings")
    actions = [_action(a) for a in actions]
    do_reset = req.get("reset", True)
    seed = req.get("seed")
    stop = req.get("stopWhenDone", True)
    with_state = bool(req.get("state", False))
    if do_reset:
        h.guard()

    def go() -> PlayResult:
        out: PlayResult = {"steps": []}
        if do_reset:
            try:
                out["reset"] = _reset(s, seed)
            except (CallTimeout, KeyboardInterrupt):
                raise
            except BaseException as e:
                err = error_info(e)
                failed_reset: FailedReset = {"error": err}
                if "spade" in err:
                    failed_reset["spade"] = err["spade"]
                out["reset"] = failed_reset
                return out
        steps = out["steps"]
        step = s.env.step
        spade = s.spade
        for a in actions:
            try:
                rec = describe_step(step(a))
            except (CallTimeout, KeyboardInterrupt):
                raise
            except BaseException as e:
                if isinstance(e, Exception):
                    _mark_spade(e, spade_step_error(e))
                err = error_info(e)
                failed: FailedStep = {"action": a, "error": err}
                if "spade" in err:
                    failed["spade"] = err["spade"]
                steps.append(failed)
                break
            # steps[i] answers actions[i]; the action is echoed only where a step failed
            if with_state:
                rec["state"] = state_of(s)
            steps.append(rec)
            if stop:
                if spade:
                    sp = rec["spade"]
                    if sp["terminated"] or sp["truncated"]:
                        break
                elif rec.get("shape") == "tuple5" and (rec["terminated"] is True or rec["truncated"] is True):
                    break
        return out

    return h.run(s, go)


def cmd_state(h: Harness, req: StateRequest) -> Any:  # described fields (harness_values.state_of): any JSON
    s = h.session(req)
    return h.run(s, state_of, s)


def cmd_solution(h: Harness, req: SolutionRequest) -> SolutionResult:
    s = h.session(req)
    fn = getattr(s.env, "solution", None)
    if not callable(fn):
        raise HarnessError("env_error", "the game defines no solution()")
    # with_plan: a tool-use game's described solution() as the actions it stands for (`plan`).
    return h.run(s, lambda: with_plan(s.env, {"value": plain(fn()), "type": type_name(fn())}))


def cmd_snapshot(h: Harness, req: SnapshotRequest) -> SnapshotResult:
    """Deep copies of the instance and the session's random state, kept in the interpreter.

    Limits: objects deepcopy cannot copy (generators, open files, locks, modules held as
    attributes) make the snapshot fail with kind "snapshot_unsupported"; module-level globals of
    the game are not part of it.
    """
    s = h.session(req)

    def take() -> SnapshotResult:
        try:
            env_copy = copy.deepcopy(s.env)
        except (CallTimeout, KeyboardInterrupt):
            raise
        except BaseException as e:
            raise HarnessError("snapshot_unsupported", f"this game's state cannot be copied: {type(e).__name__}: {e}")
        np = s.ns.get("np")
        np_state = np.random.get_state() if np is not None and hasattr(np, "random") else None
        s.snap_counter += 1
        token = f"{s.sid}:{s.snap_counter}"
        s.snapshots[token] = (env_copy, s.modules["random"].getstate(), np_state)
        if len(s.snapshots) > 1000:
            s.snapshots.pop(next(iter(s.snapshots)))
        return {"token": token, "method": "deepcopy"}

    return h.run(s, take)


def cmd_restore(h: Harness, req: RestoreRequest) -> RestoreResult:
    s = h.session(req)
    snap = s.snapshots.get(req.get("token"))
    if snap is None:
        raise HarnessError("not_found", f"no snapshot {req.get('token')!r} in this session")

    def put() -> RestoreResult:
        env_copy, rstate, np_state = snap
        s.env = copy.deepcopy(env_copy)  # the stored copy stays pristine, so a token restores many times
        s.modules["random"].setstate(rstate)
        if np_state is not None:
            s.ns["np"].random.set_state(np_state)
        return {"restored": True}

    return h.run(s, put)


def cmd_get_tools(h: Harness, req: GetToolsRequest) -> list[Any]:
    """SPADE's wrapper: the game's get_tools(), or [] when it has none (a plain game)."""
    s = h.session(req)

    def go() -> list[Any]:
        fn = getattr(s.env, "get_tools", None)
        if fn is None:
            return []
        return plain(fn())

    return h.run(s, go)


def cmd_tool(h: Harness, req: ToolRequest) -> ToolResult:
    """SPADE's wrapper execute_tool: a parsed tool call, straight to the game (never to step).

    `block` is the text inside the call's <tool_call> tags: read here by SPADE's own parser
    (spade_tool_calls), so the game gets the very values SPADE's rollout passes (1.0 a float, an
    integer of any size, True for `true`, the last of duplicate keys, a name that json.loads made
    5 or None). `name` and `arguments` without a block are values the host already holds as JSON
    (episodes recorded before blocks were kept)."""
    s = h.session(req)
    block = req.get("block")
    if block is not None and not isinstance(block, str):
        raise HarnessError("protocol", "tool's block must be a string")
    if block is None and not isinstance(req.get("name"), str):
        raise HarnessError("protocol", "tool needs a block or a name string")

    def go() -> ToolResult:
        arguments: Any
        if block is None:
            name, arguments = req.get("name"), req.get("arguments", {})
        else:
            name, arguments = read_call(block)
        fn = getattr(s.env, "execute_tool", None)
        if fn is None:
            return {"output": f"execute_tool not supported by {type(s.env).__name__}", "returncode": 1}
        ret = fn(name, arguments)
        # SPADE's rollout reads tool_result.get("output", ""): a result without .get raises there and
        # fails the episode (its catch-all), so it raises here too, as the game's own exception.
        out: ToolResult = {"output": plain(ret.get("output", "")), "returncode": plain(ret.get("returncode"))}
        if type(out["output"]) is not str or type(out["returncode"]) is not int:
            out["raw"] = describe(ret)
        return out

    return h.run(s, go)


def cmd_close(h: Harness, req: CloseRequest) -> CloseResult:
    s = h.sessions.pop(req.get("session"), None)
    fixed = h.guard()
    out: CloseResult = {"closed": s is not None}
    if fixed:
        out["restoredShared"] = fixed[:50]
    return out


BUILTIN_COMMANDS: dict[str, Callable[..., Any]] = {
    "ping": cmd_ping,
    "check_syntax": cmd_check_syntax,
    "load": cmd_load,
    "reset": cmd_reset,
    "step": cmd_step,
    "play": cmd_play,
    "state": cmd_state,
    "solution": cmd_solution,
    "snapshot": cmd_snapshot,
    "restore": cmd_restore,
    "close": cmd_close,
    "tool": cmd_tool,
    "get_tools": cmd_get_tools,
}
