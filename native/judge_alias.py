"""The `aliasing` check: a value reset() or step() returned that a later call changes.

A trainer that keeps what each call returned (a replay buffer, a transcript) must be able to trust
it: a game that hands out an object it keeps and changes afterwards (the same `info` list at every
step, appended to) rewrites the past. SPADE's own wrapper converts every return at once (str(obs),
info filtered to numbers), so SPADE's rollout is not hurt; any consumer that keeps the raw values
is. Gymnasium's env checker tests for data shared between calls for the same reason. A workbench
check of its own, never part of SPADE's verdict.
"""

from __future__ import annotations

from judge_channel import clip
from judge_play import script_for
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judge_context import Audit

SEED = 7
MAX_STEPS = 12


def check_aliasing(audit: Audit) -> Any:
    env = audit.fresh()
    acts = script_for(audit, env, min(audit.turns(env), MAX_STEPS))
    r = audit.x("returned", env=env.id, seed=SEED, actions=acts, limit=audit.call_limit)
    changed = [c for c in r.get("changed") or [] if isinstance(c, dict)]
    calls = [c for c in r.get("calls") or [] if isinstance(c, str)]
    stopped = r.get("stopped")
    if isinstance(stopped, dict) and not changed:
        # A hang or an exception: the first is this check's failure (Hang), the second belongs to
        # crash-on-action; either way what was played before it is all there is to judge.
        at = r.get("at") if isinstance(r.get("at"), str) else "step"
        label = "reset" if str(at).startswith("reset") else "step"
        index = int(at.split()[1]) - 1 if at.startswith("step ") and at.split()[1].isdigit() else None
        action = acts[index] if index is not None and index < len(acts) else None
        if "hang" in stopped or "load" in stopped:
            audit.outcome(label, stopped, action, SEED)
    if changed:
        c = changed[0]
        played = [a for a in acts[: _steps_before(c.get("changedBy"), len(acts))]]
        return audit.put(
            "aliasing", "fail",
            f"The {c.get('part')} returned by {c.get('returnedBy')} changed afterwards, at {c.get('changedBy')}: the game hands out an object it keeps changing, "
            "so what a trainer stored for an earlier step reads differently later (return a copy)",
            seed=SEED, actions=[clip(a, 200) for a in played], part=c.get("part"), returnedBy=c.get("returnedBy"), changedBy=c.get("changedBy"),
            expected=clip(c.get("expected", ""), 400), observed=clip(c.get("observed", ""), 400), changes=len(changed), line=audit.line_of("step"))
    followed, skipped = r.get("followed", 0), r.get("skipped", 0)
    extra = f"; {skipped} value(s) too large to follow" if skipped else ""
    audit.put("aliasing", "pass", f"Nothing reset() and {max(0, len(calls) - 2)} step(s) returned changed afterwards ({followed} mutable value(s) followed, seed {SEED}{extra})", seed=SEED, followed=followed)


def _steps_before(changed_by: Any, n: int) -> int:
    """How many of the script's actions were played up to the call that changed the value."""
    if isinstance(changed_by, str) and changed_by.startswith("step "):
        try:
            return min(n, int(changed_by.split()[1]))
        except ValueError:
            return n
    return n
