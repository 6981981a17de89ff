"""SPADE Workbench harness: the shared modules as they were before any game ran, put back at every
episode boundary (a game that patches `builtins.len` or `re.search` must not change the next game)."""

from __future__ import annotations

import builtins
import importlib
import json
import sys
import types
from typing import TYPE_CHECKING, Any

# Private references: a game may patch builtins or shared modules (undone at the next episode
# boundary, see SharedBaseline); until then the harness must keep answering with the originals.
if not TYPE_CHECKING:  # mypy reads the builtins themselves; at run time these are the originals
    len, isinstance, type, str, repr, int, float, bool = len, isinstance, type, str, repr, int, float, bool  # noqa: A001
    list, dict, tuple, set, frozenset, getattr, callable, id = list, dict, tuple, set, frozenset, getattr, callable, id  # noqa: A001
    sorted, min, max, range, any, all, next, hasattr, print = sorted, min, max, range, any, all, next, hasattr, print  # noqa: A001
_json_dumps, _json_loads = json.dumps, json.loads


GUARDED_MODULES = ["builtins", "json", "json.decoder", "json.encoder", "json.scanner", "itertools", "math", "re", "collections", "functools", "string", "copy", "heapq", "operator", "statistics", "typing", "types",
                   # what the harness reads a tool call with (cmd_tool): one game's patch must not change another's calls
                   "html", "spade_tool_calls", "harness_tool_call",
                   # what the solution policy reads a described solution() with (cmd_solution)
                   "harness_solution"]
_MISSING = object()
_is = __import__("operator").is_


class SharedBaseline:
    """The shared modules as they were before any game ran, put back at every episode boundary.

    Games of one interpreter share its modules; a game that patches `builtins.len` or `re.search`
    (by accident or on purpose) must not change the next game. Checking ~1,500 identities costs
    well under a millisecond (a few dozen µs on the untouched path, which compares in C), so it runs at load,
    reset, play and close, not at every step.
    """

    def __init__(self) -> None:
        self.saved = []
        for name in GUARDED_MODULES:
            try:
                mod = importlib.import_module(name)
            except Exception:
                continue
            saved = dict(mod.__dict__)
            self.saved.append((name, mod, saved, tuple(saved), tuple(saved.values())))
        self._bdict = builtins.__dict__
        self._bvals = tuple(self._bdict.values())

    def builtins_intact(self) -> Any:
        """Per-call check of the builtins alone (C-speed, 2-5 µs): the harness itself needs them.

        Values are compared by identity in order (a deleted, replaced or reordered entry shows);
        comparing them through lookups by key cost twice as much in Pyodide.
        """
        d = self._bdict
        return len(d) == len(self._bvals) and all(map(_is, d.values(), self._bvals))

    def restore(self) -> Any:
        fixed = []
        for name, mod, saved, keys, vals in self.saved:
            if sys.modules.get(name) is not mod:
                sys.modules[name] = mod
                fixed.append(f"sys.modules[{name!r}]")
            d = mod.__dict__
            # The untouched case at C speed: the same keys and values, by identity, in order. Anything
            # else (even a harmless reordering) takes the careful path below, which repairs and names.
            if len(d) == len(keys) and all(map(_is, d.values(), vals)) and all(map(_is, d, keys)):
                continue
            for k in [k for k in d if k not in saved and not isinstance(d[k], types.ModuleType)]:
                del d[k]
                fixed.append(f"{name}.{k}")
            for k, v in saved.items():
                if d.get(k, _MISSING) is not v:
                    d[k] = v
                    fixed.append(f"{name}.{k}")
        return fixed
