"""In-interpreter guard for environment code: an audit hook (PEP 578) that refuses host access.

This is one layer, not the sandbox: Python code can defeat Python-level guards in ways an audit
hook cannot see, so the Pyodide runtime relies first on WebAssembly, an emptied `js` module, Node's
permission model and disallowed code generation, and the native runtime on resource limits and a
network namespace. What this layer adds is a clear PermissionError at the first attempt, in both.
Audit hooks cannot be removed once installed.
"""

import os
import sys

DENIED_PREFIXES = (
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "os.kill", "os.killpg",
    "os.remove", "os.rmdir", "os.rename", "os.mkdir", "os.chmod", "os.chown", "os.link", "os.symlink",
    "os.truncate", "os.utime", "os.chdir", "os.chflags", "os.setxattr", "os.removexattr", "os.startfile",
    "subprocess.", "pty.", "shutil.", "socket.", "ctypes.", "mmap.", "urllib.", "http.", "ftplib.",
    "smtplib.", "imaplib.", "poplib.", "nntplib.", "telnetlib.", "webbrowser.", "signal.pthread_kill",
    "resource.setrlimit", "resource.prlimit", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
    "builtins.input", "sys._current_frames", "sys.remote_exec", "winreg.", "_winapi.",
)
BLOCKED_MODULES = {
    "ctypes", "_ctypes", "js", "pyodide_js", "pyodide", "_pyodide", "_pyodide_core", "subprocess",
    "_posixsubprocess", "multiprocessing", "_multiprocessing", "socket", "_socket", "ssl", "_ssl",
    "mmap", "pty", "webbrowser", "micropip",
}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class SandboxViolation(PermissionError):
    pass


def install(read_roots, allowed_modules=()):
    """Refuse host access from here on. `read_roots` are directories whose files may be read
    (the interpreter's own library); everything else, and every write, is refused."""
    roots = tuple(os.path.join(os.path.realpath(r), "") for r in read_roots if r)
    allowed = set(allowed_modules)
    realpath = os.path.realpath
    fspath = os.fspath

    def readable(path):
        try:
            p = realpath(fspath(path))
        except Exception:
            return False
        return p.startswith(roots) or (p + os.sep) in roots

    def deny(event):
        raise SandboxViolation(f"blocked by the workbench sandbox: {event}")

    def hook(event, args):
        if event == "open":
            path, mode, flags = args
            if path is None or isinstance(path, int):
                deny("open(fd)")
            if isinstance(mode, str) and any(c in mode for c in "wax+"):
                deny(f"open for writing: {path!r}")
            if isinstance(flags, int) and flags & WRITE_FLAGS:
                deny(f"open for writing: {path!r}")
            if not readable(path):
                deny(f"open: {path!r}")
            return
        if event == "import":
            name = args[0] if args else ""
            if isinstance(name, str):
                top = name.split(".")[0]
                if top in BLOCKED_MODULES and top not in allowed:
                    deny(f"import {name}")
            return
        if event in ("os.listdir", "os.scandir"):
            path = args[0] if args else "."
            if isinstance(path, int) or not readable(path if path is not None else "."):
                deny(f"{event}: {path!r}")
            return
        if event.startswith(DENIED_PREFIXES):
            deny(event)

    sys.addaudithook(hook)
    # Modules already loaded before the hook stay reachable through sys.modules; drop the risky ones
    # so importing them again goes through the hook. (C code keeps its own references.)
    for name in list(sys.modules):
        if name.split(".")[0] in BLOCKED_MODULES and name.split(".")[0] not in allowed:
            sys.modules.pop(name, None)
