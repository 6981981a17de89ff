"""How a Pyodide interpreter of core/runtime/child.ts is set up: the game's interpreter (the harness,
its extensions, then the walls) and the audit's judge. Run by trusted code before any environment,
from /spade (core/runtime/paths.ts copies this folder there). Not an extension (`harness_` prefix);
the native host never imports it (native/cpython_main.py does the same work for CPython).

Nothing here is kept in module globals that a game could use: what the host needs (the dispatch
function, the reseeder) is handed back to it, and a game that walks to this module finds only the
functions below. The module is in sandbox.BLOCKED_MODULES like every file of this folder.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

SPADE_DIR = "/spade"
# Read by environments (or by the harness for them) on first use: imported now, so the pristine copy
# of the interpreter holds them and no game pays for the import.
WARM_MODULES = (
    "random", "statistics", "typing", "collections", "functools", "heapq", "itertools", "json", "re", "math",
    "string", "copy", "operator", "linecache", "traceback", "ast",
)
# What the hook lets a game read (the interpreter's own library and the harness files).
READ_ROOTS = ["/lib/python3.14", "/lib/python314.zip", "/usr/lib", SPADE_DIR]
# A reply this long or longer goes back as bytes, written straight from WebAssembly memory; a shorter
# one as a str, which is cheaper than a buffer proxy.
BYTES_FROM = 32768


def freeze_baseline(_line: str="") -> str:
    """Keeps what trusted code made before any environment out of Python's collector (child.ts
    freezeBaseline says why)."""
    import gc

    gc.collect()
    gc.freeze()
    return ""


def python_version(_line: str="") -> str:
    return sys.version.split()[0]


def start(extensions: list[str]) -> tuple[Callable[[str], str | bytes], Callable[[str], str]]:
    """The game's interpreter: the harness warmed, the extensions installed (each module's
    `install(h, harness)`), /spade off sys.path again. Returns the dispatch (a request line in, a
    reply line out) and the reseeder the host calls after putting the pristine memory back."""
    import importlib

    import harness
    import sandbox  # noqa: F401  (loaded now, from /spade: seal() installs it after /spade leaves sys.path)

    for name in WARM_MODULES:
        importlib.import_module(name)
    harness.warm()
    h = harness.Harness()
    for name in extensions:
        mod = importlib.import_module(name)
        install = getattr(mod, "install", None)
        if callable(install):
            install(h, harness)
    if SPADE_DIR in sys.path:
        sys.path.remove(SPADE_DIR)

    def dispatch(line: str, _d: Callable[[str], str]=h.dispatch) -> str | bytes:
        r = _d(line)
        return r if len(r) < BYTES_FROM else r.encode()

    return dispatch, reseed


def reseed(_line: str) -> str:
    """SPADE's global generators continue an unpredictable stream; a restored copy would replay one."""
    import random

    random.seed()
    try:
        np: Any = sys.modules.get("numpy")
        if np is not None:
            np.random.seed()
    except Exception:
        pass
    return ""


def _cut_js() -> int:
    """Module globals that hold JavaScript objects (Pyodide's event-loop timers and the like) are the
    only handles Python has on the JS side: cut, so walking object graphs finds none."""
    cut = 0
    for mod in list(sys.modules.values()):
        d = getattr(mod, "__dict__", None)
        if not isinstance(d, dict):
            continue
        for k, v in list(d.items()):
            if "JsProxy" in type(v).__name__ and not isinstance(v, type):
                d[k] = None
                cut += 1
    return cut


def _ctypes_shim() -> None:
    """sympy (under math_verify) asks ctypes for the size of a C long at import; ctypes itself stays
    out of reach. Anything else a game asks of this stand-in raises an audit event the hook refuses
    and reports: the stand-in holds nothing of the hook's (a game reaches a function's defaults and
    closure), only sys.audit."""
    import types

    shim: Any = types.ModuleType("ctypes", "the workbench sandbox has no ctypes; only sizeof(c_long) is answered")

    class c_long:
        pass

    def sizeof(t: object) -> int:
        if t is c_long:
            return 4
        raise PermissionError("blocked by the workbench sandbox: ctypes")

    def refuse(name: str, _audit: Callable[..., None]=sys.audit) -> None:
        try:
            _audit("ctypes.getattr", name)
        except PermissionError:
            pass
        raise AttributeError("blocked by the workbench sandbox: ctypes")

    shim.c_long = c_long
    shim.sizeof = sizeof
    shim.__getattr__ = refuse
    sys.modules["ctypes"] = shim


def seal() -> None:
    """The walls, once the host has unregistered `js` and `pyodide_js`: JS handles cut, the audit hook
    installed (its reports go to fd 2, which child.ts onStderrLine reads, written with what it bound at
    install: nothing a game can replace, issue 46), ctypes answered by a stand-in. subprocess may be
    imported (sympy does, under math_verify): WebAssembly cannot start a process, and using it raises
    subprocess.Popen, which the hook refuses and reports like every other attempt."""
    import sandbox

    _cut_js()
    sandbox.install(READ_ROOTS, allowed_modules=("subprocess", "_posixsubprocess"), report_fd=2)
    _ctypes_shim()


def start_judge(call: Callable[[str], str]) -> Callable[[str], str]:
    """The audit's judge interpreter (never runs environment code): the harness with the audit
    command, which reaches the game's interpreter only through `call` (a line in, a line out)."""
    import audit_checks
    import harness

    j = harness.Harness()
    audit_checks.install_judge(j, harness, call)
    return j.dispatch
