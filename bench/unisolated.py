"""The bench's unisolated baseline: the workbench's own harness and audit checks in ONE warm
CPython process, with no fork, no bubblewrap, no seccomp and no audit hook.

It exists only to be compared with: `audit.isolation_ratio` and the CPython play row divide the
isolated figure by what this process does with the same checks, the same environments and the same
requests. Everything but the isolation is kept: the same harness (its call timer included), the
same extensions, the same judge modules, each audit on a fresh executor harness and a fresh judge
harness, the same modules imported before the clock runs (numpy, math_verify). Nothing here is a
sandbox: it runs only the bench's own benign games.

Wire: one JSON request per line on stdin, one reply line on stdout (the harness's own replies).
`{"cmd": "audit", ...}` runs one whole audit; every other command goes to one long-lived harness
(load, then play), as a native session's process would answer it.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from types import ModuleType
from typing import Any

NATIVE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "native")


def extensions() -> list[ModuleType]:
    """The extension modules the fork server installs in every session's harness (cpython_main)."""
    import cpython_main

    return [importlib.import_module(n[:-3]) for n in sorted(os.listdir(NATIVE)) if n.endswith(".py") and cpython_main.is_extension(n[:-3])]


def session_harness(harness: ModuleType, exts: list[ModuleType]) -> Any:
    """A harness as a forked session gets it: extensions installed, the per-call timer on."""
    h = harness.Harness()
    for mod in exts:
        if callable(getattr(mod, "install", None)):
            mod.install(h, harness)
    alarm = harness.call_alarm(harness.CallTimeout)
    h.before_call = lambda timeout=None: alarm.arm(float(timeout or 120))
    h.after_call = alarm.disarm
    return h


def main() -> None:
    sys.path.insert(0, NATIVE)
    import harness

    exts = extensions()
    for mod in ("random", "statistics", "typing", "numpy", "math_verify"):
        try:
            importlib.import_module(mod)
        except Exception:
            pass
    harness.warm()
    checks = sys.modules["audit_checks"]
    plain = session_harness(harness, exts)
    for raw in sys.stdin.buffer:
        line = raw.decode("utf-8", "replace")
        if not line.strip():
            continue
        if json.loads(line).get("cmd") == "audit":
            executor = session_harness(harness, exts)
            judge = harness.Harness()
            checks.install_judge(judge, harness, executor.dispatch)
            reply = judge.dispatch(line)
        else:
            reply = plain.dispatch(line)
        # Written as a forked session's process writes its replies (host_lines.serve_lines).
        view = memoryview(reply.encode("utf-8", "replace") + b"\n")
        while view:
            view = view[os.write(1, view):]


if __name__ == "__main__":
    main()
