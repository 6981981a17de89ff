#!/usr/bin/env python3
"""Writes tests/fixtures/spade-logs/tinker-cookbook-metrics.jsonl by running tinker-cookbook's own
JsonLogger (tinker_cookbook/utils/ml_log.py at 2c87e8f, the commit SPADE 9b2b813 pins as its
`tinker-cookbook` submodule) on metric dicts shaped as SPADE's Tinker trainer builds them.

Nothing of either project is copied into the workbench: the cookbook's ml_log.py is read from the
mirror at run time, into a temporary folder, beside stand-ins for the three imports it makes at load
(chz, rich, tinker_cookbook.utils.code_state) that JsonLogger.log_metrics never calls. The metric
names are SPADE's (file:line below); the values are made up.

    python3 scripts/tinker-metrics-fixture.py [COOKBOOK_MIRROR_GIT_DIR] [COMMIT]
"""
import importlib
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIRROR = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/thinking-machines-lab+tinker-cookbook/repo"
COMMIT = sys.argv[2] if len(sys.argv) > 2 else "2c87e8f4dd0d311c97e3ef95d4c2115548fb5d39"
OUT = os.path.join(ROOT, "tests", "fixtures", "spade-logs", "tinker-cookbook-metrics.jsonl")

# Stand-ins for what ml_log.py imports at load and log_metrics does not use.
STUBS = {
    "chz/__init__.py": "def is_chz(x):\n    return False\n",
    "rich/__init__.py": "",
    "rich/console.py": "class Console:\n    pass\n",
    "rich/table.py": "class Table:\n    pass\n",
    "tinker_cookbook/__init__.py": "",
    "tinker_cookbook/utils/__init__.py": "",
    "tinker_cookbook/utils/code_state.py": "def code_state():\n    return ''\n",
}

SKILLS = ["Mathematical_Reasoning", "Pattern_Recognition"]


def batch_metrics(i_batch: int, num_batches: int) -> dict:
    """One batch's dict, in the order SPADE fills it (train_spade_tinker.py:201-265)."""
    m: dict = {
        # train_spade_tinker.py:201-205
        "progress/batch": i_batch,
        "optim/lr": 1e-06,
        "progress/done_frac": (i_batch + 1) / num_batches,
    }
    if i_batch % 2 == 0:
        # AIME evaluators at eval_every (train_spade_tinker.py:207-213; spade/tinker/evaluators.py:183-188,
        # names aime2024/aime2025 from :225, :235)
        for name, solved in (("aime2024", 3 + i_batch), ("aime2025", 2 + i_batch)):
            m[f"{name}/pass@4"] = solved / 30
            m[f"{name}/sample_accuracy"] = solved / 60
            m[f"{name}/problems_solved"] = solved
            m[f"{name}/total_problems"] = 30
        # fixed-model evaluation at fixed_eval_interval (train_spade_tinker.py:215-232;
        # spade/core/eval/fixed_model_eval.py:73-89)
        m["fixed_eval/overall_pass_rate"] = 0.5 - 0.05 * i_batch
        m["fixed_eval/difficulty_score"] = 0.25 + 0.05 * i_batch
        m["fixed_eval/total_games"] = 16.0
    # spade/tinker/rollout.py:219-237 (collect_info's keys from rollout.py:304, 350-352, 426-427 and
    # spade/core/orchestrator.py's play_games_async info; env/* from spade/core/utils/env_rewards.py:148-175)
    actor = [0.25 * i_batch, 0.5, 0.0]
    env = [1.0, 0.0]
    m.update({
        "rollout/num_actor_trajectories": 112,
        "rollout/num_env_trajectories": 16,
        "rollout/num_games": 16,
        "rollout/mode": "async",
        "rollout/mean_return": sum(actor + env) / len(actor + env),
        "rollout/actor_mean_return": sum(actor) / len(actor),
        "rollout/env_mean_return": sum(env) / len(env),
        "num_games_generated": 16 if i_batch % 4 == 0 else 0,
        "num_instances": 128,
        "num_succeeded": 126,
        "num_failed": 2,
        "avg_turns": 2.5,
        "avg_reward": 0.375,
        "actor/all_zero_std": 0.25,
    })
    for k, skill in enumerate(SKILLS):
        # float(np.mean([])) is nan (an unplayed skill): json.dumps writes it NaN.
        m[f"actor/skill_{skill}/avg_reward"] = math.nan if (i_batch == 1 and k == 1) else 0.3 + 0.1 * k
        m[f"env/skill_{skill}/actor_win_rate"] = 0.4 + 0.1 * k
    m["env/avg_actor_win_rate"] = 0.45
    m["batch/variant"] = 1
    m["batch/num_env"] = 16
    m["rollout/max_return"] = max(actor + env)
    m["rollout/min_return"] = min(actor + env)
    # spade/tinker/train_step.py:98-124 (time/* from tinker_cookbook/utils/misc_utils.py:19 `timed`;
    # train/loss:sum is the key SPADE reads from Tinker's forward_backward metrics at :128)
    m["time/forward_backward"] = 30.5
    m["time/optim_step"] = 2.25
    m["train/loss:sum"] = 12.5 - i_batch
    m["train/num_actor_transitions"] = 280
    m["train/num_env_transitions"] = 16
    m["train/total_transitions"] = 296
    m["train/num_datums"] = 296
    m["train/advantage_scale"] = 7.0
    m["train/env_transition_ratio"] = 16 / 296
    m["time/total"] = 120.0 + i_batch  # train_spade_tinker.py:264
    return m


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for rel, text in STUBS.items():
            os.makedirs(os.path.join(tmp, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(tmp, rel), "w") as f:
                f.write(text)
        source = subprocess.run(["git", "-C", MIRROR, "show", f"{COMMIT}:tinker_cookbook/utils/ml_log.py"], check=True, capture_output=True, text=True).stdout
        with open(os.path.join(tmp, "tinker_cookbook", "utils", "ml_log.py"), "w") as f:
            f.write(source)
        sys.path.insert(0, tmp)
        ml_log = importlib.import_module("tinker_cookbook.utils.ml_log")
        log_dir = os.path.join(tmp, "run")
        logger = ml_log.JsonLogger(log_dir)
        num_batches = 4
        for i_batch in range(num_batches):
            logger.log_metrics(batch_metrics(i_batch, num_batches), step=i_batch)  # train_spade_tinker.py:265
        with open(os.path.join(log_dir, "metrics.jsonl")) as f:
            text = f.read()
    with open(OUT, "w") as f:
        f.write(text)
    print(f"{OUT}: {text.count(chr(10))} lines from tinker_cookbook/utils/ml_log.py at {COMMIT[:7]}")


if __name__ == "__main__":
    main()
