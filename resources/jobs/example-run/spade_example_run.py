#!/usr/bin/env python3
"""A miniature SPADE run over a pool of seed games, for trying the whole workbench loop without a GPU.

It behaves like a SPADE training run from the outside. Each rollout step a designer writes new
environment programs, each one from a seed game it read (its parent); they are checked the way
SPADE checks games before they enter the pool (rejects go to spade_games_rejected/ with SPADE's
message), played with and without the privileged hint, and scored (r_hint, r_no_hint, hint-based
regret). Each game's returns are printed as SPADE's `[REGRET]` line; the rollout's metrics are printed as
JSON lines under SPADE's W&B names with SPADE's definitions (step key rollout/step) and appended to
metrics.jsonl; the games go to spade_games/ (with a <stem>.json naming their parent),
spade_games_cache/step_NNNNN/ (game + _hint.txt) and spade_games_cache/env_memory.json.

THE DESIGNER AND THE PLAYER ARE SCRIPTED, NOT LANGUAGE MODELS. The designer writes a variant of its
parent: the same rules with another turn allowance (the default of max_turns), under a new class
name, with a comment that says so. The player submits the game's own solution() with a fixed
probability (higher when shown the hint), otherwise a random guess. Nothing is trained; the numbers
only show the shape of a real run.

Games may use numpy as SPADE's games do: run it with an interpreter that has numpy (the workbench
runs a local job with the interpreter its native runtime uses). Without numpy a numpy game is
rejected, as SPADE would reject it.
Run: python3 spade_example_run.py --pool DIR --output DIR
"""
import argparse
import collections
import copy
import functools
import hashlib
import heapq
import itertools
import json
import math
import operator
import os
import random
import re
import shutil
import signal
import statistics
import string
import sys
import time
import traceback
import typing

POLICY_NOTICE = ("policy: scripted demonstration policy (NOT a language model): each episode it plays the game's "
                 "solution() with probability p_hint when hinted and p_no_hint otherwise, else random guesses")
GAME_HEADER = '"""SPADE self-play generated game"""'
SKILLS = ["Pattern Recognition", "Logical Deduction", "Strategic Planning", "Mathematical Reasoning",
          "Spatial Reasoning", "Causal Inference", "Memory Recall", "Optimization", "Language Understanding"]
CALL_LIMIT_S = 30
DESIGNER_NOTICE = ("designer: scripted (NOT a language model): each new game is a seed game with another turn allowance, "
                   "under a new class name; its parent is named in the game and in <stem>.json")


class CallTimeout(Exception):
    pass


def _alarm(_sig, _frame):
    raise CallTimeout("call exceeded %d s" % CALL_LIMIT_S)


def limited(fn, *args, **kwargs):
    """Every reset/step gets SPADE's 30 s limit, so a runaway game cannot stall the run."""
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(CALL_LIMIT_S)
    try:
        return fn(*args, **kwargs)
    finally:
        if hasattr(signal, "SIGALRM"):
            signal.alarm(0)


# --- tool-use base class, injected into the namespace as SPADE does (section 4) -------------------
class ToolUseBaseEnv:
    def __init__(self, max_turns=10):
        self.max_turns = max_turns
        self._turn = 0
        self._tools = {}
        self._state = {}
        self._expected_answer = None

    def get_tools(self):
        return [{"type": "function", "function": {"name": n, "description": t.get("description", ""),
                                                  "parameters": t.get("parameters", {})}}
                for n, t in self._tools.items()]

    def execute_tool(self, name, args):
        fn = getattr(self, "tool_" + str(name), None)
        if fn is None or name not in self._tools:
            return "Error: unknown tool %s" % name
        try:
            return str(fn(**(args or {})))
        except Exception as e:  # a broken tool is a game defect the agent sees as text
            return "Error: %s" % e

    @staticmethod
    def _matches(answer, expected):
        a = str(answer).strip()
        b = str(expected).strip()
        if a.lower() == b.lower():
            return True
        try:
            return abs(float(a.replace("$", "").replace(",", "")) - float(b.replace("$", "").replace(",", ""))) <= 0.01
        except ValueError:
            return False

    def step(self, action):
        text = str(action)[:100000]
        m = re.search(r"<tool_call>(.*?)</tool_call>", text, re.S)
        if m:
            try:
                call = json.loads(m.group(1))
            except ValueError:
                return "Could not parse the tool call JSON.", -0.1, False, False, {}
            return self.execute_tool(call.get("name"), call.get("arguments") or {}), 0.0, False, False, {}
        m = re.search(r"<answer>(.*?)</answer>", text, re.S)
        if not m:
            return "Use <tool_call>...</tool_call> or <answer>...</answer>.", -0.1, False, False, {}
        self._turn += 1
        if self._matches(m.group(1), self._expected_answer):
            return "Correct.", 1.0, True, False, {}
        if self._turn >= self.max_turns:
            return "Out of turns. The answer was %s." % self._expected_answer, 0.0, False, True, {}
        return "That is not correct.", 0.0, False, False, {}


def prebound_namespace():
    ns = {"__name__": "spade_game", "__builtins__": __builtins__}
    for mod in (itertools, math, random, re, json, collections, functools, string, copy, heapq, operator, statistics):
        ns[mod.__name__] = mod
    try:
        import numpy  # optional: the pool may use np, SPADE pre-binds it
        ns["np"] = ns["numpy"] = numpy
    except ImportError:
        pass
    ns.update(deque=collections.deque, defaultdict=collections.defaultdict, Counter=collections.Counter,
              OrderedDict=collections.OrderedDict, namedtuple=collections.namedtuple,
              combinations=itertools.combinations, permutations=itertools.permutations, product=itertools.product,
              chain=itertools.chain, accumulate=itertools.accumulate, reduce=functools.reduce,
              lru_cache=functools.lru_cache, deepcopy=copy.deepcopy, heappush=heapq.heappush, heappop=heapq.heappop,
              ToolUseBaseEnv=ToolUseBaseEnv)
    for name in ("Tuple", "Dict", "List", "Optional", "Union", "Any", "Set", "FrozenSet", "Callable",
                 "Iterable", "Sequence", "Mapping"):
        ns[name] = getattr(typing, name)
    return ns


class Rejected(Exception):
    def __init__(self, stage, reason):
        super().__init__(reason)
        self.stage = stage
        self.reason = reason


def load_class(source):
    ns = prebound_namespace()
    try:
        code = compile(source, "<game>", "exec")
    except SyntaxError as e:
        raise Rejected("exec", "Syntax error in generated game code: %s" % e)
    try:
        exec(code, ns)
    except Exception as e:
        raise Rejected("exec", "Failed to execute game code: %s" % e)
    for name, value in list(ns.items()):
        if name.endswith("Env") and name not in ("Env", "ToolUseBaseEnv") and callable(value):
            return value
    raise Rejected("class", "No valid game class found in code (expected class ending with 'Env')")


def instantiate(cls, budget):
    try:
        env = cls()
    except TypeError:
        env = cls(max_turns=budget)
    designed = getattr(env, "max_turns", None)
    if isinstance(designed, int) and not isinstance(designed, bool) and designed > 0:
        env.max_turns = min(designed, budget)
    else:
        env.max_turns = budget
    return env


def as_reset(value):
    if isinstance(value, tuple):
        return str(value[0]), (value[1] if len(value) > 1 and isinstance(value[1], dict) else {})
    return str(value), {}


def validate(source, budget):
    """SPADE's pre-pool checks (section 5), in their order, with its messages."""
    cls = load_class(source)
    try:
        env = instantiate(cls, budget)
    except Exception as e:
        raise Rejected("instantiate", "Failed to instantiate game class: %s" % e)
    for method in ("reset", "step"):
        if not callable(getattr(env, method, None)):
            raise Rejected("class", "Game class missing required method: %s" % method)
    try:
        out = limited(env.reset, seed=42)
        obs, info = (out if isinstance(out, tuple) and len(out) == 2 else (None, None))
        if not isinstance(obs, str) or not obs or not isinstance(info, dict):
            raise ValueError("expected (non-empty str, dict)")
    except Rejected:
        raise
    except Exception as e:
        raise Rejected("reset", "Game reset() failed: %s" % e)
    for i, action in enumerate(("\\boxed{1}", "\\boxed{test}", "\\boxed{42}")):
        try:
            res = limited(env.step, action)
            ok = (isinstance(res, tuple) and len(res) == 5 and isinstance(res[0], str)
                  and isinstance(res[1], (int, float)) and not isinstance(res[1], bool)
                  and isinstance(res[2], bool) and isinstance(res[3], bool) and isinstance(res[4], dict)
                  and -10 <= res[1] <= 10)
            if not ok:
                raise ValueError("bad step return %r" % (res,))
        except Exception as e:
            raise Rejected("step", "Game step() failed on action %d '%s': %s" % (i + 1, action, e))
        if res[2] or res[3]:
            break
    try:
        limited(env.reset, seed=123)
    except Exception as e:
        raise Rejected("reset2", "Game reset() failed on second call: %s" % e)
    return cls


def is_tool_use(env):
    return isinstance(env, ToolUseBaseEnv)


def demonstration_plan(env, rng, p_solve):
    """The scripted policy, decided once per episode right after reset(). It reads no text: with
    probability p_solve it plays the game's own solution() (one answer, or the list of actions a
    multi-step game needs), otherwise random guesses."""
    if rng.random() >= p_solve:
        return None
    if is_tool_use(env):
        return ["<answer>%s</answer>" % env._expected_answer]
    try:
        sol = env.solution() if callable(getattr(env, "solution", None)) else None
    except Exception:
        return None
    if isinstance(sol, (list, tuple)):
        return [str(a) for a in sol]
    return None if sol is None else ["\\boxed{%s}" % (sol,)]


def guess(env, rng):
    if is_tool_use(env):
        return "<answer>%s</answer>" % rng.choice(["unknown", "0", "done?", str(rng.randint(1, 100))])
    return "\\boxed{%d}" % rng.randint(1, 100)


def play_episode(cls, budget, seed, hint, rng, p_solve):
    """One episode through SPADE's runtime wrapper rules; returns the training return."""
    env = instantiate(cls, budget)
    try:
        obs, _ = as_reset(limited(env.reset, seed=seed))
    except Exception:
        obs = "Error during reset. Starting new game."
    if hint:
        obs = "%s\n\nHINT: %s" % (obs, hint)
    plan = demonstration_plan(env, rng, p_solve)
    reward, terminated = 0.0, False
    for turn in range(budget):
        action = plan[turn] if plan and turn < len(plan) else guess(env, rng)
        try:
            res = limited(env.step, action[:100000])
            if not (isinstance(res, tuple) and len(res) == 5):
                res = ("Invalid game response", -1.0, True, False, {})
        except Exception as e:
            res = ("Error: %s" % e, -1.0, True, False, {})
        obs, reward, terminated, truncated = res[0], float(res[1]), bool(res[2]), bool(res[3])
        if terminated or truncated:
            break
    return max(-1.0, min(1.0, reward)) if terminated else 0.0


def win_share(returns):
    """SPADE's win rate: the share of plays whose return is above 0."""
    return sum(1 for r in returns if r > 0) / max(len(returns), 1)


def skill_slug(skill):
    """SPADE's file-name slug: lower case, spaces to underscores (a hyphen stays)."""
    return re.sub(r"[^a-z0-9_-]+", "", skill.lower().replace(" ", "_")) or "game"


def read_pool(pool):
    """Cognitive games (games/*.py with <stem>_hint.txt) and tool-use programs (tool-use/manifest.json)."""
    entries = []
    meta = {}
    for name in ("manifest.jsonl",):
        p = os.path.join(pool, name)
        if os.path.exists(p):
            with open(p, encoding="utf-8") as fh:
                for line in fh:
                    line = line.strip()
                    if line:
                        try:
                            rec = json.loads(line)
                            meta[os.path.basename(str(rec.get("file") or rec.get("game_file") or rec.get("path") or ""))] = rec
                        except ValueError:
                            pass
    games_dir = os.path.join(pool, "games") if os.path.isdir(os.path.join(pool, "games")) else pool
    for name in sorted(os.listdir(games_dir)) if os.path.isdir(games_dir) else []:
        if not name.endswith(".py") or name.startswith("_"):
            continue
        path = os.path.join(games_dir, name)
        stem = name[:-3]
        hint_path = os.path.join(games_dir, stem + "_hint.txt")
        hint = open(hint_path, encoding="utf-8").read().strip() if os.path.exists(hint_path) else ""
        side = {}
        side_path = os.path.join(games_dir, stem + ".json")
        if os.path.exists(side_path):
            try:
                side = json.load(open(side_path, encoding="utf-8"))
            except ValueError:
                side = {}
        with open(path, "rb") as fh:
            raw = fh.read()
        source = raw.decode("utf-8", errors="replace")
        skill = (side.get("skill") if isinstance(side, dict) else None) or (meta.get(name) or {}).get("skill") \
            or skill_from_source(source)
        entries.append({"path": path, "stem": stem, "hint": hint, "skill": skill, "kind": "game", "source": source,
                        "sha256": hashlib.sha256(raw).hexdigest()})
    manifest = os.path.join(pool, "tool-use", "manifest.json")
    if os.path.exists(manifest):
        with open(manifest, encoding="utf-8") as fh:
            data = json.load(fh)
        items = data if isinstance(data, list) else data.get("environments") or data.get("entries") or []
        for rec in items:
            f = rec.get("file") or rec.get("path") or rec.get("filename")
            if not f:
                continue
            path = os.path.join(pool, "tool-use", f)
            if os.path.exists(path):
                stem = os.path.splitext(os.path.basename(path))[0]
                hint_path = os.path.join(os.path.dirname(path), stem + "_hint.txt")
                hint = rec.get("hint") or (open(hint_path, encoding="utf-8").read().strip() if os.path.exists(hint_path) else "")
                entries.append({"path": path, "stem": stem, "hint": hint, "skill": rec.get("skill") or "Tool Selection", "kind": "tool"})
    return entries


def skill_from_source(source):
    m = re.search(r"(?im)^\s*#\s*skill\s*:\s*(.+)$", source) or re.search(r"(?i)skill\s*[:=]\s*['\"]([^'\"]+)['\"]", source)
    if m:
        return m.group(1).strip()
    for s in SKILLS:
        if s.lower() in source.lower():
            return s
    return SKILLS[0]


def emit(metrics, metrics_path):
    line = json.dumps(metrics, sort_keys=False)
    print(line, flush=True)
    with open(metrics_path, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")


TURNS = re.compile(r"(def __init__\(\s*self\s*,\s*max_turns\s*=\s*)(\d+)")
FIRST_ENV_CLASS = re.compile(r"^class\s+(\w*Env)\b", re.M)


def design_variant(parent, rng, rollout):
    """The scripted designer: the parent's rules with another turn allowance, under a new class name.

    Returns (source, class name, turns, parent turns), or None when the parent has no max_turns
    default to change (tool-use environments, games written another way)."""
    source = parent["source"]
    m = TURNS.search(source)
    cls = FIRST_ENV_CLASS.search(source)
    if not m or not cls:
        return None
    designed = int(m.group(2))
    turns = rng.choice([t for t in range(max(1, designed - 2), designed + 4) if t != designed])
    old = cls.group(1)
    new = "%s%dTurnsEnv" % (re.sub(r"(\d+Turns)?Env$", "", old), turns)
    body = source
    if body.lstrip().startswith(GAME_HEADER):
        body = body.lstrip()[len(GAME_HEADER):].lstrip("\n")
    body = TURNS.sub(lambda mm: mm.group(1) + str(turns), body, count=1)
    body = re.sub(r"\b%s\b" % re.escape(old), new, body)
    note = ("# Written by the example run's scripted designer (not a language model) in rollout %d: a variant\n"
            "# of %s (%s, sha256 %s) with %d turns instead of %d.\n"
            % (rollout, old, os.path.basename(parent["path"]), parent["sha256"][:16], turns, designed))
    return GAME_HEADER + "\n" + note + body, new, turns, designed


def write_text(path, text):
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pool", default=os.environ.get("SPADE_POOL_DIR") or os.path.join(here, "..", "..", "seed-pack"))
    ap.add_argument("--output", default=os.environ.get("OUTPUT_DIR") or os.path.join(os.getcwd(), ".spade_runs", "example"))
    ap.add_argument("--games-dir", default=os.environ.get("GAMES_DIR") or "")
    ap.add_argument("--rollouts", type=int, default=int(os.environ.get("SPADE_ROLLOUTS", "4")))
    ap.add_argument("--batch", type=int, default=4, help="new environments per rollout step")
    ap.add_argument("--episodes", type=int, default=4, help="episodes per environment and condition")
    ap.add_argument("--max-turns", type=int, default=int(os.environ.get("MAX_TURNS", "25")))
    ap.add_argument("--p-hint", type=float, default=0.75)
    ap.add_argument("--p-no-hint", type=float, default=0.25)
    ap.add_argument("--step-delay", type=float, default=float(os.environ.get("SPADE_STEP_DELAY", "0")),
                    help="seconds to wait between rollout steps, so a short run can be watched")
    ap.add_argument("--seed", type=int, default=None, help="repeat an earlier run's choices (default: a fresh seed, printed)")
    args = ap.parse_args(argv)

    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    output = os.path.abspath(args.output)
    games_dir = os.path.abspath(args.games_dir) if args.games_dir else os.path.join(output, "spade_games")
    cache_dir = os.path.join(output, "spade_games_cache")
    rejected_dir = os.path.join(os.path.dirname(games_dir), "spade_games_rejected")
    for d in (output, games_dir, cache_dir):
        os.makedirs(d, exist_ok=True)
    metrics_path = os.path.join(output, "metrics.jsonl")
    memory_path = os.path.join(cache_dir, "env_memory.json")

    print("spade-example-run: miniature SPADE run (no GPU, nothing trained)", flush=True)
    print(DESIGNER_NOTICE, flush=True)
    print(POLICY_NOTICE, flush=True)
    try:
        import numpy
        numpy_line = "numpy %s" % numpy.__version__
    except ImportError:
        numpy_line = "no numpy: games that use it are rejected, as SPADE rejects them"
    print("python: %s (%s)" % (sys.executable, numpy_line), flush=True)
    print("seed: %d (pass --seed %d to repeat this run)" % (seed, seed), flush=True)
    print("pool: %s" % os.path.abspath(args.pool), flush=True)
    print("output: %s" % output, flush=True)
    pool = [e for e in read_pool(args.pool) if e["kind"] == "game"]
    if not pool:
        print("error: no games found in the pool %s (expected games/*.py)" % args.pool, file=sys.stderr, flush=True)
        return 2
    memory = []
    if os.path.exists(memory_path):
        try:
            memory = json.load(open(memory_path, encoding="utf-8"))
        except ValueError:
            memory = []
    cursor = 0
    for rollout in range(1, args.rollouts + 1):
        step_dir = os.path.join(cache_dir, "step_%05d" % rollout)
        os.makedirs(step_dir, exist_ok=True)
        per_env = []
        rejected = 0
        for idx in range(args.batch):
            design = None
            for _ in range(len(pool)):
                parent = pool[cursor % len(pool)]
                cursor += 1
                design = design_variant(parent, rng, rollout)
                if design:
                    break
            if not design:
                print("rollout %d: the designer found no game in the pool it can vary (no max_turns default)" % rollout, flush=True)
                break
            source, class_name, turns, designed = design
            skill = parent["skill"]
            stem = "game_%05d_%03d_%s" % (rollout, idx, skill_slug(skill))
            try:
                cls = validate(source, args.max_turns)
            except Rejected as r:
                rejected += 1
                os.makedirs(rejected_dir, exist_ok=True)
                base = os.path.join(rejected_dir, "reject_%05d_%03d_%s_env_validator" % (rollout, idx, skill_slug(skill)))
                write_text(base + ".py", source)
                write_text(base + ".reason.txt", r.reason + "\n")
                print("rollout %d: rejected %s, a variant of %s (%s)" % (rollout, class_name, parent["stem"], r.reason), flush=True)
                continue
            parents = [{"name": FIRST_ENV_CLASS.search(parent["source"]).group(1), "file": os.path.basename(parent["path"]),
                        "sha256": parent["sha256"]}]
            hint = parent["hint"]
            r_hint = statistics.mean(play_episode(cls, args.max_turns, 1000 * rollout + e, hint, rng, args.p_hint)
                                     for e in range(args.episodes))
            plays = [play_episode(cls, args.max_turns, 2000 * rollout + e, "", rng, args.p_no_hint)
                     for e in range(args.episodes)]
            r_no_hint = statistics.mean(plays)
            regret = r_hint - r_no_hint
            game_path = os.path.join(games_dir, stem + ".py")
            # The spec first: whoever picks up the game finds its parent already beside it.
            with open(os.path.join(games_dir, stem + ".json"), "w", encoding="utf-8") as fh:
                json.dump({"name": class_name, "skill": skill, "kind": "game", "parents": parents,
                           "designer": "example run: scripted variant (not a language model)",
                           "variant": {"max_turns": turns, "parent_max_turns": designed}}, fh, indent=1)
            write_text(game_path, source)
            shutil.copyfile(game_path, os.path.join(step_dir, stem + ".py"))
            write_text(os.path.join(step_dir, stem + "_hint.txt"), hint + "\n")
            per_env.append({"stem": stem, "skill": skill, "r_hint": r_hint, "r_no_hint": r_no_hint, "regret": regret,
                            "plays": plays})
            # SPADE's memory record: actor_win_rate is the share of the actor's plays with a return
            # above 0 (spade/slime/spade_rollout.py:728).
            memory.append({"game_file": game_path, "skill": skill, "code_snippet": source[:2000],
                           "actor_win_rate": win_share(plays), "regret": regret, "rollout_id": rollout,
                           "metadata": {"hint": hint[:200], "hint_full": hint, "r_hint": r_hint, "r_no_hint": r_no_hint,
                                        "parents": parents, "policy": "scripted-demonstration"}})
            print("rollout %d: %s (%s, from %s) r_hint=%.3f r_no_hint=%.3f regret=%.3f"
                  % (rollout, stem, class_name, parent["stem"], r_hint, r_no_hint, regret), flush=True)
            # The per-game line SPADE prints (spade/core/orchestrator.py:2051), the only place a run writes both returns.
            print("[REGRET] %s.py: R(hint)=%.3f, R(no_hint)=%.3f, regret=%.3f" % (stem, r_hint, r_no_hint, regret), flush=True)
        memory = memory[-200:]
        tmp = memory_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(memory, fh, indent=1)
        os.replace(tmp, memory_path)
        total = len(per_env) + rejected
        # SPADE's names with SPADE's meanings (one definition per name), from the plays this rollout made:
        # spade/slime/spade_rollout.py:754-759, spade/core/utils/env_rewards.py:256-300, orchestrator.py:2333, 2444.
        # Nothing is trained here, so there is no rollout/mean_return (the mean of the trained samples' rewards).
        metrics = {"rollout/step": rollout}
        plays = [r for e in per_env for r in e["plays"]]
        if per_env:
            metrics["rollout/actor_mean_original_reward"] = statistics.mean(plays)
            metrics["rollout/actor_win_rate"] = win_share(plays)
            metrics["env/avg_actor_win_rate"] = statistics.mean(plays)
            metrics["env/avg_regret"] = statistics.mean(e["regret"] for e in per_env)
            metrics["env/avg_r_hint"] = statistics.mean(e["r_hint"] for e in per_env)
            metrics["env/avg_r_no_hint"] = statistics.mean(e["r_no_hint"] for e in per_env)
        metrics["env_validation_pass_rate"] = (len(per_env) / total) if total else 0.0
        by_skill = collections.defaultdict(list)
        for e in per_env:
            by_skill[e["skill"].replace(" ", "_")].append(e)
        for s, es in sorted(by_skill.items()):
            skill_plays = [r for e in es for r in e["plays"]]
            metrics["env/skill_%s/mean_regret" % s] = statistics.mean(max(0.0, e["regret"]) for e in es)
            metrics["env/skill_%s/r_hint" % s] = statistics.mean(e["r_hint"] for e in es)
            metrics["env/skill_%s/r_no_hint" % s] = statistics.mean(e["r_no_hint"] for e in es)
            # A mean reward, not a share of wins: that is what SPADE logs under this name.
            metrics["env/skill_%s/actor_win_rate" % s] = statistics.mean(skill_plays)
            metrics["actor/skill_%s/avg_reward" % s] = statistics.mean(skill_plays)
        emit(metrics, metrics_path)
        if args.step_delay > 0 and rollout < args.rollouts:
            time.sleep(args.step_delay)
    print("spade-example-run: done (%d rollout steps)" % args.rollouts, flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception:
        traceback.print_exc()
        sys.exit(1)
