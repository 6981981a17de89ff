"""STAND-IN for SPADE's trainer (python3 -m train_spade_slime), used only by the jobs tests.

It prints each rollout's metrics the way Slime prints SPADE's (`perf <id>: {<Python dict repr>}` from
slime/ray/rollout.py:1227 in Slime's logger format, numpy 2 scalar reprs, no `rollout/step` in the
dict), then succeeds, fails (STANDIN_FAIL=1: a
traceback and exit 1 after two rollouts) or holds (STANDIN_HOLD=1: sleeps until stopped).
"""
import argparse
import os
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--num-rollout", type=int, default=3)
parser.add_argument("--spade-games-dir", default="")
args = parser.parse_args()


class F:
    """Prints like numpy 2's float64 repr, as Slime's dicts show them."""

    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return "np.float64(%r)" % self.v


for i in range(args.num_rollout):
    metrics = {
        "rollout/mean_return": F(0.25 * (i + 1)),
        "rollout/actor_win_rate": 0.1 * (i + 1),
        "rollout/num_failed": i,
        "env/avg_regret": F(0.5 - 0.1 * i),
        "env_validation_pass_rate": 1.0,
    }
    print("[%s] rollout.py:1227 - perf %d: %r" % (time.strftime("%Y-%m-%d %H:%M:%S"), i, metrics), flush=True)
    if os.environ.get("STANDIN_FAIL") == "1" and i == 1:
        print("Traceback (most recent call last):\n  File \"train.py\", line 1, in <module>\nRuntimeError: CUDA out of memory (stand-in)", file=sys.stderr, flush=True)
        sys.exit(1)
if os.environ.get("STANDIN_HOLD") == "1":
    print("holding until stopped", flush=True)
    time.sleep(600)
print("training done", flush=True)
