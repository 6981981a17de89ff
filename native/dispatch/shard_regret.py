"""
A shard of a regret sweep, run where a cluster runs it (a Ray task, a Slurm array task): each item
is one episode (an environment version, a seed, an arm) played by a scripted policy in a session
of native/cpython_main.py's fork server inside bubblewrap, started exactly as shard_audit.py
starts its audits (the same Runner and Server, so the same sandbox as a local run).

This file only makes the harness calls a local run makes for the episode, in the same order
(core/episodes/regret.ts runJobs, policy.ts scriptedPlayer, rollout.ts playPlan), and hands back
each request with its reply. The workbench plays that transcript back through its own player:
the return, endedBy and the recorded episode are made there by the same code as a local run's, and
a call here that a local run would not have made shows as a divergence there, never as a number.

Use: python shard_regret.py CONFIG.json ITEMS.jsonl OUT.jsonl [FIRST COUNT]
  CONFIG: shard_audit's, with options {budget, stepTimeoutSec, policy}
  ITEMS: one {"key", "source", "seed", "hintText", "plans": {"plain": [...], "tool": [...]} | null} a
  line; a null plan is the solution() policy, whose actions come from the game after its reset, or a
  served model (options.model, shard_agent.py), whose requests and answers come back too.
"""
# Hints stay unevaluated: a cluster node's python may be older than the one mypy checks for.
from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
for _p in (HERE, os.path.dirname(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import shard_audit  # noqa: E402
from shard_audit import MATH, Json, Runner, Server, Session  # noqa: E402
from js_json import js_json  # noqa: E402
from shard_agent import play_model, step_stops  # noqa: E402
from spade_tool_calls import calls_to_send, has_answer  # noqa: E402

# Actions per interpreter round trip, as core/episodes/policy.ts scriptedPlayer plays them.
BATCH = 16
# A call's limit is the harness's own; the host kills the process this long after it (supervisor.ts graceMs).
GRACE_SEC = 3.0


def solution_texts(value: Any) -> list[str]:
    """solution()'s value as the scripted policy's texts (core/episodes/policy.ts solutionActions)."""

    def wrap(v: Any) -> str:
        s = v if isinstance(v, str) else js_json(v)
        return s if ("\\boxed{" in s or "<answer>" in s or "<tool_call>" in s) else "\\boxed{" + s + "}"

    return [wrap(x) for x in value] if isinstance(value, list) else [wrap(value)]


def plan_of(texts: list[str], tool_use: bool) -> list[Json]:
    """Texts as the rollout's items (policy.ts feedFromSource): tool calls go to execute_tool in a tool-use game."""
    out: list[Json] = []
    for t in texts:
        if tool_use and not has_answer(t):
            calls = calls_to_send(t)
            if calls:
                out.append({"kind": "tool", "calls": [{"name": str(c["name"]), "arguments": c["arguments"], "block": c["block"]} for c in calls]})
                continue
        out.append({"kind": "step", "action": t})
    return out


class Episode:
    """One session's calls, each kept with its reply, as the workbench's host would see them."""

    def __init__(self, server: Server, session: Session, timeout: float) -> None:
        self.server, self.s, self.timeout = server, session, timeout
        self.calls: list[list[Json]] = []
        self.seq = 0
        self.dead = False

    def call(self, req: Json) -> Json:
        s = self.s
        s.reply = None
        s.done.clear()
        self.seq += 1
        self.server.write("S%s %s\n" % (s.sid, json.dumps({**req, "session": s.sid, "id": self.seq, "timeoutSec": self.timeout})))
        if not s.done.wait(self.timeout + GRACE_SEC):
            s.die("the call ran past %d ms and did not stop by itself, so its process was killed" % round(self.timeout * 1000), "timeout")
        reply: Json = s.reply or {"ok": False, "error": {"kind": "crashed", "type": "crashed", "message": "no reply"}}
        self.calls.append([req, reply])
        err = reply.get("error") if not reply.get("ok") else None
        # After these the local session is gone too, or (unreadable_call: session.ts tool throws) the
        # local episode has failed: nothing more is asked of it.
        if isinstance(err, dict) and (err.get("restarted") or err.get("kind") in ("crashed", "unknown_session", "protocol", "unreadable_call")):
            self.dead = True
        return reply


def play_plan(ep: Episode, items: list[Json], budget: int) -> None:
    """rollout.ts playPlan for a batchable feed: steps in batches of BATCH, stopping where it stops."""
    taken = 0
    i = 0
    while i < len(items) and not ep.dead:
        if taken >= budget:
            return
        item = items[i]
        if item["kind"] == "tool":
            for c in item["calls"]:
                # session.ts tool(): the block when the call has one (the harness reads it as SPADE does)
                ep.call({"cmd": "tool", "block": c["block"]} if "block" in c else {"cmd": "tool", "name": c["name"], "arguments": c["arguments"]})
                if ep.dead:
                    return
            taken += 1
            i += 1
            continue
        actions: list[str] = []
        while i < len(items) and items[i]["kind"] == "step" and len(actions) < BATCH and taken + len(actions) < budget:
            actions.append(items[i]["action"])
            i += 1
        r = ep.call({"cmd": "play", "actions": actions, "reset": False, "stopWhenDone": True, "state": True})
        if not r.get("ok"):
            return
        got = (r.get("result") or {}).get("steps") or []
        if any(step_stops(rec) for rec in got):
            return
        taken += len(got)
        if len(got) < len(actions):
            return


def spade_refused(reply: Json) -> bool:
    """SPADE's load refused the game (core/episodes/session.ts EnvSession.open): a load check raised,
    or the validation of the loaded instance failed. A local run plays nothing of it."""
    if reply.get("ok"):
        v = (reply.get("result") or {}).get("validation")
        return isinstance(v, dict) and v.get("ok") is False
    err = reply.get("error") or {}
    return isinstance(err, dict) and err.get("kind") == "load_error" and isinstance(err.get("stage"), str)


def play_item(runner: Runner, item: Json) -> Json:
    """One episode's harness calls and replies (the workbench plays them back through its own player)."""
    started = time.time()
    opts = runner.cfg.get("options") or {}
    budget = int(opts.get("budget", 30))
    step_timeout = float(opts.get("stepTimeoutSec", 30))
    load = {"cmd": "load", "source": item["source"], "options": {"maxTurns": budget, "mode": "respect"}}
    if runner.why:
        return {"key": item["key"], "calls": [[load, {"id": None, "ok": False, "error": {"kind": "unavailable", "type": "unavailable", "message": runner.why}}]]}
    with runner.lock:
        runner.seq += 1
        sid = "regret-%d" % runner.seq
    server = runner.server("full" if MATH.search(item["source"]) else "lean")
    s = server.open(sid, {"timeoutSec": step_timeout, "deterministic": False})
    ep = Episode(server, s, step_timeout)
    exchanges: list[Json] | None = None
    try:
        r = ep.call(load)
        if spade_refused(r) and item.get("hintText") is None and not ep.dead:
            # SPADE loads an unhinted game a second time before its play is FAILED (core/episodes/regret.ts one()).
            server.close(s)
            with runner.lock:
                runner.seq += 1
                sid = "regret-%d" % runner.seq
            s = ep.s = server.open(sid, {"timeoutSec": step_timeout, "deterministic": False})
            r = ep.call(load)
        if spade_refused(r):
            pass  # SPADE plays nothing of a game it refuses
        elif r.get("ok") and not ep.dead and opts.get("model"):
            exchanges = play_model(ep.call, lambda: ep.dead, r.get("result") or {}, item, opts)
        elif r.get("ok") and not ep.dead:
            tool_use = bool((r.get("result") or {}).get("toolUse"))
            ep.call({"cmd": "reset", "seed": item["seed"]})
            if not ep.dead:
                ep.call({"cmd": "state"})
            plans = item.get("plans")
            if ep.dead:
                items: list[Json] = []
            elif plans is None:
                sol = ep.call({"cmd": "solution"})
                value = (sol.get("result") or {}).get("value") if sol.get("ok") else None
                items = plan_of(solution_texts(value), tool_use) if sol.get("ok") else []
            else:
                items = plans["tool" if tool_use else "plain"]
            play_plan(ep, items, budget)
    finally:
        server.close(s)
    return {"key": item["key"], "calls": ep.calls, **({"model": exchanges} if exchanges is not None else {}), "elapsedMs": round((time.time() - started) * 1000), "node": os.uname().nodename}


def iter_items(items: list[Json], cfg: Json) -> Any:
    """Episodes as a generator of results (a Ray streaming task yields each)."""
    return shard_audit.iter_items(items, cfg, play_item)


if __name__ == "__main__":
    shard_audit.main(sys.argv, play_item)
