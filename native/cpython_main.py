"""Native CPython host for the harness: one JSON request per line on stdin, one reply per line out.

Started by core/runtime/native.ts as `python3 -s cpython_main.py '<json config>'`, possibly under
`unshare -rn` (no network). Applies what isolation a plain process can give itself: resource
limits, a scrubbed environment (done by the parent), stdin/stdout taken away from the game,
a per-call timer, and the audit hook of sandbox.py. It is less isolated than Pyodide.
"""

import json
import os
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    config = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    # The protocol gets private copies of fds 0/1; the game's stdin/stdout become /dev/null so
    # neither input() nor os.write(1, ...) can reach or corrupt the channel.
    proto_in = os.fdopen(os.dup(0), "r", encoding="utf-8", newline="\n")
    proto_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
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
        if name.endswith(".py") and stem.isidentifier() and stem not in ("harness", "sandbox", "cpython_main"):
            extensions.append(importlib.import_module(stem))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]

    applied = apply_limits(config)
    network = network_state()
    try:
        import numpy  # noqa: F401  (loaded before the guard; games get it injected as np)
    except Exception:
        pass
    import random  # noqa: F401
    import statistics  # noqa: F401
    import typing  # noqa: F401

    h = harness.Harness()
    for mod in extensions:
        if callable(getattr(mod, "install", None)):
            mod.install(h, harness)
    h.limits = applied
    h.network = network

    default_timeout = float(config.get("timeoutSec") or 30)

    def on_alarm(signum, frame):
        raise harness.CallTimeout()

    signal.signal(signal.SIGALRM, on_alarm)

    def before(timeout=None):
        signal.setitimer(signal.ITIMER_REAL, float(timeout or default_timeout))

    def after():
        signal.setitimer(signal.ITIMER_REAL, 0)

    h.before_call = before
    h.after_call = after

    base_ping = h.commands["ping"]

    def ping(hh, req):
        out = base_ping(hh, req)
        out["limits"] = applied
        out["network"] = network
        out["pid"] = os.getpid()
        return out

    h.register("ping", ping)

    roots = [p for p in sys.path if p and os.path.isdir(p) and os.path.abspath(p) != os.path.abspath(os.getcwd())]
    # Audit hook (issue 5): one "audit" command plays every check inside this process.
    sys.path.insert(0, HERE)
    import audit_checks

    sys.path.remove(HERE)
    audit_checks.install(h, harness)

    sandbox.install(roots)

    for line in proto_in:
        if not line.strip():
            continue
        reply = h.dispatch(line)
        proto_out.write(reply + "\n")
        proto_out.flush()


def apply_limits(config):
    applied = {}
    try:
        import resource
    except ImportError:
        return applied
    wanted = {
        "RLIMIT_CPU": config.get("cpuSec"),
        "RLIMIT_AS": (config.get("memoryMb") or 0) * 1024 * 1024 or None,
        "RLIMIT_FSIZE": 0,
        "RLIMIT_NPROC": 0 if config.get("noProcesses", True) else None,
        "RLIMIT_CORE": 0,
    }
    for name, value in wanted.items():
        if value is None or not hasattr(resource, name):
            continue
        which = getattr(resource, name)
        try:
            soft, hard = resource.getrlimit(which)
            new_hard = value if hard == resource.RLIM_INFINITY or value < hard else hard
            # CPU: a soft limit under the hard one so the kernel sends SIGXCPU before SIGKILL.
            new_soft = value
            resource.setrlimit(which, (new_soft, new_hard))
            applied[name] = value
        except (ValueError, OSError) as e:
            applied[name] = f"not applied: {e}"
    return applied


def network_state():
    """'isolated' when this process sits in a network namespace with nothing but loopback down."""
    try:
        import socket

        names = [n for _, n in socket.if_nameindex()]
    except Exception as e:
        return f"unknown ({type(e).__name__})"
    return "isolated" if set(names) <= {"lo"} else "host"


if __name__ == "__main__":
    main()
