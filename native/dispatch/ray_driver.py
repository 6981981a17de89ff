"""
The driver of a pool audit on Ray, run by the Jobs API as the job's entrypoint in the job's
working_dir (this folder's parent is the harness, shipped as runtime_env working_dir, which every
task of the job gets too). Each shard is one Ray task, a streaming generator that yields each
environment's raw result as it finishes (shard_audit.py); the driver prints each as one
`@spade-audit-result` line, which the workbench reads from the job's log as it follows logs.

Use: python ray_driver.py CONFIG.json ITEMS.jsonl
  CONFIG adds to shard_audit's: shardSize (items per task), cpusPerTask, runner (the shard runner
  module a task imports: shard_audit, the default, or shard_regret; both yield from iter_items).
"""
# Hints stay unevaluated: a cluster node's python may be older than the one mypy checks for.
from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ray  # noqa: E402


def main(argv: list[str]) -> None:
    with open(argv[1]) as f:
        cfg = json.load(f)
    with open(argv[2]) as f:
        items = [json.loads(line) for line in f if line.strip()]
    size = max(1, int(cfg.get("shardSize", 30)))
    shards = [items[i:i + size] for i in range(0, len(items), size)]
    ray.init()
    cpus = float(cfg.get("cpusPerTask", 1))

    @ray.remote(num_cpus=cpus, num_returns="streaming", max_retries=0)
    def audit_shard(items: list[dict[str, Any]], cfg: dict[str, Any]) -> Iterator[dict[str, Any]]:
        # A task starts in its own copy of the working_dir, whose root (not this folder) is on sys.path.
        here = os.path.join(os.getcwd(), "native", "dispatch")
        if here not in sys.path:
            sys.path.insert(0, here)
        import importlib

        shard = importlib.import_module(str(cfg.get("runner") or "shard_audit"))
        task_cfg = dict(cfg)
        # The task's own copy of the working_dir: that is the harness bound into its sandbox.
        task_cfg["harness"] = os.path.abspath(os.path.join(here, ".."))
        task_cfg["workers"] = max(1, int(cpus))
        for r in shard.iter_items(items, task_cfg):
            yield r

    lock = threading.Lock()
    print("@spade-audit-start " + json.dumps({"shards": len(shards), "environments": len(items)}), flush=True)

    def follow(i: int, gen: Iterable[Any]) -> None:
        try:
            for ref in gen:
                r = ray.get(ref)
                with lock:
                    sys.stdout.write("@spade-audit-result " + json.dumps(r) + "\n")
                    sys.stdout.flush()
        except Exception as e:  # the shard's missing environments are submitted again by the workbench
            with lock:
                print("@spade-audit-shard-failed " + json.dumps({"shard": i, "error": "%s: %s" % (type(e).__name__, str(e)[-2000:])}), flush=True)

    threads = [threading.Thread(target=follow, args=(i, audit_shard.remote(s, cfg))) for i, s in enumerate(shards)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("@spade-audit-end " + json.dumps({"environments": len(items)}), flush=True)


if __name__ == "__main__":
    main(sys.argv)
