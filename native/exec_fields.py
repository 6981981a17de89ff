"""The state the reset-leak and seed-ignored checks compare: an instance's attributes, module globals,
class attributes and (for reset-leak) the other places state outlives an instance."""

from __future__ import annotations

import json
from typing import Any
from types import ModuleType

# json.dumps(v, sort_keys=True, default=str) makes an encoder a call; fields() made ~70 an audit.
_FIELD_JSON = json.JSONEncoder(sort_keys=True, default=str).encode


def fields(harness: ModuleType, env: Any, ns: dict[str, Any], shared: bool=False) -> Any:
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
    ours = _game_classes(harness, cls, ns) if shared else ()
    ids = frozenset(map(id, ours))  # by identity: a metaclass's __eq__ is game code
    plain = (lambda v: _plain_ours(harness, v, ids, 0)) if shared else harness.plain
    for k, v in list(getattr(env, "__dict__", {}).items()):
        try:
            out[f"self.{k}"] = dumps(plain(v))
        except Exception:
            out[f"self.{k}"] = harness.repr_safe(v)[:2000]
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
        _hidden_fields(harness, env, ns, ours, plain, out)
    return out


_IMMUTABLE = (type(None), bool, int, float, complex, str, bytes, tuple, frozenset, range)
MAX_FUNCTIONS = 500  # functions looked into for defaults and cells: bounded against hostile code


def _qualname(c: Any) -> Any:
    try:
        q = type.__dict__["__qualname__"].__get__(c, type)  # past any metaclass of the game's
    except Exception:
        q = None
    return q if isinstance(q, str) else "?"


def _game_classes(harness: ModuleType, cls: Any, ns: dict[str, Any]) -> Any:
    """The classes the game's code defined (by module name): the game class's bases first, then
    the namespace's classes and the classes nested in them, each once, in a fixed order."""
    mod = ns.get("__name__")
    out, seen = [], set()

    def add(c: Any) -> None:
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


def _plain_ours(harness: ModuleType, v: Any, ours: Any, depth: int) -> Any:
    """hm.plain, except that an instance of one of the game's classes (`ours`: their ids) is
    described by its attributes ({"<Class>": {...}}) instead of a repr that never changes."""
    t = type(v)
    if t in (str, int, float, bool) or v is None or depth > 8:
        return harness.plain(v, depth)
    if id(t) in ours:
        try:
            d = object.__getattribute__(v, "__dict__")
        except Exception:
            d = None
        if isinstance(d, dict):
            return {f"<{_qualname(t)}>": {str(k): _plain_ours(harness, x, ours, depth + 1) for k, x in list(d.items())[:1000]}}
        return harness.plain(v, depth)
    if t is dict:
        return {(k if type(k) is str else str(k)): _plain_ours(harness, x, ours, depth + 1) for k, x in list(v.items())[:1000]}
    if t in (list, tuple, set, frozenset):
        return [_plain_ours(harness, x, ours, depth + 1) for x in list(v)[:1000]]
    return harness.plain(v, depth)


def _hidden_fields(harness: ModuleType, env: Any, ns: dict[str, Any], ours: Any, plain: Any, out: Any) -> None:
    """Mutable default arguments ("default F.p") and closure cells ("closure F.v") of the game's
    functions: module functions, methods, functions kept on the instance, and the functions those
    cells hold in turn (decorators, factories)."""
    import types as _t

    fn_type = _t.FunctionType
    fns: list[Any] = [v for v in list(ns.values()) if type(v) is fn_type]
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
    seen_fn: set[int] = set()
    seen_cell: set[int] = set()
    i = 0
    while i < len(fns) and len(seen_fn) < MAX_FUNCTIONS:
        f = fns[i]
        i += 1
        if type(f) is not fn_type or id(f) in seen_fn or f.__code__.co_filename != harness.ENV_FILENAME:
            continue
        seen_fn.add(id(f))
        code, qual = f.__code__, f.__qualname__
        defaults = f.__defaults__ or ()
        pos = code.co_varnames[: code.co_argcount]
        pairs = list(zip(pos[len(pos) - len(defaults):], defaults)) + list((f.__kwdefaults__ or {}).items())
        for p, d in pairs:
            if type(d) not in _IMMUTABLE:
                _put(out, f"default {qual}.{p}", d, plain, harness)
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
                _put(out, f"closure {qual}.{n}", c, plain, harness)


def _put(out: Any, key: str, v: Any, plain: Any, harness: ModuleType) -> None:
    """out[key] = v as JSON text; a second value under the same name (two closures from one
    factory) gets " #2", and so on, in the order they were found."""
    k, n = key, 1
    while k in out:
        n += 1
        k = f"{key} #{n}"
    try:
        out[k] = _FIELD_JSON(plain(v))
    except Exception:
        out[k] = harness.repr_safe(v)[:2000]
