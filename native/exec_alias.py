"""The aliasing check's executor half: what reset() and step() returned, read again after later calls.

A game that returns an object it keeps (the same `info` list every step, say) and changes it
afterwards makes what a trainer stored for an earlier step read differently later; Gymnasium's
env checker tests environments for data shared between calls in the same spirit. Only the game's
interpreter holds the returned objects, so the episode is played here, one crossing: each
returned part that is not an immutable scalar is encoded when it comes back and again after every
later call. Nothing here judges (judge_alias does); a game that patches this can only change how
its own returns appear.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from exec_values import _ended, _tagged

_TEXT = json.JSONEncoder(sort_keys=True, default=str).encode
_SCALARS = (type(None), bool, int, float, complex, str, bytes)
_PARTS = {2: ("observation", "info"), 5: ("observation", "reward", "terminated", "truncated", "info")}
# A part whose text is longer than this is not followed (re-encoding it after every call would cost
# more than the check is worth); the answer says how many were left out.
MAX_FOLLOWED_CHARS = 1 << 16
MAX_CHANGES = 10


class ReturnedValues:
    """The Executor's operation `returned` (a mixin, like exec_ahead.PlayedAhead)."""

    harness: Any
    call: Callable[..., Any]
    env: Callable[..., Any]

    def op_returned(self, req: dict[str, Any]) -> Any:
        """reset(seed), the actions up to the end of the episode (judged as the checks judge it),
        then reset(seed) again. Answers {v: None, calls: [labels], changed: [{part, returnedBy,
        changedBy, action?, expected, observed}], followed, skipped, stopped?: the tagged outcome of a
        call that did not return}."""
        env, _ns = self.env(req)
        harness, limit, seed = self.harness, req["limit"], req.get("seed")
        actions = [a for a in req.get("actions") or [] if isinstance(a, str)]
        kept: list[list[Any]] = []  # [label, part, object, text at return, changed?]
        changed: list[dict[str, Any]] = []
        calls: list[str] = []
        skipped = 0

        def text(v: Any) -> Any:
            try:
                return _TEXT(harness.plain(v))
            except Exception:
                return None

        def keep(label: str, value: Any) -> int:
            parts = _PARTS.get(len(value)) if type(value) is tuple else None
            items = list(zip(parts, value)) if parts else [("return value", value)]
            n = 0
            for part, v in items:
                if type(v) in _SCALARS:
                    continue
                t = text(v)
                if t is None or len(t) > MAX_FOLLOWED_CHARS:
                    n += 1
                    continue
                kept.append([label, part, v, t, False])
            return n

        def reread(by: str, action: Any) -> None:
            for k in kept:
                if k[4]:
                    continue
                now = text(k[2])
                if now is not None and now != k[3]:
                    k[4] = True
                    if len(changed) < MAX_CHANGES:
                        changed.append({"returnedBy": k[0], "part": k[1], "changedBy": by, "action": action, "expected": k[3][:2000], "observed": now[:2000]})

        def after(label: str, action: Any) -> Any:
            """Reads everything kept again (inside a call: describing a value may run game code)."""
            calls.append(label)
            got = self.call(reread, label, action, limit=limit)
            return got if "v" not in got else None

        def answer(**extra: Any) -> Any:
            return {"v": None, "calls": calls, "changed": changed, "followed": len(kept), "skipped": skipped, **extra}

        plan: list[tuple[str, Any]] = [("reset", None)] + [(f"step {i + 1}", a) for i, a in enumerate(actions)]
        for label, action in plan + [("reset again", None)]:
            r = self.call(lambda: env.reset(seed=seed), limit=limit) if action is None else self.call(env.step, action, limit=limit)
            if "v" not in r:
                return answer(stopped=_tagged(r, harness), at=label)
            stop = after(label, action)
            if stop is not None:
                return answer(stopped=stop, at=label)
            if label == "reset again":
                break
            skipped += keep(label, r["v"])
            if action is not None and _ended(_tagged({"v": r["v"]}, harness)["v"]):
                # The episode is over: what the trainer kept must survive the next reset too.
                r = self.call(lambda: env.reset(seed=seed), limit=limit)
                if "v" not in r:
                    return answer(stopped=_tagged(r, harness), at="reset again")
                stop = after("reset again", None)
                return answer(**({"stopped": stop, "at": "reset again"} if stop else {}))
        return answer()

    def op_links(self, req: dict[str, Any]) -> Any:
        """Instance attributes that are the very object a module global holds, itself or inside
        it (dict values, list items, two levels down): [[attribute, global, path]]. A leak through
        such an attribute changes the global (issue 46: self.cards was the list cached in a
        module-level dict, and a wrong guess removed a card from it); the reset-leak check names
        the attribute's lines with the global's. Exact types only: nothing here runs game code."""
        env, ns = self.env(req)
        where: dict[int, tuple[str, str]] = {}

        def walk(v: Any, key: str, path: str, depth: int) -> None:
            t = type(v)
            if t in _SCALARS or depth > 2 or len(where) > 10_000:
                return
            if t in (dict, list, set) or depth > 0:
                where.setdefault(id(v), (key, path))
            if t is dict:
                for k, x in list(v.items())[:1000]:
                    walk(x, key, f"{path}[{k!r}]" if type(k) in (str, int) else f"{path}[...]", depth + 1)
            elif t in (list, tuple):
                for i, x in enumerate(list(v)[:1000]):
                    walk(x, key, f"{path}[{i}]", depth + 1)

        for g, v in list(ns.items()):
            if type(g) is str and not g.startswith("__") and type(v) in (dict, list, set, tuple):
                walk(v, f"global {g}", g, 0)
        out = []
        try:
            attrs = object.__getattribute__(env, "__dict__")
        except Exception:
            attrs = {}
        if type(attrs) is not dict:
            attrs = {}
        for k, v in list(attrs.items()):
            hit = where.get(id(v)) if type(v) not in _SCALARS else None
            if hit is not None:
                out.append([f"self.{k}", hit[0], hit[1]])
        return {"v": out}
