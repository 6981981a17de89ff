"""In-interpreter guard for environment code: an audit hook (PEP 578) that refuses host access.

This is the third wall and the detector, never the wall: the native runtime's walls are
bubblewrap's namespaces and a seccomp filter (native/host_seccomp.py), Pyodide's are WebAssembly,
an emptied `js` module and Node's permission model. What this layer adds is a clear PermissionError
at the first attempt, and a report of every attempt (the `sandbox` audit check's evidence).

Everything the hook needs is captured in its closure when it is installed: patching this module's
globals, `os.path` or builtins afterwards changes nothing it decides. Audit hooks cannot be removed.
"""

from __future__ import annotations

import os
import sys
from typing import Any

DENIED_PREFIXES = (
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "os.kill", "os.killpg",
    "os.remove", "os.rmdir", "os.rename", "os.mkdir", "os.chmod", "os.chown", "os.link", "os.symlink",
    "os.truncate", "os.utime", "os.chdir", "os.chflags", "os.setxattr", "os.removexattr", "os.startfile",
    "os.mkfifo", "os.mknod", "os.unlink", "os.replace", "os.pidfd_open",
    "subprocess.", "pty.", "shutil.", "socket.", "ctypes.", "mmap.", "urllib.", "http.", "ftplib.",
    "smtplib.", "imaplib.", "poplib.", "nntplib.", "telnetlib.", "webbrowser.", "signal.pthread_kill",
    "resource.setrlimit", "resource.prlimit", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
    "builtins.input", "sys._current_frames", "sys.remote_exec", "winreg.", "_winapi.", "sys.addaudithook",
    "sys.setprofile", "sys.settrace", "cpython.PyInterpreterState",
)
BLOCKED_MODULES = frozenset({
    "ctypes", "_ctypes", "js", "pyodide_js", "pyodide", "_pyodide", "_pyodide_core", "subprocess",
    "_posixsubprocess", "multiprocessing", "_multiprocessing", "socket", "_socket", "ssl", "_ssl",
    "mmap", "pty", "webbrowser", "micropip", "cpython_main", "fcntl", "termios",
    # the workbench's own: already loaded where they are used, so only a game's import reaches here
    "harness", "harness_values", "harness_loader", "harness_output", "harness_tool_base", "audit_exec", "audit_checks", "sandbox",
}) | frozenset(
    # ... and every other module beside this one (the host's host_*.py, the audit's modules), read
    # once at import, before any guard: a module added to native/ is refused to games without a list.
    name[:-3] for name in os.listdir(os.path.dirname(os.path.abspath(__file__))) if name.endswith(".py")
)
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class SandboxViolation(PermissionError):
    pass


def _normalize(path: str, cwd: Any) -> Any:
    """Lexical absolute path (str methods only: nothing here can be patched by a game)."""
    if not path.startswith("/"):
        path = cwd + "/" + path
    parts: list[Any] = []
    for p in path.split("/"):
        if p == "" or p == ".":
            continue
        if p == "..":
            if parts:
                parts.pop()
            continue
        parts.append(p)
    return "/" + "/".join(parts)


def risky_loaded(allowed_modules: Any=()) -> Any:
    """The loaded modules a game must not reach through sys.modules (install drops them)."""
    allowed = frozenset(allowed_modules)
    return tuple(name for name in list(sys.modules) if name.split(".")[0] in BLOCKED_MODULES and name.split(".")[0] not in allowed)


def install(read_roots: Any, allowed_modules: Any=(), report: Any=None, loaded: Any=None) -> None:
    """Refuse host access from here on. `read_roots` are directories whose files may be read
    (the interpreter's own library); everything else, and every write, is refused. `report`, if
    given, is called with {event, detail} for each refused attempt before the error is raised.
    `loaded`: risky_loaded() as computed before (by a fork server whose modules do not change)."""
    normalize = _normalize
    cwd = normalize(os.getcwd(), "/")
    roots = tuple(normalize(r, cwd).rstrip("/") + "/" for r in read_roots if r)
    allowed = frozenset(allowed_modules)
    blocked = BLOCKED_MODULES
    denied = DENIED_PREFIXES
    write_flags = WRITE_FLAGS
    violation = SandboxViolation
    _str, _int, _bytes, _isinstance, _repr, _type = str, int, bytes, isinstance, repr, type
    _report = report

    def readable(path: Any) -> Any:
        if _isinstance(path, _bytes):
            try:
                path = path.decode("utf-8", "replace")
            except Exception:
                return False
        if not _isinstance(path, _str):
            try:
                path = os.fspath(path)
            except Exception:
                return False
            if not _isinstance(path, _str):
                return False
        p = normalize(path, cwd)
        return (p + "/").startswith(roots)

    def deny(event: Any, detail: Any="") -> None:
        if _report is not None:
            try:
                _report({"event": event, "detail": detail[:300]})
            except Exception:
                pass
        raise violation(f"blocked by the workbench sandbox: {event}{': ' + detail if detail else ''}")

    def hook(event: Any, args: Any) -> None:
        if event == "open":
            path, mode, flags = args
            if path is None or _isinstance(path, _int):
                deny("open(fd)", _repr(path))
            if _type(path) is _str and _type(mode) is _str and mode == "rb" and _type(flags) is _int and flags == 0 and path[:1] == "<" and path[-1:] == ">" and "/" not in path:
                # CPython's parser looking up a SyntaxError's line in the file the code names (a C
                # fopen: mode "rb", no flags; every open() from Python has flags, O_CLOEXEC at least).
                # A pseudo-file (the harness's "<env>", exec's "<string>") is no file: refused as
                # ever, but not reported. Compiling was asked for (of the source, by the harness),
                # not a read: a syntax error is SPADE's load failure, never a sandbox attempt.
                raise violation("not a file: " + path)
            if (_isinstance(mode, _str) and ("w" in mode or "a" in mode or "x" in mode or "+" in mode)) or (_isinstance(flags, _int) and flags & write_flags):
                deny("open for writing", _repr(path))
            if not readable(path):
                deny("open", _repr(path))
            return
        if event == "import":
            name = args[0] if args else ""
            if _isinstance(name, _str):
                top = name.split(".")[0]
                if top in blocked and top not in allowed:
                    deny("import", name)
            return
        if event == "os.listdir" or event == "os.scandir":
            path = args[0] if args else "."
            if _isinstance(path, _int) or not readable(path if path is not None else "."):
                deny(event, _repr(path))
            return
        if event.startswith(denied):
            deny(event, _repr(args)[:200])

    sys.addaudithook(hook)
    # Making a fifo or a device node raises no audit event: report the attempt from a wrapper (the
    # seccomp filter refuses the call itself in native runs; Pyodide's file system is its own).
    for mod in (os, sys.modules.get("posix")):
        for name in ("mkfifo", "mknod"):
            real = getattr(mod, name, None) if mod is not None else None
            if real is None or getattr(real, "_spade_guard", False):
                continue

            def guarded(*args: Any, _name: Any=name, _real: Any=real, **kw: Any) -> None:
                deny("os." + _name, _repr(args)[:200])

            guarded._spade_guard = True  # type: ignore[attr-defined]
            setattr(mod, name, guarded)
    # Modules already loaded before the hook stay reachable through sys.modules; drop the risky ones
    # so importing them again goes through the hook. (C code keeps its own references.)
    for name in risky_loaded(allowed_modules) if loaded is None else loaded:
        sys.modules.pop(name, None)
