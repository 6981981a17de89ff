"""The judge's side of the line channel to the executor: the values it sends back, decoded with
their types, and the exceptions an environment call amounts to."""

from __future__ import annotations
from typing import Any

EV_STR = 400  # evidence strings are cut here: enough to see, small enough for 2,000 environments


class Hang(Exception):
    """A call into environment code ran past the per-call limit."""

    def __init__(self, call: str, action: str | None, seed: int | None, limit: float) -> None:
        super().__init__(f"{call} did not return within {limit:g} s")
        self.call, self.action, self.seed, self.limit = call, action, seed, limit


class StepFailed(Exception):
    def __init__(self, call: str, action: str | None, seed: int | None, info: Any) -> None:
        super().__init__(info.get("message", ""))
        self.call, self.action, self.seed, self.info = call, action, seed, info


def clip(s: Any, n: int=EV_STR) -> Any:
    s = s if isinstance(s, str) else repr(s)
    return s if len(s) <= n else s[:n] + f"\u2026[+{len(s) - n}]"


class Uncarried(Exception):
    """The executor's answer to `op` could not be carried to the checks (it could not be encoded).
    Values arrive bounded (exec_values), so this is the last net: the check it came in fails with
    this as its evidence, never skipped (issue 46)."""

    def __init__(self, op: str, why: str) -> None:
        super().__init__(f"the game's answer to {op} could not be carried to the checks: {why}")
        self.op, self.why = op, why


class ExecutorGone(BaseException):
    """The interpreter running the game stopped answering (it exited, crashed or was killed).
    A BaseException: no check may swallow it and go on as if the game had answered."""


class LoadError(Exception):
    """SPADE's factory refused the game at `stage`; str() is SPADE's message, `cause` what was raised."""

    def __init__(self, stage: Any, message: str, cause: Any=None) -> None:
        super().__init__(message)
        self.stage, self.cause = stage, cause


_SUBTYPES: dict[Any, Any] = {}


def forget() -> None:
    """Drops what an earlier audit's values left here (types named by its game)."""
    _SUBTYPES.clear()


class Opaque:
    """A value of a type the checks cannot rebuild (numpy.int64, a game's class): its type's name,
    repr, str, truth and float as the game's interpreter computed them."""

    __slots__ = ("_r", "_s", "_f", "_t", "_p")

    def __init__(self, d: Any) -> None:
        self._r, self._s, self._f, self._t, self._p = d.get("r", ""), d.get("s"), d.get("f"), d.get("t"), d.get("p")

    def __repr__(self) -> str:
        return self._r

    def __str__(self) -> str:
        return self._s if isinstance(self._s, str) else self._r

    def __float__(self) -> float:
        if self._f is None:
            raise TypeError(f"float() argument must be a string or a real number, not '{type(self).__qualname__}'")
        return decode(self._f)

    def __bool__(self) -> bool:
        return True if self._t is None else self._t

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and other._r == self._r

    def __hash__(self) -> int:
        return hash(self._r)

    def item(self) -> Any:  # what harness.plain asks numpy scalars for
        return self._p


def _subtype(base: Any, module: Any, qualname: Any) -> Any:
    key = (base, module, qualname)
    t = _SUBTYPES.get(key)
    if t is None:
        t = _SUBTYPES[key] = type(qualname.rsplit(".", 1)[-1], (base,), {"__module__": module, "__qualname__": qualname, **({} if base is not Opaque else {"__slots__": ()})})
    return t


_BASES = {"int": int, "float": float, "str": str, "tuple": tuple, "list": list, "dict": dict}
_FLOATS = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def decode(x: Any) -> Any:
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
    if "I" in x:
        return _big_int(x["I"])
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


def _big_int(i: Any) -> int:
    """An int JSON could not carry (exec_values._big_int): exact from hex, or past its bound an
    int of the same sign and bit length whose low bits are the digest of the original."""
    if isinstance(i, str):
        return int(i, 16)
    sign, bits, digest = i
    v = (1 << (int(bits) - 1)) | int(digest, 16)
    return -v if sign == "-" else v


def _key(k: Any) -> Any:
    try:
        hash(k)
        return k
    except TypeError:
        return repr(k)


class Env:
    """An instance living in the executor; `globals` says whether its module's globals count as its state."""

    __slots__ = ("id", "globals")

    def __init__(self, eid: int, with_globals: bool) -> None:
        self.id, self.globals = eid, with_globals
