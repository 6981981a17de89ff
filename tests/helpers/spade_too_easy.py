"""SPADE's offline too-easy test written out plainly, as SPADE-FORMATS.md sections 2 and 5 describe
it, for comparison with the audit's `too-easy` check (our own fixtures and seed pack only: no
sandbox). For each file: a load as SPADE's env factory makes it (exec in a fresh namespace with the
process-global `random` pre-bound, first class ending in Env, Cls() then Cls(max_turns=30) on
TypeError, reset(42), up to three probe steps, reset(123)); then 20 runs of reset(seed=run) and up to
five steps with \\boxed{randint(1, 100)} from the global random, each step converted as SPADE's
wrapper converts it (a raise is a -1.0 terminal step), a run won at the first reward above 0.
Prints one JSON object: {file: wins}.
Usage: python spade_too_easy.py FILE...
"""

import json
import random
import sys


def load(source):
    ns = {"__name__": "dynamic_game", "random": random}
    exec(compile(source, "<game>", "exec"), ns)
    cls = next(v for k, v in ns.items() if k.endswith("Env") and k not in ("Env", "ToolUseBaseEnv") and callable(v))
    try:
        env = cls()
    except TypeError:
        env = cls(max_turns=30)
    env.reset(seed=42)
    for probe in ("\\boxed{1}", "\\boxed{test}", "\\boxed{42}"):
        _o, _r, te, tr, _i = env.step(probe)
        if te or tr:
            break
    env.reset(seed=123)
    return env


def wrapper_step(env, action):
    try:
        ret = env.step(action)
    except Exception:
        return -1.0, True, False
    if not (isinstance(ret, tuple) and len(ret) == 5):
        return -1.0, True, False
    _obs, reward, te, tr, _info = ret
    return (0.0 if reward is None else float(reward)), bool(te), bool(tr)


def wins(source):
    env = load(source)
    won = 0
    for run in range(20):
        try:
            env.reset(seed=run)
        except Exception:
            pass
        for _ in range(5):
            reward, te, tr = wrapper_step(env, "\\boxed{" + str(random.randint(1, 100)) + "}")
            if reward > 0:
                won += 1
                break
            if te or tr:
                break
    return won


print(json.dumps({path: wins(open(path, encoding="utf-8").read()) for path in sys.argv[1:]}))
