"""SPADE Workbench harness: values and errors as the protocol carries them.

What an environment returns or raises is described here, never trusted: plain JSON-safe copies,
bounded descriptions of state, type names, and errors with a traceback into "<env>". Shared by the
harness (native/harness.py) and the audit's executor (native/audit_exec.py).
"""

from __future__ import annotations

import json
import math
import os
import re
import traceback
import types

import spade_rules
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness import Session
    from harness_messages import ErrorKind

# Private references: a game may patch builtins or shared modules (undone at the next episode
# boundary, see SharedBaseline); until then the harness must keep answering with the originals.
if not TYPE_CHECKING:  # mypy reads the builtins themselves; at run time these are the originals
    len, isinstance, type, str, repr, int, float, bool = len, isinstance, type, str, repr, int, float, bool  # noqa: A001
    list, dict, tuple, set, frozenset, getattr, callable, id = list, dict, tuple, set, frozenset, getattr, callable, id  # noqa: A001
    sorted, min, max, range, any, all, next, hasattr, print = sorted, min, max, range, any, all, next, hasattr, print  # noqa: A001
_json_dumps, _json_loads = json.dumps, json.loads


def _no_default(o: Any) -> None:
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


def _fast_codec() -> Any:
    """json's own C scanner and encoder, built once, for the per-call path.

    json.dumps/json.loads build an encoder per call, keep a circular-reference dict and run
    Python-level wrappers: a quarter of a step() call's cost in the harness. Everything the
    harness encodes is a fresh tree made by plain()/describe(), so no cycle check is needed; any
    failure falls back to json.dumps, which also gives the usual error messages.
    """
    try:
        from json.decoder import JSONDecoder
        from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
        from json.scanner import c_make_scanner  # type: ignore[attr-defined]
    except ImportError:
        return None, None
    if c_make_encoder is None or c_make_scanner is None:
        return None, None
    encode = c_make_encoder(None, _no_default, encode_basestring_ascii, None, ": ", ", ", False, False, False)
    scan = c_make_scanner(JSONDecoder())
    join = "".join

    def dumps(o: Any) -> Any:
        return join(encode(o, 0))

    def loads(line: str) -> Any:
        obj, end = scan(line, 0)
        if end != len(line) and line[end:].strip():
            raise ValueError("extra data after the JSON value")
        return obj

    return dumps, loads


_fast_dumps, _fast_loads = _fast_codec()

ENV_FILENAME = "<env>"
OUTPUT_CAP = 64 * 1024
STATE_MAX_DEPTH = 5
STATE_MAX_ITEMS = 50
STATE_MAX_STR = 300
VALUE_MAX_STR = 100_000
MAX_ACTION_CHARS = spade_rules.MAX_ACTION_CHARS


class CallTimeout(BaseException):
    """Raised inside a call that ran past its limit (CPython uses a timer; Pyodide an interrupt)."""


class HarnessError(Exception):
    def __init__(self, kind: ErrorKind, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.kind = kind
        self.extra = extra


# ---------------------------------------------------------------- describing values


_TYPE_NAMES: dict[Any, Any] = {}


def type_name(v: Any) -> Any:
    t = type(v)
    name = _TYPE_NAMES.get(t)
    if name is not None:
        return name
    mod = getattr(t, "__module__", "builtins")
    qual = getattr(t, "__qualname__", t.__name__)
    name = qual if mod == "builtins" else f"{mod}.{qual}"
    if mod in ("builtins", "numpy", "collections"):  # stable types only: game classes come and go
        _TYPE_NAMES[t] = name
    return name


def cut(s: str, limit: int) -> Any:
    if len(s) <= limit:
        return s
    return s[:limit] + f"\u2026[+{len(s) - limit} chars]"


def json_number(v: Any) -> Any:
    """A float JSON can carry: non-finite values become strings so JSON.parse never fails."""
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")
    return v


_INF = float("inf")
_SAFE_INT = 2**53  # beyond this JavaScript numbers lose digits: such ints travel as strings


def plain(v: Any, depth: int=0) -> Any:
    """A JSON-safe copy of a returned value (numpy scalars unwrapped, unknown objects by repr)."""
    t = type(v)  # fast paths first: this runs for every item of every step of every script
    if t is str:
        return v if len(v) <= VALUE_MAX_STR else cut(v, VALUE_MAX_STR)
    if t is float:
        return v if (v == v and v != _INF and v != -_INF) else json_number(v)
    if t is bool:
        return v
    if t is int:
        return v if -_SAFE_INT <= v <= _SAFE_INT else int_text(v)
    if t is dict:
        if not v:
            return {}
        if depth <= 8:
            items = list(v.items())  # a copy: describing a value may run game code that mutates it
            if len(items) > 1000:
                items = items[:1000]
            return {(k if type(k) is str else str(k)): plain(x, depth + 1) for k, x in items}
    if v is None or isinstance(v, (bool, str)):
        return cut(v, VALUE_MAX_STR) if isinstance(v, str) else v
    if isinstance(v, int):
        return v if -_SAFE_INT <= v <= _SAFE_INT else int_text(v)
    if isinstance(v, float):
        return json_number(v)
    if depth > 8:
        return cut(repr_safe(v), 200)
    if isinstance(v, dict):
        return {str(k): plain(x, depth + 1) for k, x in list(v.items())[:1000]}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [plain(x, depth + 1) for x in list(v)[:1000]]
    item = getattr(v, "item", None)  # numpy scalars and 0-d arrays
    if callable(item) and type(v).__module__ == "numpy":
        try:
            return plain(item(), depth + 1)
        except Exception:
            pass
    tolist = getattr(v, "tolist", None)
    if callable(tolist) and type(v).__module__ == "numpy":
        try:
            return plain(tolist(), depth + 1)
        except Exception:
            pass
    return cut(repr_safe(v), 1000)


def int_text(v: int) -> str:
    """An int as text; past CPython's 4,300 digits (str() refuses those) its size instead."""
    try:
        return str(v)
    except ValueError:
        return f"<int of {int.bit_length(v)} bits>"


_ADDRESS_RE = re.compile(r" at 0x[0-9a-fA-F]+")


def repr_safe(v: Any) -> Any:
    """repr without memory addresses, so two runs of one episode describe it identically."""
    try:
        return _ADDRESS_RE.sub("", repr(v))
    except BaseException as e:  # a hostile __repr__ must not take the harness down
        return f"<unrepresentable {type_name(v)}: {type(e).__name__}>"


def describe(v: Any, depth: int=0, seen: Any=None) -> Any:
    """A bounded, typed tree of a value for state views: {t, v} | {t, items, more} | {t, fields}."""
    if seen is None:
        seen = set()
    t = type_name(v)
    if v is None or isinstance(v, (bool, int, float)):
        return {"t": t, "v": plain(v)}
    if isinstance(v, str):
        return {"t": t, "v": cut(v, STATE_MAX_STR)}
    if isinstance(v, (types.FunctionType, types.MethodType, types.BuiltinFunctionType, type, types.ModuleType)):
        return {"t": t, "v": cut(repr_safe(v), 120)}
    if id(v) in seen:
        return {"t": t, "v": "<cycle>"}
    if depth >= STATE_MAX_DEPTH:
        return {"t": t, "v": cut(repr_safe(v), 120), "cut": "depth"}
    seen = seen | {id(v)}
    if isinstance(v, dict):
        items = list(v.items())
        node = {"t": t, "len": len(items), "items": [[cut(repr_safe(k) if not isinstance(k, str) else k, 120), describe(x, depth + 1, seen)] for k, x in items[:STATE_MAX_ITEMS]]}
        if len(items) > STATE_MAX_ITEMS:
            node["more"] = len(items) - STATE_MAX_ITEMS
        return node
    if isinstance(v, (list, tuple, set, frozenset)) or type(v).__name__ == "deque":
        seq = list(v)
        if isinstance(v, (set, frozenset)):
            try:
                seq = sorted(seq)
            except Exception:
                pass
        node = {"t": t, "len": len(seq), "items": [describe(x, depth + 1, seen) for x in seq[:STATE_MAX_ITEMS]]}
        if len(seq) > STATE_MAX_ITEMS:
            node["more"] = len(seq) - STATE_MAX_ITEMS
        return node
    if type(v).__module__ == "numpy":
        return {"t": t, "v": plain(v) if getattr(v, "ndim", 1) == 0 else cut(repr_safe(v), STATE_MAX_STR)}
    fields = getattr(v, "__dict__", None)
    if isinstance(fields, dict):
        return {"t": t, "fields": describe_fields(fields, depth + 1, seen)}
    return {"t": t, "v": cut(repr_safe(v), STATE_MAX_STR)}


def describe_fields(fields: Any, depth: int, seen: Any) -> Any:
    out = []
    items = list(fields.items())
    for k, x in items[:STATE_MAX_ITEMS * 4]:
        out.append([str(k), describe(x, depth, seen)])
    return out


def _workbench_files() -> frozenset[str]:
    """Every module beside this one (natively native/, in Pyodide /spade/): the workbench's own files.

    Read from the folder, not written down, so a new harness module can never show its frames in a
    game's traceback. The game itself is compiled as ENV_FILENAME and is never in that folder.
    """
    here = os.path.dirname(os.path.abspath(__file__))
    return frozenset(name for name in os.listdir(here) if name.endswith(".py"))


# The workbench's own files: their frames are not the game's and stay out of its tracebacks.
WORKBENCH_FILES = _workbench_files()


# A traceback keeps its first TB_HEAD and last TB_TAIL frames. A game that raised the recursion
# limit (sys.setrecursionlimit(10**6), common for searches) and then recursed forever had a million:
# extracting them all took 35 s natively and their `frames` made a 32 MB reply (issue 46).
TB_HEAD = 100
TB_TAIL = 100


def _bounded_tb(tb: Any) -> Any:
    """The traceback's frames (traceback.extract_tb), the middle of a long one left out: [head
    frames..., None, tail frames...], None standing for the frames left out, and their count."""
    n, node = 0, tb
    while node is not None:
        n += 1
        node = node.tb_next
    if n <= TB_HEAD + TB_TAIL:
        return list(traceback.extract_tb(tb)), 0
    node = tb
    for _ in range(n - TB_TAIL):
        node = node.tb_next
    return [*traceback.extract_tb(tb, TB_HEAD), None, *traceback.extract_tb(node)], n - TB_HEAD - TB_TAIL


def env_traceback(exc: Any) -> Any:
    """Frames from the environment source onwards: what a researcher needs to fix the game."""
    frames, omitted = _bounded_tb(exc.__traceback__)
    first = next((i for i, f in enumerate(frames) if f is not None and f.filename == ENV_FILENAME), None)
    kept = frames[first:] if first is not None else [f for f in frames if f is not None][-3:]
    kept = [f for f in kept if f is None or os.path.basename(f.filename) not in WORKBENCH_FILES] or kept
    lines = ["Traceback (most recent call last):\n"]
    for i, part in enumerate(_runs(kept)):
        if i:
            lines.append(f"  [... {omitted} frames left out ...]\n")
        lines += traceback.format_list(part)
    lines += traceback.format_exception_only(type(exc), exc)
    env_frames = [{"line": f.lineno, "function": f.name} for f in kept if f is not None and f.filename == ENV_FILENAME]
    return "".join(lines), env_frames


def _runs(kept: list[Any]) -> list[list[Any]]:
    """The frames either side of the frames left out (None), each run on its own."""
    runs: list[list[Any]] = [[]]
    for f in kept:
        if f is None:
            runs.append([])
        else:
            runs[-1].append(f)
    return [r for r in runs if r] or [[]]


def error_info(exc: Any, kind: ErrorKind="env_error", **extra: Any) -> Any:
    if isinstance(exc, CallTimeout):
        return {"kind": "timeout", "type": "Timeout", "message": "The call ran past its time limit", **extra}
    if isinstance(exc, KeyboardInterrupt):
        return {"kind": "timeout", "type": "Timeout", "message": "The call ran past its time limit and was interrupted", **extra}
    tb, frames = env_traceback(exc)
    info = {"kind": kind, "type": type_name(exc), "message": cut(repr_safe(exc) if not str_safe(exc) else str_safe(exc), 4000), "traceback": cut(tb, 20000), **extra}
    if frames:
        info["line"] = frames[-1]["line"]
        info["frames"] = frames
    if isinstance(exc, SyntaxError) and exc.filename == ENV_FILENAME:
        info["line"] = exc.lineno
        info["col"] = exc.offset
    view = getattr(exc, "__spade_wb_view__", None) if isinstance(exc, Exception) else None
    if type(view) is dict:
        info["spade"] = view
    return info


def str_safe(exc: Any) -> Any:
    try:
        return str(exc)
    except BaseException:
        return ""


# ---------------------------------------------------------------- a session's state, for people


def state_of(s: Session) -> Any:
    env = s.env
    fields = getattr(env, "__dict__", {})
    out = {"className": s.class_name, "fields": describe_fields(fields, 1, {id(env)})}
    # State that outlives an instance (and so leaks across reset) lives on the game's classes and
    # in its module: shown in groups of their own, named as the audit names them.
    shared = shared_state(s)
    if shared[0]:
        out["classFields"] = describe_fields(shared[0], 1, {id(env)})
    if shared[1]:
        out["moduleGlobals"] = describe_fields(shared[1], 1, {id(env)})
    return out


def _is_data(k: Any, v: Any) -> Any:
    return not k.startswith("__") and not callable(v) and not isinstance(v, (types.ModuleType, staticmethod, classmethod, property))


def shared_state(s: Session) -> Any:
    """Class attributes of the game's own classes (its MRO, not the base classes the harness gives)
    and module globals that hold data, as two dicts."""
    env = s.env
    ns: dict[str, Any] = s.ns or {}
    modname = ns.get("__name__")
    cls_fields = {}
    for c in reversed(type(env).__mro__):
        if getattr(c, "__module__", None) != modname:
            continue
        for k, v in list(vars(c).items()):
            if _is_data(k, v):
                cls_fields[k] = v
    globs = {k: v for k, v in list(ns.items()) if _is_data(k, v)}
    return cls_fields, globs
