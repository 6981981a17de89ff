"""Audits every game given twice in this process (native CPython, no sandbox: our own fixtures
only), once with the checks that the executor can play ahead played ahead (Audit.ahead_of, native/judge_context.py:
the executor runs the same check functions, native/exec_ahead.py) and once asking every operation live, and prints what differs as one JSON object.

Both runs get the same generators (the game's own `random`, numpy's global one) so that a game that
draws from them draws the same; a game whose two live runs differ anyway (entropy it reads itself)
is listed as nondeterministic and not compared.
Usage: python played_ahead.py NATIVE_DIR FILE...
"""

import json
import os
import sys

sys.path.insert(0, os.path.abspath(sys.argv[1]))
import audit_checks  # noqa: E402
import audit_exec  # noqa: E402
import harness  # noqa: E402

try:
    import numpy
except ImportError:
    numpy = None

harness.warm()
stats = {"taken": 0, "mismatches": 0, "aheadCalls": 0}
per_file = {"live": 0, "left": 0}
live_x = audit_checks.Audit.x
live_ahead_of = audit_checks.Audit.ahead_of
live_played_ahead = audit_checks.Audit.played_ahead


def counting_x(self, op, **args):
    if self.ahead:
        want, _got = self.ahead[0]
        stats["taken" if want == {"op": op, **args} else "mismatches"] += 1
    elif getattr(self, "in_ahead", False):
        per_file["live"] += 1  # asked live inside a check played ahead: the play stopped short
    return live_x(self, op, **args)


def counting_ahead_of(self, fn, args):
    stats["aheadCalls"] += 1
    return live_ahead_of(self, fn, args)


def counting_played_ahead(A, fn, *args):
    A.ahead_of(fn, args)
    A.in_ahead = True
    try:
        return fn(A, *args)
    finally:
        per_file["left"] += len(A.ahead)  # played but never asked for: an operation too many
        A.ahead.clear()
        A.in_ahead = False


audit_checks.Audit.x = counting_x
audit_checks.Audit.played_ahead = counting_played_ahead
real_fresh = harness.fresh_module


def audit(source, ahead):
    h = harness.Harness()
    audit_exec.install(h, harness)

    def fresh_module(name):
        m = real_fresh(name)
        m.seed(1234)
        return m

    harness.fresh_module = fresh_module
    if numpy is not None:
        numpy.random.seed(99)
    audit_checks.Audit.ahead_of = counting_ahead_of if ahead else (lambda self, fn, args: None)
    try:
        r = audit_checks.run_audit(harness, h.dispatch, source, {"hint": "the answer is 4"})
    finally:
        harness.fresh_module = real_fresh
        audit_checks.Audit.ahead_of = live_ahead_of
    r.pop("elapsedMs", None)
    for c in r["checks"]:
        if c["id"] == "timing":  # durations are measured, never the same twice (a first load of math_verify is slow)
            c["status"] = c["message"] = c["evidence"] = None
    return r


out = {"files": 0, "differ": [], "nondeterministic": [], "short": {}, "over": {}}
for path in sys.argv[2:]:
    source = open(path, encoding="utf-8").read()
    live = audit(source, False)
    if audit(source, False) != live:
        out["nondeterministic"].append(path)
        continue
    out["files"] += 1
    per_file.update(live=0, left=0)
    ahead = audit(source, True)
    if per_file["live"]:
        out["short"][path] = per_file["live"]
    if per_file["left"]:
        out["over"][path] = per_file["left"]
    if ahead != live:
        first = next((a, b) for a, b in zip(live["checks"], ahead["checks"]) if a != b) if len(live["checks"]) == len(ahead["checks"]) else (live, ahead)
        out["differ"].append({"file": path, "live": first[0], "ahead": first[1]})
out.update(stats)
print(json.dumps(out))
