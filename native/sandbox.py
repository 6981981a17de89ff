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
# The exit status of a process whose report descriptor was closed or replaced behind the hook's back.
CHANNEL_LOST = 86
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


# Refusals are raised as PermissionError itself: a class of this module could be reached from the
# exception a game catches and given a Python __new__/__init__, which would then run inside the hook.
SandboxViolation = PermissionError


def _normalize(path: str, cwd: Any) -> Any:
    """Lexical absolute path of an exact str (its methods are the builtin type's: nothing patchable)."""
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


def _audit_stub(event: str) -> Any:
    """A function that raises the audit event `event` with its arguments: the hook refuses and
    reports it. It holds nothing of the hook's, so it is all a game can reach of this module."""
    def stub(*args: Any, _audit: Any=sys.audit, _event: Any=event, **kw: Any) -> Any:
        _audit(_event, *args)
        raise PermissionError("blocked by the workbench sandbox: " + _event)
    return stub


def _fd_stubs() -> Any:
    """os.close, os.dup2, os.closerange as the game sees them: each asks the hook (an audit event)
    to do the call, so the real functions stay in the hook's closure, out of the game's reach."""
    def close(fd: Any, _audit: Any=sys.audit) -> None:
        _audit("spade.fd", "close", fd)

    def dup2(fd: Any, fd2: Any, inheritable: Any=True, _audit: Any=sys.audit) -> Any:
        _audit("spade.fd", "dup2", fd, fd2, 1 if inheritable else 0)
        return fd2

    def closerange(fd_low: Any, fd_high: Any, _audit: Any=sys.audit) -> None:
        _audit("spade.fd", "closerange", fd_low, fd_high)

    return close, dup2, closerange


def risky_loaded(allowed_modules: Any=()) -> Any:
    """The loaded modules a game must not reach through sys.modules (install drops them)."""
    allowed = frozenset(allowed_modules)
    return tuple(name for name in list(sys.modules) if name.split(".")[0] in BLOCKED_MODULES and name.split(".")[0] not in allowed)


def install(read_roots: Any, allowed_modules: Any=(), report: Any=None, loaded: Any=None, report_fd: Any=None) -> None:
    """Refuse host access from here on. `read_roots` are directories whose files may be read
    (the interpreter's own library); everything else, and every write, is refused. Each refused
    attempt is reported before the error is raised: as a line `@sandbox-violation {json}` written
    to `report_fd` (what the hosts use), or by calling `report` with {event, detail} (tests).
    `loaded`: risky_loaded() as computed before (by a fork server whose modules do not change).
    A host's own refusal (Pyodide's ctypes stand-in) raises an audit event this hook refuses.

    The detector must not be blinded from inside the game (issue 46): nothing here runs code the
    game can reach. Every function it uses is bound now, before any game runs (os.write, the JSON
    escaper, str's own methods); every value a game hands in (a path, a module name, a mode, an
    fd) is first copied to its exact builtin type by the base type's C method (str.__str__ of a str
    subclass copies its characters without calling anything of the subclass), so a subclass's
    split/startswith/__eq__/__hash__/__repr__/__fspath__/__index__ is never called. A game's code
    running inside the hook could also reach the hook's frame (sys._getframe) and, from 3.13 on,
    rebind its closure's cells through frame.f_locals."""
    cwd = _normalize(os.getcwd(), "/")
    roots = tuple(_normalize(r, cwd).rstrip("/") + "/" for r in read_roots if r)
    allowed = frozenset(allowed_modules)
    blocked = BLOCKED_MODULES
    denied = DENIED_PREFIXES
    write_flags = WRITE_FLAGS
    refused = PermissionError
    _str, _int, _bytes, _bytearray, _memoryview, _tuple, _list, _type, _len = str, int, bytes, bytearray, memoryview, tuple, list, type, len
    _repr, _TypeError, _Exception = repr, TypeError, Exception  # module globals are a game's to change
    str_copy, int_copy, bytes_copy, bytearray_copy, mv_bytes = str.__str__, int.__int__, bytes.__bytes__, bytearray.copy, memoryview.tobytes
    decode, startswith, endswith, split, join, find, rstrip = bytes.decode, str.startswith, str.endswith, str.split, str.join, str.find, str.rstrip
    mro_of = type.__dict__["__mro__"].__get__
    dict_of = type.__dict__["__dict__"].__get__
    name_of = type.__dict__["__name__"].__get__
    write = os.write
    import _json
    escape = _json.encode_basestring_ascii
    fd = report_fd
    callback = report
    # The reports' way out is a descriptor, and descriptors are a game's to close or replace: the
    # stand-ins below refuse (and report) closing or replacing it, and before each report the hook
    # checks it is still the one it was; when it is not (a way around the stand-ins), nothing can
    # be reported any more, and the process ends rather than run on unwatched (the audit then fails).
    fstat, real_close, real_dup2, real_closerange, exit_now = os.fstat, os.close, os.dup2, os.closerange, os._exit
    get_blocking: Any = getattr(os, "get_blocking", None)
    set_blocking: Any = getattr(os, "set_blocking", None)
    channel: Any = None
    lost = CHANNEL_LOST
    if fd is not None:
        st = fstat(fd)
        channel = (st.st_dev, st.st_ino)
    # pathlib's paths: the only objects (besides str and bytes) whose path is read, and only while
    # their type resolves every method a conversion touches to pathlib's own; the path is then the
    # `_str` slot that conversion (just done by the C code, before this hook) left. Anything else
    # would have to call the object's __fspath__ a second time, and a second answer can differ.
    trusted_paths: tuple[Any, ...] = ()
    trusted_methods: tuple[tuple[str, Any], ...] = ()
    str_slot: Any = None
    try:
        import pathlib
        pure = pathlib.PurePath
        trusted_paths = tuple(c for c in (pathlib.PurePosixPath, pathlib.PosixPath, pathlib.Path) if c is not None)
        trusted_methods = (("__fspath__", pure.__dict__["__fspath__"]), ("__str__", pure.__dict__["__str__"]),
                           ("__getattribute__", object.__getattribute__), ("__setattr__", object.__setattr__))
        str_slot = pure.__dict__["_str"].__get__
    except _Exception:
        trusted_paths = ()

    def exact(x: Any) -> Any:
        """x as an exact str, bytes or int (None if it is none of those), by the base type's C copy."""
        t = _type(x)
        if t is _str or t is _bytes or t is _int:
            return x
        copies: Any = ((_str, str_copy), (_bytes, bytes_copy), (_int, int_copy), (_bytearray, bytearray_copy), (_memoryview, mv_bytes))
        for base, copy in copies:
            try:
                v: Any = copy(x)  # a TypeError unless x really is one (whatever its __class__ says)
            except _TypeError:
                continue
            except _Exception:
                return None
            return _bytes(v) if base is _bytearray else v
        return None

    def describe(x: Any, depth: Any=0) -> Any:
        """What a game handed in, for the report, without calling any of its methods."""
        v = exact(x)
        if v is not None:
            try:
                return _repr(v)[:200]  # exact builtins: their repr is C (a huge int's raises)
            except _Exception:
                return "<" + name_of(_type(v)) + ">"
        t = _type(x)
        if (t is _tuple or t is _list) and depth < 2:
            inner = join(", ", [describe(i, depth + 1) for i in x[:8]])
            return ("(" + inner + ")") if t is _tuple else ("[" + inner + "]")
        if x is None or x is True or x is False:
            return _repr(x)
        try:
            return "<" + str_copy(name_of(t))[:60] + " object>"
        except _Exception:
            return "<object>"

    def path_of(x: Any) -> Any:
        """The path a C call just used for x, as an exact str, or None when it cannot be known."""
        v = exact(x)
        if v is None:
            t = _type(x)
            if t not in trusted_paths:
                return None
            mro = mro_of(t)
            for klass in mro:
                for key in dict_of(klass):
                    if _type(key) is not _str:
                        return None  # a lookup below could call such a key's __eq__
            for name, fn in trusted_methods:
                for klass in mro:
                    d = dict_of(klass)
                    if name in d:
                        if d[name] is not fn:
                            return None
                        break
            try:
                v = exact(str_slot(x, t))
            except _Exception:
                return None
            if _type(v) is not _str:
                return None
        if _type(v) is _bytes:
            try:
                v = decode(v, "utf-8", "surrogateescape")
            except _Exception:
                return None
        return v if _type(v) is _str else None

    def normalize(path: Any) -> Any:
        if not startswith(path, "/"):
            path = cwd + "/" + path
        parts: Any = []
        for p in split(path, "/"):
            if p == "" or p == ".":
                continue
            if p == "..":
                if parts:
                    parts.pop()
                continue
            parts.append(p)
        return "/" + join("/", parts)

    def readable(path: Any) -> Any:
        p = path_of(path)
        if p is None or find(p, "\0") >= 0:
            return False
        return startswith(normalize(p) + "/", roots)

    def send(event: Any, detail: Any) -> None:
        if fd is not None:
            line = ("\n@sandbox-violation {\"event\": " + escape(event) + ", \"detail\": " + escape(detail) + "}\n").encode("ascii")
            try:
                st = fstat(fd)
                same = (st.st_dev, st.st_ino) == channel
                if same and get_blocking is not None:
                    try:
                        if not get_blocking(fd):
                            set_blocking(fd, True)  # a game's os.set_blocking(2, False) would drop a report on a full pipe
                    except _Exception:
                        pass
                if same:
                    write(fd, line)  # one line under PIPE_BUF: written whole
            except _Exception:
                same = False
            if not same:
                exit_now(lost)  # the report cannot go out: end rather than run on unwatched
        if callback is not None:
            callback({"event": event, "detail": detail})

    def deny(event: Any, detail: Any="") -> None:
        event = exact(event) if _type(event) is not _str else event
        detail = exact(detail) if _type(detail) is not _str else detail
        event = event if _type(event) is _str else "?"
        detail = detail[:300] if _type(detail) is _str else ""
        try:
            send(event, detail)
        except _Exception:
            pass
        raise refused("blocked by the workbench sandbox: " + event + (": " + detail if detail else ""))

    def hook(event: Any, args: Any) -> None:
        if _type(args) is not _tuple:
            return
        if event == "open":
            if _len(args) != 3:
                return
            path, mode, flags = args
            if path is None or _type(exact(path)) is _int:
                deny("open(fd)", describe(path))
            mode, flags = exact(mode), exact(flags)
            if _type(path) is _str and _type(mode) is _str and mode == "rb" and _type(flags) is _int and flags == 0 and path[:1] == "<" and path[-1:] == ">" and "/" not in path:
                # CPython's parser looking up a SyntaxError's line in the file the code names (a C
                # fopen: mode "rb", no flags; every open() from Python has flags, O_CLOEXEC at least).
                # A pseudo-file (the harness's "<env>", exec's "<string>") is no file: refused as
                # ever, but not reported. Compiling was asked for (of the source, by the harness),
                # not a read: a syntax error is SPADE's load failure, never a sandbox attempt.
                raise refused("not a file: " + path)
            if (_type(mode) is _str and ("w" in mode or "a" in mode or "x" in mode or "+" in mode)) or (_type(flags) is _int and flags & write_flags):
                deny("open for writing", describe(path))
            if not readable(path):
                deny("open", describe(path))
            return
        if event == "import":
            name = exact(args[0]) if args else ""
            if _type(name) is not _str:
                deny("import", describe(args[0]))
            top = split(name, ".")[0]
            if top in blocked and top not in allowed:
                deny("import", name)
            return
        if event == "os.listdir" or event == "os.scandir":
            path = args[0] if args else "."
            if path is None:
                path = "."
            if _type(exact(path)) is _int or not readable(path):
                deny(event, describe(path))
            return
        if event == "spade.fd":
            fd_call(args)
            return
        if startswith(event, denied):
            deny(event, describe(args))

    def fd_call(args: Any) -> Any:
        """os.close, os.dup2 and os.closerange, done here for their stand-ins (which hold nothing
        real): refused when they would close or replace the reports' descriptor."""
        op = exact(args[0]) if args else None
        nums = [exact(a) for a in args[1:]]
        for n in nums:
            if _type(n) is not _int:
                raise _TypeError("an integer is required")
        if op == "close" and _len(nums) == 1:
            if nums[0] == fd:
                deny("os.close", describe(nums[0]))
            return real_close(nums[0])
        if op == "dup2" and _len(nums) == 3:
            if nums[1] == fd:
                deny("os.dup2", describe((nums[0], nums[1])))
            return real_dup2(nums[0], nums[1], nums[2] != 0)
        if op == "closerange" and _len(nums) == 2:
            if fd is not None and nums[0] <= fd < nums[1]:
                deny("os.closerange", describe((nums[0], nums[1])))
            return real_closerange(nums[0], nums[1])
        raise _TypeError("not a descriptor call")

    sys.addaudithook(hook)
    # Making a fifo or a device node raises no audit event: the stand-in raises one, which this hook
    # refuses and reports (the seccomp filter refuses the call itself in native runs; Pyodide's file
    # system is its own). The stand-in holds nothing of the hook's (a game can reach a function's
    # closure, defaults and code from the function): only sys.audit, and never the real call.
    for mod in (os, sys.modules.get("posix")):
        for name in ("mkfifo", "mknod"):
            if mod is None or getattr(mod, name, None) is None:
                continue
            setattr(mod, name, _audit_stub("os." + name))
        if fd is not None and mod is not None:
            for name, stub in zip(("close", "dup2", "closerange"), _fd_stubs()):
                setattr(mod, name, stub)
    # Modules already loaded before the hook stay reachable through sys.modules; drop the risky ones
    # so importing them again goes through the hook. (C code keeps its own references.)
    for name in risky_loaded(allowed_modules) if loaded is None else loaded:
        sys.modules.pop(name, None)
