"""Native CPython host for the harness: a fork server that gives every environment its own process.

Started by core/runtime/forkServer.ts inside bubblewrap (core/runtime/osSandbox.ts: new user, pid,
network, ipc and uts namespaces, read-only binds of the interpreter only, a private /tmp) as
`python3 -s -E cpython_main.py '<json config>'`. This process never runs environment code: it
imports the harness and the modules games lean on (numpy) once, then forks one child per session.
A child serves that one session and is thrown away with it, so nothing a game does to its
interpreter (patched modules, harness internals, leaked globals) reaches another environment.

This process is the sandbox's pid 1 (bubblewrap --as-pid-1) and undumpable from its first line,
like every process forked from it: no game reads its memory or opens its descriptors through /proc.
Each child, before any environment code runs, applies resource limits, makes itself undumpable,
installs a seccomp filter (no new processes, no exec, no sockets, no ptrace, no file opened for
writing; signals, limits, priority and scheduling for itself only) and the audit hook of sandbox.py. bubblewrap and seccomp are the walls; the audit hook is
the third one and the detector: every refused attempt is reported on the child's own stderr pipe,
which only this process reads and tags with the session, so a game cannot speak for another.

Wire (lines, see forkServer.ts): in `O<sid> <config>` open, `S<sid> <request>` call, `K<sid>` kill,
`P` ping; out `Z <json>` server, `R<sid> <reply>`, `E<sid> <stderr line>`, `X<sid> <exit json>`.
"""

from __future__ import annotations

import json
import os
import sys

from host_forkserver import ForkServer
from host_limits import reseed_numpy
from host_lines import split_lines  # noqa: F401  (re-exported: tests/unit/runtime.forkServerLines.test.ts)
from host_seccomp import Seccomp

HERE = os.path.dirname(os.path.abspath(__file__))
# Not extensions: the harness and its harness_*.py modules, the guard, this host (cpython_main.py
# and its host_*.py modules), the audit judge's judge_*.py modules (imported by audit_checks.py) and
# the audit executor's exec_*.py modules (imported by audit_exec.py).
HOST_ONLY = ("harness", "sandbox", "cpython_main")
LIBRARY_PREFIXES = ("harness_", "host_", "judge_", "exec_")


def is_extension(stem: str) -> bool:
    """Whether native/<stem>.py may be an extension (a module with `install(h, harness)`)."""
    return stem.isidentifier() and stem not in HOST_ONLY and not stem.startswith(LIBRARY_PREFIXES)


def undumpable() -> None:
    """This process out of the reach of every other one of its uid, before it holds anything: games
    run as the same uid in the same namespaces, and a dumpable server let one read /proc/1/mem (other
    environments' audit requests, their sources, in its heap) and open its pipes through /proc/1/fd
    (other environments' stderr and sandbox reports, and the host's own lines). Undumpable, those and
    ptrace need CAP_SYS_PTRACE, which no process in the sandbox has. Forked children inherit it (each
    sets it again: host_session.apply_walls, host_zygote); exec would reset it, and nothing here execs."""
    try:
        import ctypes

        PR_SET_DUMPABLE = 4
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except Exception:  # off Linux: nothing to make undumpable (and no sandbox to share)
        pass


def main() -> None:
    undumpable()
    config = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    proto_in, proto_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)

    sys.path.insert(0, HERE)
    import importlib

    import harness
    import sandbox

    extensions = []
    for name in sorted(os.listdir(HERE)):
        stem = name[:-3]
        if name.endswith(".py") and is_extension(stem):
            extensions.append(importlib.import_module(stem))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
    # Loaded once here, shared copy-on-write by every child. math_verify (SPADE's game prompt imports
    # it) pulls in sympy, which asks ctypes a question at import: answered here, before any guard.
    preload = config.get("preload")
    preload = [m for m in preload if isinstance(m, str)] if isinstance(preload, list) else ["numpy", "math_verify"]
    for mod in ["random", "statistics", "typing", *preload]:
        try:
            importlib.import_module(mod)
        except Exception:
            pass
    # numpy's first seed() imports and builds its entropy machinery (20 ms); done once here. The
    # server reseeds again before each session's fork (ForkServer.spawn), so no two share a stream.
    reseed_numpy()

    seccomp = Seccomp.build() if config.get("seccomp", True) else None
    roots = [p for p in sys.path if p and os.path.isdir(p)] + [HERE]
    server = ForkServer(proto_in, proto_out, config, harness, sandbox, extensions, seccomp, roots)
    # Everything a child needs is made here once and inherited (a harness no game has touched,
    # libc for prctl, the network facts): a child's own start-up is then only its walls.
    server.prepare()
    import gc

    gc.freeze()  # objects made so far stay out of the collector: forked children share their pages
    server.serve()


if __name__ == "__main__":
    main()
