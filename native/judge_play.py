"""The checks SPADE lacks that play the game: one function per check."""

from __future__ import annotations

import json
import re

from judge_channel import LoadError, StepFailed, clip
from judge_context import PROBE_ACTIONS, call_seconds, is_win, normalized, plain_obs, plays_ahead
from harness_solution import described_plan, played_plan
from spade_tool_calls import has_answer, parse_tool_calls
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judge_channel import Env
    from judge_context import Audit


def script_base(audit: Audit) -> Any:
    """SPADE's probes, then plausible guesses (tool use: an answer, no tags, an unknown tool)."""
    if audit.tool_use:
        return ["<answer>0</answer>", "no tags", '<tool_call>{"name": "none", "arguments": {}}</tool_call>']
    return PROBE_ACTIONS + ["\\boxed{7}", "\\boxed{0}", "\\boxed{up}", "\\boxed{A}", "\\boxed{13}", "\\boxed{yes}", "\\boxed{2 3}"]


def script_for(audit: Audit, env: Env, n: int) -> Any:
    """A fixed action script: script_base cycled to n actions."""
    base = script_base(audit)
    return [base[i % len(base)] for i in range(n)]


def check_determinism(audit: Audit) -> None:
    audit.played_ahead(_determinism)


@plays_ahead
def _determinism(audit: Audit) -> Any:
    seed = 7
    runs = []
    for _ in range(2):
        env = audit.fresh()
        runs.append(audit.play(env, seed, script_for(audit, env, audit.turns(env))))
    a, b = runs
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        if x != y:
            acts = [s[0] for s in a[1:i + 1]]
            what = "the first observation" if i == 0 else f"step {i}"
            return audit.put("determinism", "fail", f"Same seed and actions gave different results at {what}", seed=seed, step=i, actions=acts, expected=clip(_show(x)), observed=clip(_show(y)), line=audit.line_of("reset"))
    audit.put("determinism", "pass", f"Two runs with seed {seed} agree over {len(a) - 1} steps", seed=seed)


def _show(x: Any) -> Any:
    if x is None:
        return "(episode already over)"
    if isinstance(x, str):
        return x
    a, o, r, te, tr = x
    return f"obs={o!r} reward={r} terminated={te} truncated={tr}"


def check_seed_ignored(audit: Audit, env: Env) -> Any:
    seeds = [0, 1, 2, 3, 4]
    firsts, states = [], []
    plan = []
    for s in seeds:
        plan += [{"op": "reset", "seed": s, "env": env.id, "limit": audit.call_limit}, {"op": "fields", "env": env.id, "globals": env.globals}]
    got = audit.seq(plan)
    for i, s in enumerate(seeds):
        obs, _ = audit.reset(env, s, tagged=got[2 * i])
        firsts.append(plain_obs(obs))
        states.append(audit.value_of(got[2 * i + 1], "fields", env=env.id, globals=env.globals))
    if len(set(firsts)) == 1:
        differing = _differing(states)
        seed_only = [k for k in differing if _holds_seed([st.get(k) for st in states], seeds)]
        if differing and len(seed_only) < len(differing):
            # Games with a hidden secret show the same opening text for every seed; the state tells.
            return audit.put("seed-ignored", "pass", f"Same first observation for seeds {seeds[0]}-{seeds[-1]}, but the hidden state differs", seed=seeds)
        if len({json.dumps(st, sort_keys=True) for st in states}) > 1 and _plays_differ(audit, env, seeds, seed_only):
            # The seed is kept and used later (a puzzle drawn at the first step, from the stored
            # seed or a generator made from it): a seeded game.
            kept = f"the stored seed ({', '.join(seed_only)})" if seed_only else "object addresses"
            return audit.put("seed-ignored", "pass", f"Same first observation for seeds {seeds[0]}-{seeds[-1]} and the same state but {kept}; play differs from the first steps", seed=seeds, **({"seedOnly": seed_only} if seed_only else {}))
        if seed_only:
            # A stored seed that nothing reads is not a seeded game (issue 46: reset(seed) kept
            # self.seed and drew its puzzle from a fixed base seed).
            return audit.put("seed-ignored", "warn", f"Seeds {seeds[0]}-{seeds[-1]} give the same first observation, state and play; only the stored seed differs ({', '.join(seed_only)})",
                             seed=seeds, seedOnly=seed_only, observed=clip(firsts[0]), line=audit.line_of("reset"))
        return audit.put("seed-ignored", "warn", f"Seeds {seeds[0]}-{seeds[-1]} all give the same first observation and state", seed=seeds, observed=clip(firsts[0]), line=audit.line_of("reset"))
    audit.put("seed-ignored", "pass", f"{len(set(firsts))} distinct first observations over {len(seeds)} seeds", seed=seeds)


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _differing(states: list[Any]) -> list[str]:
    """The compared names whose value is not the same for every seed; a repr's memory address
    (a new random.Random(BASE) each reset is a new object, at a new address) is not a difference."""
    keys = sorted({k for st in states for k in st})
    return [k for k in keys if len({_ADDRESS.sub(" at 0x?", str(st.get(k))) for st in states}) > 1]


def _holds_seed(values: list[Any], seeds: list[int]) -> bool:
    """Whether a name holds the seed itself for every seed (or the seed plus a fixed offset)."""
    try:
        nums = [json.loads(v) if isinstance(v, str) else None for v in values]
    except ValueError:
        return False
    ints = [n for n in nums if type(n) is int]
    if len(ints) != len(nums):
        return False
    return len({n - s for n, s in zip(ints, seeds)}) == 1


def _plays_differ(audit: Audit, env: Env, seeds: list[int], seed_only: list[str]) -> bool:
    """Whether a short script played from each seed's reset tells the seeds apart: by what the
    game answers, or by the state it leaves (the stored seed left out)."""
    acts = script_for(audit, env, min(3, audit.turns(env)))
    traces, states = set(), set()
    for s in seeds:
        traces.add(json.dumps(audit.play(env, s, acts), sort_keys=True, default=str))
        st = audit.value("fields", env=env.id, globals=env.globals)
        states.add(json.dumps({k: _ADDRESS.sub(" at 0x?", str(v)) for k, v in st.items() if k not in seed_only}, sort_keys=True))
    return len(traces) > 1 or len(states) > 1


def fuzz_actions(audit: Audit, first_obs: Any) -> Any:
    acts = ["", " ", "   \n\t ", "no box here", "\\boxed{}", "\\boxed{ }", "\\boxed{{1}}", "\\boxed{1", "\\boxed{1}}", "}{", "\\boxed{\\boxed{1}}",
            "\\boxed{{{}", "\\boxed{é漢字🙂\u202e}", "\\boxed{" + "9" * 9992 + "}", "\\boxed{-1}", "\\boxed{-99999}", "\\boxed{99999999999999999999999999}",
            "\\boxed{1e308}", "\\boxed{2.5}", "\\boxed{-0.0}", "\\boxed{nan}", "\\boxed{1/0}", "\\boxed{1 2 3 4 5 6 7 8 9}", "\\boxed{a,b}"]
    words = []
    for w in re.findall(r"[A-Za-z]{3,}", first_obs or ""):
        if w.lower() not in words:
            words.append(w.lower())
    acts += [f"\\boxed{{{w}}}" for w in words[:4]]
    if audit.tool_use:
        acts += ["<answer></answer>", "<tool_call>{not json</tool_call>", '<tool_call>{"name": "nope", "arguments": {}}</tool_call>',
                 '<tool_call>{"name": 5, "arguments": []}</tool_call>', "<function=x><parameter=y>z</parameter></function>"]
    return acts


def fuzz_items(fuzz: list[str]) -> Any:
    """Each fuzz action on its own episode, from reset(seed k % 3); up to five may raise."""
    return [{"seed": k % 3, "reset": True, "actions": [a], "tolerate": True} for k, a in enumerate(fuzz)]


def check_crash(audit: Audit, first_obs: Any) -> None:
    audit.played_ahead(_crash, fuzz_actions(audit, first_obs))


@plays_ahead
def _crash(audit: Audit, fuzz: list[str]) -> Any:
    crashes = []
    tried = 0
    env = audit.fresh()
    answers = audit.episodes(env, fuzz_items(fuzz), max_raises=5)
    for k, a in enumerate(fuzz):
        env_seed = k % 3
        got = answers[k]
        audit.reset(env, env_seed, tagged=got.get("reset"))
        tried += 1
        steps = got.get("steps", [])
        try:
            audit.step(env, a, env_seed, [], tagged=steps[0] if steps else None)
        except StepFailed as e:
            crashes.append({"action": clip(a, 200), "seed": env_seed, "type": e.info.get("type"), "message": clip(e.info.get("message", ""), 300), "line": e.info.get("line"), "traceback": clip(e.info.get("traceback", ""), 3000)})
            if len(crashes) >= 5:
                break
    if crashes:
        c = crashes[0]
        return audit.put("crash-on-action", "fail", f"step raises {c['type']} on {len(crashes)} fuzz action(s), e.g. {clip(repr(c['action']), 80)} (SPADE turns this into a silent -1)",
                     seed=c["seed"], actions=[c["action"]], line=c["line"], traceback=c["traceback"], observed=f"{c['type']}: {c['message']}", crashes=crashes)
    audit.put("crash-on-action", "pass", f"No exception on {tried} fuzz actions")


def solution_fn(audit: Audit, env: Env) -> Any:
    """The game's own solution(), or None (SPADE's tool-use base class only has one that raises)."""
    return True if audit.value("has_solution", env=env.id) else None


def get_solution(audit: Audit, env: Env, seed: int | None) -> Any:
    fn = solution_fn(audit, env)
    if fn is None:
        return None
    value = audit.call("solution", "solution", seed=seed, env=env.id)
    if audit.tool_use and isinstance(value, str):
        # SPADE's tool-use solution() is text that describes the calls, then the answer
        # (harness_solution): played as the calls, then the answer, as an agent would.
        tools = audit.value("attr", env=env.id, name="_tools")
        if described_plan(value, tools) is not None:
            return played_plan(value, tools, audit.value("attr", env=env.id, name="_expected_answer"))
    return audit.harness.solution_actions(value, audit.tool_use)


def rollout_turn(audit: Audit, env: Env, action: str, seed: int | None, history: list[str]) -> Any:
    """One agent turn of a tool-use game as SPADE's rollout plays it: an <answer> goes to step(),
    <tool_call>s (read by SPADE's parser, spade_tool_calls) go to execute_tool() (never to step),
    anything else to step()."""
    if not has_answer(action):
        calls = parse_tool_calls(action)
        if calls:
            out = []
            for call in calls:
                name, args = call["name"], call["arguments"]
                ret = audit.call("execute_tool", "execute_tool", action=action, seed=seed, env=env.id, name=name, args=args)
                out.append(str(ret.get("output", "")) if isinstance(ret, dict) else repr(ret))
            return "\n".join(out), 0.0, False, False
    return audit.step(env, action, seed, history)


def check_solution(audit: Audit, env: Env) -> None:
    audit.played_ahead(_solution, env)


@plays_ahead
def _solution(audit: Audit, env: Env) -> Any:
    if solution_fn(audit, env) is None:
        if audit.tool_use:
            return audit.put("solution", "skip", "No solution(); tool-use environments are checked by tool.done_reachable")
        return audit.put("solution", "warn", "The game defines no solution(): winnability cannot be checked")
    for seed in (0, 1, 2):
        audit.reset(env, seed)
        played: list[str] = []
        last: Any = None
        limit = audit.turns(env)
        won = False
        while len(played) < limit + 1:
            acts = get_solution(audit, env, seed)
            if not acts:
                break
            for a in acts:
                o, r, te, tr = rollout_turn(audit, env, a, seed, played) if audit.tool_use else audit.step(env, a, seed, played)
                played.append(a)
                last = (o, r, te, tr)
                if te or tr or len(played) > limit:
                    break
            if last and (last[2] or last[3]):
                won = is_win(last[1], last[2])
                break
        if not won:
            obs = "no steps" if last is None else f"obs={clip(plain_obs(last[0]), 300)!r} reward={last[1]} terminated={last[2]} truncated={last[3]}"
            return audit.put("solution", "fail", f"Playing solution() does not win within {limit} turns (seed {seed}): unsolvable or a state error",
                         seed=seed, actions=[clip(a, 200) for a in played], expected="terminated with reward > 0", observed=obs, line=audit.line_of("solution"))
    audit.put("solution", "pass", "solution() wins on seeds 0, 1, 2", seed=[0, 1, 2])


def check_too_easy(audit: Audit) -> Any:
    """SPADE's offline too-easy test, as SPADE runs it (audit_exec.Executor.op_guess plays it):
    a fresh load, 20 runs of up to 5 guesses drawn from the game's process-global random, a run
    won at the first reward above 0; the game fails above a 15% win rate."""
    legacy = audit.opt.get("guessLoad") == "legacy"
    # SPADE's test function has no tool-use case (it steps any game with boxed guesses); the audit's
    # own reading of it keeps to games, the design rounds' legacy reading runs it as SPADE would.
    if audit.tool_use and not legacy:
        return audit.put("too-easy", "skip", "SPADE's random-guess test applies to games")
    runs, tries = audit.harness.GUESS_RUNS, audit.harness.GUESS_TRIES
    # `guessLoad: legacy` (design rounds' advice): the game built as test_game_difficulty builds it,
    # make_synthetic_env(game_file) with max_turns forced to 1000 (generate_and_validate_games.py:41);
    # otherwise the audit's own budget in "respect" mode, as the game is played.
    budget = audit.harness.ADMISSION_BUDGET if legacy else audit.budget
    r = audit.x("guess", runs=runs, tries=tries, budget=budget, limit=audit.call_limit, loadLimit=audit.spade_limit, **({"legacy": True} if legacy else {}))
    if "runs" not in r:
        try:
            audit.outcome("load", r)
        except LoadError as e:
            return audit.put("too-easy", "fail", f"SPADE's test loads the game again, and that load failed: {clip(str(e), 300)}", stage=e.stage)
        raise RuntimeError("the executor gave no runs")
    got = r["runs"]
    if not isinstance(got, list) or not got or len(got) > runs:
        raise RuntimeError("the executor's runs do not follow the test")
    wins, first = 0, None
    for seed, run in enumerate(got):
        audit.outcome("reset", run["reset"], None, seed)  # timed; raises at a hang (or an exit) in the wrapper's reset
        played: list[Any] = []
        end: Any = None
        for s in run["steps"]:
            a = s.get("a")
            if end is not None or len(played) >= tries or not (isinstance(a, str) or (a is None and "v" not in s)):
                raise RuntimeError("the executor's runs do not follow the test")
            if "v" not in s:
                # a hang, or an exception the wrapper does not catch, in the step or in drawing the guess
                audit.outcome("step" if a is not None else "random.randint", s, a, seed)
            audit.durations.append((call_seconds(s), "step", a, seed))
            played.append(a)
            end = audit.harness.spade_guess_end(s["v"])
        if end is None and len(played) < tries:
            raise RuntimeError("the executor's runs do not follow the test")
        if end == "won":
            wins += 1
            first = first or {"seed": seed, "actions": played}
    if len(got) < runs:
        raise RuntimeError("the executor's runs do not follow the test")
    rate = wins / runs
    if rate > 0.15:
        return audit.put("too-easy", "fail", f"Random guesses win {wins}/{runs} episodes ({rate:.0%} > 15%)", expected="<= 0.15", observed=rate, **(first or {}))
    audit.put("too-easy", "pass", f"Random guesses win {wins}/{runs} episodes ({rate:.0%})", observed=rate)


def check_max_turns(audit: Audit, env: Env, answers: list[str]) -> None:
    ans = {normalized(x) for x in answers}
    wrong = next(c for c in ("0", "-7", "zz", "31415") if normalized(c) not in ans)
    a = f"<answer>{wrong}</answer>" if audit.tool_use else f"\\boxed{{{wrong}}}"
    audit.played_ahead(_max_turns, env, a)


@plays_ahead
def _max_turns(audit: Audit, env: Env, a: Any) -> Any:
    seed = 11
    audit.reset(env, seed)
    limit = audit.turns(env)
    played: list[Any] = []
    answers = audit.episodes(env, [{"actions": [a] * (limit + 5), "stop": True}])[0].get("steps", [])
    for i in range(limit + 5):
        o, r, te, tr = audit.step(env, a, seed, played, tagged=answers[i] if i < len(answers) else None)
        played.append(a)
        if tr or te:
            if te and r > 0:
                return audit.put("max-turns", "skip", f"The never-winning policy {a} won; cannot test truncation", seed=seed, actions=[a])
            n = len(played)
            if n > limit:
                return audit.put("max-turns", "fail", f"Episode ended after {n} turns, past max_turns={limit}", seed=seed, actions=played, expected=f"<= {limit}", observed=n, line=audit.line_of("step"))
            how = "truncated" if tr else "terminated (loss)"
            return audit.put("max-turns", "pass", f"A never-winning policy ends ({how}) after {n} of {limit} turns", seed=seed, observed=n)
    audit.put("max-turns", "fail", f"A never-winning policy ({a}) never reaches truncation: {len(played)} turns with max_turns={limit}", seed=seed, actions=played, expected=f"truncated within {limit}", observed=f"still running after {len(played)}", line=audit.line_of("step"))


def check_hint_leak(audit: Audit, answers_by_seed: list[tuple[int, str]]) -> Any:
    hint = audit.opt.get("hint")
    if not isinstance(hint, str) or not hint.strip():
        return audit.put("hint-leak", "skip", "No hint for this environment")
    if not answers_by_seed:
        return audit.put("hint-leak", "skip", "No answer to compare: no solution() (games) or expected answer (tool use)")
    h = f" {normalized(hint)} "
    full, partial = [], []
    for seed, ans in answers_by_seed:
        n = normalized(ans)
        if not n:
            continue
        if f" {n} " in h:
            full.append((seed, ans))
            continue
        toks = n.split()
        if len(toks) >= 2:
            found = sum(1 for t in toks if f" {t} " in h)
            if found / len(toks) >= 0.6:
                partial.append((seed, ans, f"{found}/{len(toks)} tokens"))
        elif len(n) >= 5:
            k = max(4, int(len(n) * 0.7))
            if any(n[i:i + k] in h for i in range(0, len(n) - k + 1)):
                partial.append((seed, ans, f"a {k}-character part"))
    varies = len({normalized(a) for _, a in answers_by_seed}) > 1
    if full and (not varies or len(full) == len(answers_by_seed) or len(normalized(full[0][1])) >= 3):
        s, a = full[0]
        return audit.put("hint-leak", "fail", f"The hint contains the answer {clip(str(a), 80)!r} (seed {s})", seed=s, expected="hint without the answer", observed=clip(hint), answer=clip(str(a), 200))
    if partial:
        s, a = partial[0][:2]
        why = f"most of the answer ({partial[0][2]})"
        return audit.put("hint-leak", "warn", f"The hint contains {why}: {clip(str(a), 80)!r} (seed {s})", seed=s, observed=clip(hint), answer=clip(str(a), 200))
    if full:
        # A one- or two-character answer that varies by seed and shows up for some seeds only is a coincidence ("modulo 4").
        return audit.put("hint-leak", "pass", f"The hint does not state the answer (short answer {clip(str(full[0][1]), 20)!r} appears by coincidence for {len(full)} of {len(answers_by_seed)} seeds)")
    audit.put("hint-leak", "pass", f"The hint does not contain the answer for {len(answers_by_seed)} seeds")


def check_types(audit: Audit) -> Any:
    if not audit.type_issues:
        return audit.put("types", "pass", f"{audit.type_steps} steps checked: builtin types, rewards in [-10, 10], dict info")
    fails = [t for t in audit.type_issues if t.get("level") != "warn"]
    first = (fails or audit.type_issues)[0]
    kinds = sorted({t["what"] for t in audit.type_issues})
    ev = {k: v for k, v in first.items() if k not in ("what", "level")}
    audit.put("types", "fail" if fails else "warn", f"{first['what']} ({len(audit.type_issues)} of {audit.type_steps} steps; {'; '.join(kinds)})", line=audit.line_of("step"), issues=kinds, **ev)


def check_timing(audit: Audit) -> Any:
    if audit.hung is not None:
        h = audit.hung
        return audit.put("timing", "fail", f"{h.call} hung (no return within {h.limit:g} s)" + (f" on action {clip(repr(h.action), 80)}" if h.action is not None else ""),
                     call=h.call, seed=h.seed, actions=[clip(h.action, 200)] if h.action is not None else None, observed=f"> {h.limit:g} s", line=audit.line_of("step" if h.call == "step" else "reset"))
    d = sorted(x[0] for x in audit.durations)
    if not d:
        return audit.put("timing", "skip", "No calls were timed")
    med = d[len(d) // 2]
    slow = max(audit.durations, key=lambda x: x[0])
    ev = {"medianMs": round(med * 1000, 3), "maxMs": round(slow[0] * 1000, 3), "calls": len(d), "call": slow[1], "seed": slow[3]}
    if slow[2] is not None:
        ev["actions"] = [clip(slow[2], 200)]
    status = "warn" if slow[0] > 1.0 else "pass"
    audit.put("timing", status, f"median {ev['medianMs']:.3f} ms, max {ev['maxMs']:.3f} ms ({slow[1]})", **ev)


# Past this many bytes written to stdout and stderr in one audit, printing is a finding. A game that
# prints a line a step stays far below it (an audit makes a few hundred calls); what passes it would
# fill a SPADE run's log, where a game's prints land (SPADE neither captures nor bounds them).
OUTPUT_FLOOD_BYTES = 1 << 20


def check_output_flood(audit: Audit) -> None:
    """`output-flood`: a warning, not a failure: SPADE plays such a game as it plays any other (what
    is printed reaches neither the agent nor a return), but every episode pays for the writing and
    the training log fills with it. The harness keeps 64 KiB a call and drops the rest, so the
    count is the executor's, of every byte written."""
    n = audit.printed
    ev = {"bytes": n, "bound": OUTPUT_FLOOD_BYTES}
    if n > OUTPUT_FLOOD_BYTES:
        audit.put("output-flood", "warn", f"The game wrote {n} bytes ({n / (1 << 20):.1f} MiB) to stdout and stderr during the audit, past the bound of {OUTPUT_FLOOD_BYTES} bytes", **ev)
    else:
        audit.put("output-flood", "pass", f"The game wrote {n} bytes to stdout and stderr during the audit", **ev)
