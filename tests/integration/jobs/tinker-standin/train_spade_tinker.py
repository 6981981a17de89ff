# STAND-IN for SPADE's train_spade_tinker.py (github:spade-rl/spade at 9b2b813). Not SPADE's code: a
# small script shaped like it, for tests/integration/jobs/tinker-recipe.test.ts, which runs SPADE's own
# cmd/tinker/*/train_spade_tinker.sh launchers (copied unchanged from SPADE_SRC) against it.
#
# What it does as SPADE's trainer does (so the recipe's fixes are tested against the real behaviour):
# - takes `key=value` arguments as chz.entrypoint(SpadeConfig) does, refusing a key SpadeConfig does not
#   declare; the declared names are read at run time from SPADE's own file (STANDIN_SPADE_SRC), lines
#   `    name: type = ...` of `class SpadeConfig` (train_spade_tinker.py:38-151), nothing copied here;
# - asks on stdin what to do when log_path already exists, as tinker-cookbook's
#   cli_utils.check_log_dir(log_path, behavior_if_exists="ask") does (train_spade_tinker.py:377), so
#   with no answer input() raises EOFError;
# - needs TINKER_API_KEY in its environment (tinker.ServiceClient, train_spade_tinker.py:319);
# - appends `json.dumps({"step": i, **metrics})` lines to <log_path>/metrics.jsonl, as the cookbook's
#   JsonLogger does (ml_log.py:138-145 at 2c87e8f).
# It also writes <log_path>/standin.json: the argument names it got and a SHA-256 of the key (never the key).
import hashlib
import json
import os
import re
import shutil
import sys


def declared_fields() -> set:
    src = os.path.join(os.environ["STANDIN_SPADE_SRC"], "train_spade_tinker.py")
    text = open(src).read()
    body = text[text.index("class SpadeConfig"):]
    body = body[: body.index("\n\n\n")] if "\n\n\n" in body else body
    return set(re.findall(r"^    ([a-z_][a-z0-9_]*): ", body, re.M))


def main() -> int:
    fields = declared_fields()
    args = {}
    for a in sys.argv[1:]:
        key, sep, value = a.partition("=")
        if not sep:
            print(f"stand-in: not key=value: {a}", file=sys.stderr)
            return 2
        if key not in fields:
            print(f"stand-in: SpadeConfig declares no field {key!r} (chz refuses it)", file=sys.stderr)
            return 2
        args[key] = value
    log_path = args.get("log_path", "")
    if os.path.exists(log_path):
        while True:
            answer = input(f"Log directory {log_path} already exists. What do you want to do? [delete, resume, exit]: ")
            if answer == "delete":
                shutil.rmtree(log_path)
                break
            if answer == "resume":
                break
            if answer == "exit":
                return 0
    key = os.environ.get("TINKER_API_KEY")
    if not key:
        print("stand-in: TINKER_API_KEY is not set", file=sys.stderr)
        return 3
    os.makedirs(log_path, exist_ok=True)
    with open(os.path.join(log_path, "standin.json"), "w") as f:
        json.dump({"args": sorted(args), "key_sha256": hashlib.sha256(key.encode()).hexdigest(), "stdin_answered": True}, f)
    for step in range(3):
        metrics = {"progress/batch": step, "rollout/mode": "async", "rollout/env_mean_return": 0.25 * step, "train/loss:sum": 10.0 - step}
        log_entry = {"step": step}
        log_entry.update(metrics)
        with open(os.path.join(log_path, "metrics.jsonl"), "a") as f:
            f.write(json.dumps(log_entry) + "\n")
        print(f"[BATCH {step}] stand-in batch done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
