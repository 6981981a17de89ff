"""The executor's values with their exact types, as JSON trees the judge decodes (judge_channel.decode).

Every value arrives bounded, so no answer is too big to carry and no check's result is lost with
it (issue 46: a 50 MB observation at each reset made the crash check's answer unencodable, and the
check was dropped). The bounds are a function of the value alone, never of what else an answer
holds: the same value is encoded the same way in every answer, so checks that compare values
(determinism, reset-leak) compare like with like. What is cut keeps what the checks read:
- a str longer than STR_CAP arrives as a str: its head, then its length and the SHA-256 of the
  whole (`long_str`); two such strings are equal exactly when the originals are;
- an int too long for JSON (SPADE's rewards pass through float()) arrives as {"I": hex}, or past
  INT_BITS as an int of the same sign and bit length whose low bits are the digest of the whole;
- past MAX_DEPTH, or once a value has spent VALUE_BUDGET (items plus characters), a builtin
  container arrives as a marker naming its type and length, never its repr (repr of a 100,000-deep
  dict overflows Pyodide's stack: the runtimes disagreed), and strings keep short heads.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any, Callable
from types import ModuleType

# Containers deeper or longer than this arrive cut: enough for every check's comparisons (which
# read observations, rewards and flags) and for evidence, bounded against hostile values.
MAX_DEPTH = 12
MAX_ITEMS = 5000
STR_CAP = 1 << 14  # a str longer than this arrives as long_str(): its head, length and digest
STR_HEAD = 1 << 12
CUT_HEAD = 64  # the head a str keeps once its value has spent its budget
VALUE_BUDGET = 1 << 17  # items plus characters one value may spend in full
INT_DIGITS = 4000  # CPython's JSON writes no int of more than 4,300 digits (sys.int_info)
_BIG = 10 ** INT_DIGITS
INT_BITS = 1 << 16  # past this an int arrives as its sign, bit length and digest


def _safe(fn: Callable[..., Any], v: Any, default: Any=None) -> Any:
    try:
        return fn(v)
    except BaseException:
        return default


def long_str(s: str, head: int=STR_HEAD) -> str:
    """A long str as it arrives: its head, then its length and the SHA-256 of all of it."""
    digest = hashlib.sha256(s.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{s[:head]}\u2026[{len(s)} chars, sha256 {digest}]"


def _str(s: str, budget: list[int]) -> str:
    """A str as it arrives, what it carries charged to its value's budget."""
    n = len(s)
    if n <= CUT_HEAD or (n <= STR_CAP and budget[0] >= n):
        budget[0] -= n
        return s
    head = STR_HEAD if budget[0] >= STR_HEAD else CUT_HEAD
    budget[0] -= head
    return long_str(s, head)


def _big_int(v: int) -> Any:
    """An int JSON cannot carry: exact (hex) up to INT_BITS, else the same sign and bit length."""
    bits = v.bit_length()
    if bits <= INT_BITS:
        return {"I": hex(v)}
    digest = hashlib.sha256(hex(v).encode()).hexdigest()
    return {"I": ["-" if v < 0 else "+", bits, digest]}


# Values that are their own encoding. Containers test their items against it before recursing:
# a step's answer is mostly these, and a call per item was most of encoding one.
_PLAIN = frozenset((bool, type(None)))
_CONTAINERS = (tuple, list, dict, set, frozenset)


def _item(x: Any, harness: ModuleType, d: int, budget: list[int]) -> Any:
    t = type(x)
    if t in _PLAIN:
        return x
    if t is str:
        return x if len(x) <= CUT_HEAD else _str(x, budget)
    if t is int:
        return x if -_BIG < x < _BIG else _big_int(x)
    return encode(x, harness, d, budget)


def encode(v: Any, harness: ModuleType, depth: int=0, budget: list[int] | None=None) -> Any:
    """A JSON tree that the checks turn back into a value of the same types (see judge_channel.decode)."""
    if budget is None:
        budget = [VALUE_BUDGET]
    t = type(v)
    if t in _PLAIN:
        return v
    if t is str:
        return _str(v, budget)
    if t is int:
        return v if -_BIG < v < _BIG else _big_int(v)
    if t is float:
        if math.isfinite(v):
            return v
        return {"F": "nan" if v != v else ("inf" if v > 0 else "-inf")}
    budget[0] -= 1
    if depth >= MAX_DEPTH or budget[0] < 0:
        return _opaque(v, harness, None, None, cut=True)
    d = depth + 1
    if t is tuple or t is list:
        items = list(v[:MAX_ITEMS])
        budget[0] -= len(items)
        return {"T" if t is tuple else "L": [_item(x, harness, d, budget) for x in items]}
    if t is dict:
        pairs = list(v.items())[:MAX_ITEMS]
        budget[0] -= 2 * len(pairs)
        return {"D": [[_item(k, harness, d, budget), _item(x, harness, d, budget)] for k, x in pairs]}
    base: Any = None
    inner: Any = None
    b: Any
    for b in (int, float, str, tuple, list, dict):
        if isinstance(v, b):
            base = b.__name__
            try:
                if b is int:
                    inner = encode(int.__int__(v), harness)
                elif b is float:
                    inner = encode(float.__float__(v), harness)
                elif b is str:
                    inner = _str(str.__str__(v), budget)
                elif b is dict:
                    inner = [[encode(k, harness, d, budget), encode(x, harness, d, budget)] for k, x in list(dict.items(v))[:MAX_ITEMS]]
                else:
                    inner = [encode(x, harness, d, budget) for x in list(b.__iter__(v))[:MAX_ITEMS]]
            except BaseException:
                base, inner = None, None
            break
    return _opaque(v, harness, base, inner)


def _opaque(v: Any, harness: ModuleType, base: Any, inner: Any, cut: bool=False) -> Any:
    t = type(v)
    out = {"m": _safe(lambda x: str(type(x).__module__), v, "builtins"), "q": _safe(lambda x: str(getattr(type(x), "__qualname__", type(x).__name__)), v, "object")}
    if base is not None:
        out["b"], out["x"] = base, inner
    if cut and isinstance(v, _CONTAINERS):
        # A container past the bounds: named, never repr'd (its repr is as deep and long as it is).
        n = _safe(len, v)
        out["r"] = f"<{harness.type_name(v)} of {n} items, cut>" if isinstance(n, int) else f"<{harness.type_name(v)}, cut>"
        out["t"] = bool(n) if isinstance(n, int) else True
        return {"O": out}
    budget = [VALUE_BUDGET]
    r = _safe(repr, v)
    out["r"] = _str(r, budget) if isinstance(r, str) else f"<unrepresentable {harness.type_name(v)}>"
    if base is None:
        s = _safe(str, v)
        if isinstance(s, str) and s != r:
            out["s"] = _str(s, budget)
        f = _safe(float, v)
        if isinstance(f, float):
            out["f"] = encode(f, harness)
        b = _safe(bool, v)
        if isinstance(b, bool):
            out["t"] = b
        if getattr(t, "__module__", "") == "numpy":
            size = _safe(lambda x: x.size, v, 1)
            p = _safe(harness.plain, v) if type(size) is int and size <= 4096 else None
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
    if "F" in x or "I" in x:  # NaN and infinities are true, and so is an int too long to be 0
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
