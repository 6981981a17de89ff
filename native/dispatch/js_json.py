"""
Values written as JavaScript's JSON.stringify writes them (after JSON.parse): what the workbench
sends and compares byte for byte (a solution()'s actions, a model request's body). Python's json
module differs in numbers (1.0, 1e-07, 1.5e+16) and in the order of integer-like keys.
"""
# Hints stay unevaluated: a cluster node's python may be older than the one mypy checks for.
from __future__ import annotations

import json
from typing import Any


def js_number(x: float | int) -> str:
    """A number as JavaScript's JSON.stringify writes it (shortest round trip, its exponent rules)."""
    if isinstance(x, int) and abs(x) <= 2 ** 53:
        return str(x)
    f = float(x)
    if f != f or f in (float("inf"), float("-inf")):
        return "null"
    if f == int(f) and abs(f) < 2 ** 53:
        return str(int(f))
    sign = "-" if f < 0 else ""
    mant, _, exp = repr(abs(f)).partition("e")
    whole, _, frac = mant.partition(".")
    every = whole + frac
    digits = every.lstrip("0")
    # The value is 0.DIGITS x 10^n.
    n = len(whole) + (int(exp) if exp else 0) - (len(every) - len(digits))
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        out = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e > 0 else "-") + str(abs(e))
    return sign + out


def _index_key(k: str) -> bool:
    return k.isdigit() and (k == "0" or not k.startswith("0")) and int(k) < 2 ** 32 - 1


def js_json(v: Any) -> str:
    """JSON.stringify(JSON.parse(json.dumps(v))): what the workbench writes for a solution() value."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return js_number(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ",".join(js_json(x) for x in v) + "]"
    if isinstance(v, dict):
        # A JavaScript object lists integer-like keys first, ascending, then the rest in order.
        keys = sorted((k for k in v if _index_key(k)), key=int) + [k for k in v if not _index_key(k)]
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + js_json(v[k]) for k in keys) + "}"
    return json.dumps(v)
