"""The executor's values with their exact types, as JSON trees the judge decodes (judge_channel.decode)."""

from __future__ import annotations

import math
from typing import Any, Callable
from types import ModuleType

# Containers deeper or longer than this arrive cut: enough for every check's comparisons (which
# read observations, rewards and flags) and for evidence, bounded against hostile values.
MAX_DEPTH = 12
MAX_ITEMS = 5000


def _safe(fn: Callable[..., Any], v: Any, default: Any=None) -> Any:
    try:
        return fn(v)
    except BaseException:
        return default


# Values that are their own encoding. Containers test their items against it before recursing:
# a step's answer is mostly these, and a call per item was most of encoding one.
_PLAIN = frozenset((str, bool, int, type(None)))


def encode(v: Any, harness: ModuleType, depth: int=0) -> Any:
    """A JSON tree that the checks turn back into a value of the same types (see judge_channel.decode)."""
    t = type(v)
    if t in _PLAIN:
        return v
    if t is float:
        if math.isfinite(v):
            return v
        return {"F": "nan" if v != v else ("inf" if v > 0 else "-inf")}
    if depth >= MAX_DEPTH:
        return _opaque(v, harness, None, None)
    d = depth + 1
    if t is tuple:
        return {"T": [x if type(x) in _PLAIN else encode(x, harness, d) for x in v[:MAX_ITEMS]]}
    if t is list:
        return {"L": [x if type(x) in _PLAIN else encode(x, harness, d) for x in list(v)[:MAX_ITEMS]]}
    if t is dict:
        return {"D": [[k if type(k) in _PLAIN else encode(k, harness, d), x if type(x) in _PLAIN else encode(x, harness, d)] for k, x in list(v.items())[:MAX_ITEMS]]}
    base: Any = None
    inner: Any = None
    b: Any
    for b in (int, float, str, tuple, list, dict):
        if isinstance(v, b):
            base = b.__name__
            try:
                if b is int:
                    inner = int.__int__(v)
                elif b is float:
                    inner = encode(float.__float__(v), harness)
                elif b is str:
                    inner = str.__str__(v)
                elif b is dict:
                    inner = [[encode(k, harness, depth + 1), encode(x, harness, depth + 1)] for k, x in list(dict.items(v))[:MAX_ITEMS]]
                else:
                    inner = [encode(x, harness, depth + 1) for x in list(b.__iter__(v))[:MAX_ITEMS]]
            except BaseException:
                base, inner = None, None
            break
    return _opaque(v, harness, base, inner)


def _opaque(v: Any, harness: ModuleType, base: Any, inner: Any) -> Any:
    t = type(v)
    out = {"m": _safe(lambda x: str(type(x).__module__), v, "builtins"), "q": _safe(lambda x: str(getattr(type(x), "__qualname__", type(x).__name__)), v, "object")}
    if base is not None:
        out["b"], out["x"] = base, inner
    r = _safe(repr, v)
    out["r"] = r if isinstance(r, str) else f"<unrepresentable {harness.type_name(v)}>"
    if base is None:
        s = _safe(str, v)
        if isinstance(s, str) and s != out["r"]:
            out["s"] = s
        f = _safe(float, v)
        if isinstance(f, float):
            out["f"] = encode(f, harness)
        b = _safe(bool, v)
        if isinstance(b, bool):
            out["t"] = b
        if getattr(t, "__module__", "") == "numpy":
            p = _safe(harness.plain, v)
            if p is not None:
                out["p"] = p
    return {"O": out}


def _tagged(r: Any, harness: ModuleType) -> Any:
    """The answer with its value encoded, in place: every answer is a dict made for this one reply."""
    if "v" in r:
        r["v"] = encode(r["v"], harness)
    return r


def _probe_goes_on(enc: Any) -> bool:
    """Whether SPADE's probe certainly asks for the next step after this step's encoded return:
    a plain 5-tuple that passes SPADE's step rules (harness_loader.step_problem) with both flags
    exactly False. Anything else (subclasses, NaN, a flag that is not a bool) says no, and the
    judge asks for the next step itself if it wants it: a batch never plays a step it would not."""
    items = enc.get("T") if isinstance(enc, dict) and len(enc) == 1 else None
    if not isinstance(items, list) or len(items) != 5:
        return False
    obs, reward, terminated, truncated, info = items
    return (type(obs) is str and type(reward) in (int, float, bool) and -10 <= reward <= 10 and terminated is False
            and truncated is False and isinstance(info, dict) and len(info) == 1 and "D" in info)


def _truthy(x: Any) -> Any:
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


def _ended(enc: Any) -> Any:
    """Whether the checks end an episode on this step's encoded return (see judge_context.Audit.step)."""
    items = None
    if isinstance(enc, dict):
        if "T" in enc:
            items = enc["T"]
        elif "O" in enc and enc["O"].get("b") == "tuple":
            items = enc["O"].get("x")
    if not isinstance(items, list) or len(items) != 5:
        return True
    return _truthy(items[2]) or _truthy(items[3])


def load_error(harness: ModuleType, e: Any) -> Any:
    out = {"stage": e.stage, "message": str(e)}
    cause = e.cause
    if cause is not None:
        info = harness.error_info(cause)
        out["cause"] = {"type": info.get("type"), "message": info.get("message", ""), "line": info.get("line"), "traceback": info.get("traceback", "")}
        if isinstance(cause, SyntaxError):
            out["cause"]["syntax"] = cause.lineno
    return out
