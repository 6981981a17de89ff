"""Audits every game given twice in this process (native CPython, no sandbox: our own fixtures
only), once as the judge does (operations batched into one crossing with Audit.seq, checks played
ahead) and once with every batched operation asked live, one crossing each. Prints one JSON object:
the games whose verdicts or evidence differ, the games whose interpreter saw a different sequence of
operations (a batch must never play one the checks would not ask for), and the crossings of each run.

Both runs get the same generators (the game's own `random`, numpy's global one), as in
played_ahead.py; a game whose two live runs differ anyway is listed as nondeterministic.
Usage: python batched_live.py NATIVE_DIR FILE...
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
played: list = []
real_ops = dict(audit_exec.OPS)
# What identifies an operation to the game: the operation and its arguments, not how it was batched
# (nor arguments left out that the operation reads as None or False, as `preseed` and `action`,
# nor the seed that the judge sends along with every call to label it: only reset reads it).
BATCHING = ("cmd", "probing", "when", "unless")


def logged(name, fn):
    def op(ex, req):
        if name not in ("seq", "ahead"):
            args = {k: v for k, v in req.items() if k not in BATCHING and v is not None and v is not False}
            if name != "reset":
                args.pop("seed", None)
            played.append([name, args])
        return fn(ex, req)

    return op


audit_exec.OPS.update({name: logged(name, fn) for name, fn in real_ops.items()})
batched_seq = audit_checks.Audit.seq
real_fresh = harness.fresh_module


def audit(source, batched):
    h = harness.Harness()
    audit_exec.install(h, harness)
    crossings = [0]

    def transport(line):
        crossings[0] += 1
        return h.dispatch(line)

    def fresh_module(name):
        m = real_fresh(name)
        m.seed(1234)
        return m

    harness.fresh_module = fresh_module
    if numpy is not None:
        numpy.random.seed(99)
    # Live: nothing is played in a batch, so every operation is asked for on its own.
    audit_checks.Audit.seq = batched_seq if batched else (lambda self, items: [None] * len(items))
    played.clear()
    try:
        r = audit_checks.run_audit(harness, transport, source, {"hint": "the answer is 4"})
    finally:
        harness.fresh_module = real_fresh
        audit_checks.Audit.seq = batched_seq
    r.pop("elapsedMs", None)
    for c in r["checks"]:
        if c["id"] == "timing":  # durations are measured, never the same twice (a first load of math_verify is slow)
            c["status"] = c["message"] = c["evidence"] = None
    return r, list(played), crossings[0]


out = {"files": 0, "differ": [], "playedOtherwise": [], "nondeterministic": [], "crossings": {"live": 0, "batched": 0}}
for path in sys.argv[2:]:
    source = open(path, encoding="utf-8").read()
    live, live_ops, live_n = audit(source, False)
    again, again_ops, _ = audit(source, False)
    if again != live or again_ops != live_ops:
        out["nondeterministic"].append(path)
        continue
    out["files"] += 1
    got, ops, n = audit(source, True)
    out["crossings"]["live"] += live_n
    out["crossings"]["batched"] += n
    if got != live:
        first = next((a, b) for a, b in zip(live["checks"], got["checks"]) if a != b) if len(live["checks"]) == len(got["checks"]) else (live, got)
        out["differ"].append({"file": path, "live": first[0], "batched": first[1]})
    if ops != live_ops:
        i = next((k for k, (a, b) in enumerate(zip(live_ops, ops)) if a != b), min(len(ops), len(live_ops)))
        out["playedOtherwise"].append({"file": path, "at": i, "live": live_ops[i:i + 2], "batched": ops[i:i + 2]})
print(json.dumps(out, default=repr))
