"""SPADE Workbench harness: SPADE's loader (docs/spade-formats.md sections 2 and 5).

The namespace SPADE builds for a game (injected modules and names), finding the class, SPADE's
instantiation, its reset/step return-shape rules with SPADE's messages, validation and pool
admission. The one copy of those rules: the harness, the audit's checks and the editor use it.
"""

from __future__ import annotations

import ast
import builtins
import copy
import importlib
import importlib.util
import json
import sys
import types

import spade_rules
from harness_tool_base import ToolUseBaseEnv, _tool_module
from harness_values import ENV_FILENAME, CallTimeout, HarnessError, error_info, repr_safe, str_safe
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness_messages import CheckSyntaxRequest, CheckSyntaxResult, CheckSyntaxResultErrorsItem

# Private references: a game may patch builtins or shared modules (undone at the next episode
# boundary, see SharedBaseline); until then the harness must keep answering with the originals.
if not TYPE_CHECKING:  # mypy reads the builtins themselves; at run time these are the originals
    len, isinstance, type, str, repr, int, float, bool = len, isinstance, type, str, repr, int, float, bool  # noqa: A001
    list, dict, tuple, set, frozenset, getattr, callable, id = list, dict, tuple, set, frozenset, getattr, callable, id  # noqa: A001
    sorted, min, max, range, any, all, next, hasattr, print = sorted, min, max, range, any, all, next, hasattr, print  # noqa: A001
_json_dumps, _json_loads = json.dumps, json.loads


# ---------------------------------------------------------------- the loader (section 2)

INJECTED_MODULES = ["itertools", "math", "random", "re", "json", "collections", "functools", "string", "copy", "heapq", "operator", "statistics"]
TYPING_NAMES = ["Tuple", "Dict", "List", "Optional", "Union", "Any", "Set", "FrozenSet", "Callable", "Iterable", "Sequence", "Mapping"]
# Modules that hold per-game state SPADE shares process-wide; each session gets its own copy.
STATEFUL_MODULES = ["random"]


_MODULE_SPECS: dict[Any, Any] = {}


_PREMADE: dict[Any, Any] = {}


def fresh_module(name: str) -> Any:
    """A new instance of a stdlib module, so a game's `random.seed` cannot reach another game.

    The module's code object is found and compiled once: Pyodide's standard library is a zip of
    sources, and compiling random.py again for every session cost more than the rest of opening it.
    """
    mod = _PREMADE.pop(name, None)
    if mod is not None:
        if name == "random":
            mod.seed()  # its own stream from fresh OS entropy, as importing it anew would give
        return mod
    known = _MODULE_SPECS.get(name)
    if known is None:
        spec: Any = importlib.util.find_spec(name)
        known = _MODULE_SPECS[name] = (spec, spec.loader.get_code(name))
    spec, code = known
    mod = importlib.util.module_from_spec(spec)
    exec(code, mod.__dict__)
    return mod


def warm() -> None:
    """What every session would otherwise redo, done once by the host before any session: the fork
    server before it forks, Pyodide before its pristine snapshot. Finding and compiling random.py
    for the session's own copy costs ~10 ms in Pyodide; cached here it is a fresh exec."""
    for name in STATEFUL_MODULES:
        fresh_module(name)
        # One copy made ahead, taken by the first fresh_module() after this: each forked process
        # (and each restored Pyodide interpreter) takes its own, once. Executing random.py in a
        # freshly forked process cost a millisecond of copy-on-write faults.
        _PREMADE[name] = fresh_module(name)
    _tool_module()
    injected_names({})


_INJECTED: dict[Any, Any] = {}


def injected_names(session_modules: Any) -> Any:
    """The names every game's namespace starts with, in SPADE's order; the session's own modules
    (a private `random`) in their places. Made once per interpreter, as SPADE binds them once: a
    failed `import numpy` cost Pyodide a search of its whole path at every load."""
    if not _INJECTED:
        _INJECTED.update(_injected_base())
    ns = dict(_INJECTED)
    ns.update({k: v for k, v in session_modules.items() if k in INJECTED_MODULES})
    return ns


def _injected_base() -> Any:
    import collections
    import functools
    import heapq
    import itertools
    import typing

    ns: dict[str, Any] = {name: importlib.import_module(name) for name in INJECTED_MODULES}
    try:
        import numpy  # noqa: F401  (only where the interpreter has it)

        ns["np"] = numpy
        ns["numpy"] = numpy
    except Exception:
        pass
    ns.update(
        deque=collections.deque,
        defaultdict=collections.defaultdict,
        Counter=collections.Counter,
        OrderedDict=collections.OrderedDict,
        namedtuple=collections.namedtuple,
        combinations=itertools.combinations,
        permutations=itertools.permutations,
        product=itertools.product,
        chain=itertools.chain,
        accumulate=itertools.accumulate,
        reduce=functools.reduce,
        lru_cache=functools.lru_cache,
        deepcopy=copy.deepcopy,
        heappush=heapq.heappush,
        heappop=heapq.heappop,
        ToolUseBaseEnv=ToolUseBaseEnv,
    )
    for n in TYPING_NAMES:
        ns[n] = getattr(typing, n)
    return ns


def find_env_class(ns: dict[str, Any]) -> Any:
    for name, value in list(ns.items()):
        if name.endswith(spade_rules.ENV_CLASS_SUFFIX) and name not in spade_rules.ENV_CLASS_EXCLUDED and callable(value):
            return name, value
    return None, None


DEFAULT_BUDGET = spade_rules.DEFAULT_BUDGET  # SpadeConfig.max_turns
ADMISSION_BUDGET = spade_rules.ADMISSION_BUDGET  # validate_game loads with SPADE's default max_steps
PROBE_ACTIONS = list(spade_rules.PROBE_ACTIONS)
ADMISSION_ACTIONS = list(spade_rules.ADMISSION_ACTIONS)


def solution_actions(value: Any, tool_use: bool) -> Any:
    """The actions a solution() value stands for, as the audit plays them: each item of a list or
    tuple boxed (unless already an answer), else one boxed answer (tool use: one <answer>)."""
    if isinstance(value, (list, tuple)):
        return [_boxed(x) for x in value]
    return [f"<answer>{value}</answer>"] if tool_use else [_boxed(value)]


def _boxed(a: Any) -> Any:
    a = str(a)
    return a if "\\boxed" in a or "<answer>" in a or "<tool_call>" in a else f"\\boxed{{{a}}}"


class SpadeLoadError(Exception):
    """A load that SPADE's factory refuses: `stage` names the check, str() is SPADE's message."""

    def __init__(self, stage: Any, message: str, cause: Any=None) -> None:
        super().__init__(message)
        self.stage = stage
        self.cause = cause


def _spade_syntax_message(e: Any) -> Any:
    # SPADE execs the source as a string, so its SyntaxError names "<string>", not our "<env>".
    try:
        clone = SyntaxError(e.msg, ("<string>", e.lineno, e.offset, e.text) + ((e.end_lineno, e.end_offset) if getattr(e, "end_lineno", None) else ()))  # type: ignore[arg-type]
        return f"Syntax error in generated game code: {clone}"
    except Exception:
        return f"Syntax error in generated game code: {e}"


_COMPILED: dict[Any, Any] = {}  # source -> code object: the last few sources (a regret run loads one many times)


def spade_compile(source: str) -> Any:
    code = _COMPILED.get(source)
    if code is not None:
        return code  # immutable, and exec'd into a fresh namespace each time, as a new compile would be
    try:
        code = compile(source, ENV_FILENAME, "exec")
    except SyntaxError as e:
        raise SpadeLoadError("syntax", _spade_syntax_message(e), e)
    except (ValueError, OverflowError, MemoryError, RecursionError) as e:
        # exec(str) compiles inside SPADE's try, where only SyntaxError gets its own wording.
        raise SpadeLoadError("exec", f"Failed to execute game code: {str_safe(e)}", e)
    if len(_COMPILED) >= 8:
        _COMPILED.pop(next(iter(_COMPILED)))
    _COMPILED[source] = code
    return code


def spade_namespace(modules: Any) -> Any:
    """A module namespace like SPADE's `dynamic_game`: injected names first, then the game's."""
    mod = types.ModuleType("dynamic_game")
    ns = mod.__dict__
    ns["__builtins__"] = builtins
    for k, v in injected_names(modules).items():
        ns.setdefault(k, v)
    return mod, ns


def spade_exec(code: Any, ns: dict[str, Any]) -> None:
    try:
        exec(code, ns)
    except (CallTimeout, KeyboardInterrupt):
        raise
    except SyntaxError as e:  # raised while running (compile() or exec inside the game)
        raise SpadeLoadError("exec", _spade_syntax_message(e), e)
    except BaseException as e:
        raise SpadeLoadError("exec", f"Failed to execute game code: {str_safe(e)}", e)


def spade_class(ns: dict[str, Any]) -> Any:
    name, cls = find_env_class(ns)
    if cls is None:
        raise SpadeLoadError("no_class", "No valid game class found in code (expected class ending with 'Env')")
    return name, cls


def spade_instantiate(cls: Any, budget: int, legacy: Any=False) -> Any:
    """SPADE's instantiation: "respect max_turns" (every play) or legacy (pool admission)."""
    try:
        if legacy:
            try:
                env = cls(max_turns=budget)
            except TypeError:
                env = cls()
                if hasattr(env, "max_turns"):
                    env.max_turns = budget
        else:
            try:
                env = cls()
            except TypeError:
                env = cls(max_turns=budget)
            designed = getattr(env, "max_turns", None)
            # As SPADE tests it: a bool is an int here (True stays True, i.e. 1 turn).
            if isinstance(designed, int) and designed > 0:
                env.max_turns = min(designed, budget)
            elif hasattr(env, "max_turns"):
                env.max_turns = budget
    except (CallTimeout, KeyboardInterrupt):
        raise
    except BaseException as e:
        raise SpadeLoadError("instantiate", f"Failed to instantiate game class: {str_safe(e)}", e)
    for m in ("reset", "step"):
        if not hasattr(env, m):
            raise SpadeLoadError("missing_method", f"Game class missing required method: {m}")
    return env


def _cls_repr(v: Any) -> Any:
    return repr_safe(type(v))


def reset_problem(result: Any) -> Any:
    """What SPADE's load says about reset(seed=42)'s return value, or None when it passes."""
    if isinstance(result, tuple) and len(result) == 2:
        obs, info = result
    elif isinstance(result, str):
        obs, info = result, {}
    else:
        return f"reset() returned invalid type: {_cls_repr(result)}"
    if not isinstance(obs, str) or len(obs) == 0:
        return "reset() returned empty or non-string observation"
    if not isinstance(info, dict):
        return f"reset() info must be dict, got {_cls_repr(info)}"
    return None


def step_problem(result: Any) -> Any:
    """What SPADE's load says about one probe step's return value, or None when it passes.

    isinstance, as SPADE tests: numpy.float64 (a float subclass) and bool rewards pass, NaN passes
    the range test; numpy.float32, numpy.int64 and numpy.bool_ flags fail.
    """
    if not isinstance(result, tuple) or len(result) != 5:
        return f"step() must return 5-tuple, got {_cls_repr(result)} with length {len(result) if isinstance(result, tuple) else 'N/A'}"
    obs, reward, terminated, truncated, info = result
    if not isinstance(obs, str):
        return f"step() observation must be string, got {_cls_repr(obs)}"
    if not isinstance(reward, (int, float)):
        return f"step() reward must be numeric, got {_cls_repr(reward)}"
    if not isinstance(terminated, bool):
        return f"step() terminated must be bool, got {_cls_repr(terminated)}"
    if not isinstance(truncated, bool):
        return f"step() truncated must be bool, got {_cls_repr(truncated)}"
    if not isinstance(info, dict):
        return f"step() info must be dict, got {_cls_repr(info)}"
    if reward < -10 or reward > 10:
        try:
            return f"step() reward {reward} outside expected range [-10, 10]"
        except ValueError as e:
            # An int past CPython's 4,300 digits cannot be written: SPADE's own f-string raises
            # here, inside its try (synthetic_game_env.py:320, caught at :325), and that is its message.
            return str(e)
    return None


def spade_validate(env: Any, on_call: Any=None) -> Any:
    """SPADE's load validation ON the instance: reset(42), up to three probes, reset(123).

    Returns (stage, message) of the first failure, or None. `on_call(label, action, seed)` is told
    before each call (the audit uses it for evidence). Hangs propagate.
    """
    tell = on_call or (lambda *a: None)
    try:
        tell("reset", None, 42)
        bad = reset_problem(env.reset(seed=42))
        if bad:
            raise ValueError(bad)
    except (CallTimeout, KeyboardInterrupt):
        raise
    except BaseException as e:
        return "reset", f"Game reset() failed: {str_safe(e)}"
    for i, action in enumerate(PROBE_ACTIONS):
        try:
            tell("step", action, 42)
            result = env.step(action)
            bad = step_problem(result)
            if bad:
                raise ValueError(bad)
            if result[2] or result[3]:
                break
        except (CallTimeout, KeyboardInterrupt):
            raise
        except BaseException as e:
            return "step", f"Game step() failed on action {i + 1} '{action}': {str_safe(e)}", i
    try:
        tell("reset", None, 123)
        env.reset(seed=123)
    except (CallTimeout, KeyboardInterrupt):
        raise
    except BaseException as e:
        return "reset2", f"Game reset() failed on second call: {str_safe(e)}"
    return None


def spade_load(source: str, modules: Any, budget: int, legacy: Any=False, on_call: Any=None, code: Any=None) -> Any:
    """The whole of SPADE's env factory: (module, ns, class name, validated instance).

    Raises SpadeLoadError with SPADE's message at the first failure, validation included.
    `code`: the source already compiled by spade_compile (the same code object SPADE's own
    compile of it would give).
    """
    code = code if code is not None else spade_compile(source)
    mod, ns = spade_namespace(modules)
    spade_exec(code, ns)
    name, cls = spade_class(ns)
    env = spade_instantiate(cls, budget, legacy)
    bad = spade_validate(env, on_call)
    if bad:
        raise SpadeLoadError(bad[0], bad[1])
    return mod, ns, name, env


def _instantiate(cls: Any, mode: Any, budget: int) -> Any:
    """Kept for the audit's own checks: SPADE's instantiation, errors as raised by the class."""
    try:
        return spade_instantiate(cls, budget, mode == "legacy")
    except SpadeLoadError as e:
        if e.cause is not None:
            raise e.cause
        raise


# ---------------------------------------------------------------- load failures, for the protocol


def _load_error(e: Any) -> Any:
    """A SpadeLoadError as the protocol's load_error (SPADE's message, plus a traceback to read)."""
    extra = {"stage": e.stage}
    cause = e.cause
    if cause is not None:
        info = error_info(cause, "load_error")
        for k in (("line", "col") if isinstance(cause, SyntaxError) else ("traceback", "line", "col", "frames")):
            if k in info:
                extra[k] = info[k]
        extra["type"] = info.get("type")
        if isinstance(cause, SyntaxError):
            extra.update(_syntax_extra(cause))
        missing = getattr(cause, "name", None) if isinstance(cause, ImportError) else None
        if missing:
            extra["missingModule"] = missing.split(".")[0]
        elif isinstance(cause, NameError) and getattr(cause, "name", None) in ("np", "numpy"):
            extra["missingModule"] = "numpy"
    return HarnessError("load_error", str(e), **extra)


def _may_have_tools(env: Any) -> Any:
    """Whether get_tools() could answer anything but [] (a plain game has none, so a player need not
    ask for them). Read from the class and instance dicts: no game code runs to find out, and a game
    that could answer dynamically (__getattr__, __getattribute__) counts as having tools."""
    try:
        for c in type(env).__mro__:
            d = c.__dict__
            if "get_tools" in d or "__getattr__" in d or (c is not object and "__getattribute__" in d):
                return True
        return "get_tools" in object.__getattribute__(env, "__dict__")
    except Exception:
        return True


def _hash_seed() -> Any:
    try:
        import os as _os

        v = _os.environ.get("PYTHONHASHSEED")
    except Exception:
        v = None
    return v if v not in (None, "", "random") else None


def _syntax_extra(e: Any) -> Any:
    return {"type": "SyntaxError", "line": e.lineno, "col": e.offset, "detail": e.msg}


def cmd_check_syntax(h: object, req: CheckSyntaxRequest) -> CheckSyntaxResult:
    """Python's own parser on a source (the harness's `check_syntax` command; nothing is run)."""
    source = req.get("source")
    if not isinstance(source, str):
        raise HarnessError("protocol", "source must be a string")
    try:
        compile(source, ENV_FILENAME, "exec", ast.PyCF_ONLY_AST)
    except SyntaxError as e:
        err: CheckSyntaxResultErrorsItem = {"line": e.lineno or 1, "col": e.offset or 1, "message": e.msg or "invalid syntax"}
        if e.end_lineno and e.end_offset is not None:
            err["endLine"] = e.end_lineno
            err["endCol"] = e.end_offset
        return {"ok": False, "errors": [err], "python": sys.version.split()[0]}
    except (ValueError, OverflowError, MemoryError, RecursionError) as e:
        return {"ok": False, "errors": [{"line": 1, "col": 1, "message": f"{type(e).__name__}: {e}"}], "python": sys.version.split()[0]}
    return {"ok": True, "errors": [], "python": sys.version.split()[0]}
