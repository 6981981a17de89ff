"""Writes tests/fixtures/eval-offline/: results.json files made by SPADE's own eval_offline code.

    python3 scripts/eval-offline-fixture.py SPADE_SRC [OUT]

SPADE_SRC is a SPADE checkout at 9b2b813 (tests use /work/spade-src, or `git archive` of the mirror).
Nothing of SPADE's is copied here: this imports eval_offline.results from SPADE_SRC and lets its
RunResult.write (eval_offline/results.py:46-48, to_dict at :32-44) write each file, the way
run_offline_eval.main does (eval_offline/run_offline_eval.py:157-161 the run, :208-233 each suite's
result, where a suite's own `"skipped": True` is popped into SuiteResult.skipped, :276-278 the file).
The metric names are the ones the suites return (eval_offline/suites/aime.py:145-150,
gpqa_diamond.py:136-144, livecodebench.py:219-230, gem.py:69 via
spade/core/eval/gem_evaluator.py:58-84); the numbers are made up for the tests.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from typing import Any


def load_results(spade_src: Path) -> Any:
    # eval_offline/results.py alone (its package __init__ reaches for transformers).
    spec = importlib.util.spec_from_file_location("spade_eval_results", spade_src / "eval_offline" / "results.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["spade_eval_results"] = mod
    spec.loader.exec_module(mod)
    return mod


def suite(r: Any, name: str, metrics: dict[str, Any], elapsed: float, error: str | None = None) -> Any:
    skipped = bool(metrics.pop("skipped", False))
    return r.SuiteResult(name=name, metrics=metrics, elapsed_sec=elapsed, skipped=skipped, error=error)


def gem(win: float, reward: float) -> dict[str, Any]:
    return {
        "gem_eval/overall_win_rate": win,
        "gem_eval/overall_mean_reward": reward,
        "gem_eval/overall_mean_turns": 3.5,
        "gem_eval/total_episodes": 400.0,
        "gem_eval/total_tasks": 100.0,
        "gem_eval/errors": 0.0,
        "gem_eval/category_rg_math/win_rate": win - 0.05,
        "gem_eval/category_rg_logic/win_rate": win + 0.05,
    }


def write(r: Any, out: Path, ckpt: str, started: str, suites: list[Any]) -> None:
    run = r.RunResult(ckpt=ckpt, ckpt_resolved=ckpt, started_at=started)
    for s in suites:
        run.add(s)
    run.elapsed_sec = sum(s.elapsed_sec for s in suites)
    run.write(out / "results.json")


def main() -> None:
    spade_src = Path(sys.argv[1])
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "eval-offline"
    r = load_results(spade_src)
    save = "/runs/spade/Qwen3-8B_games_blend_thinking"
    write(r, out / "iter_0000015", f"{save}/iter_0000015_hf", "2026-05-02T10:00:00Z", [
        suite(r, "aime", {"aime2025_pass1": 0.2125, "aime2025_pass_at_64": 0.6, "aime2025_n_problems": 30, "aime2025_n_samples": 1920,
                          "aime2026_pass1": 0.1875, "aime2026_pass_at_64": 0.5333, "aime2026_n_problems": 30, "aime2026_n_samples": 1920}, 812.4),
        suite(r, "gpqa_diamond", {"gpqa_diamond_avg_at_8": 0.4205, "gpqa_diamond_pass_at_8": 0.7879, "gpqa_diamond_avg_at_n": 0.4205,
                                  "gpqa_diamond_pass_at_n": 0.7879, "gpqa_diamond_n_problems": 198, "gpqa_diamond_n_samples": 1584}, 301.0),
        suite(r, "livecodebench", {"skipped": True}, 0.1),
        suite(r, "gem", gem(0.31, 0.29), 640.2),
    ])
    write(r, out / "iter_0000031", f"{save}/iter_0000031_hf", "2026-05-03T10:00:00Z", [
        suite(r, "aime", {"aime2025_pass1": 0.2604, "aime2025_pass_at_64": 0.6333, "aime2025_n_problems": 30, "aime2025_n_samples": 1920,
                          "aime2026_pass1": math.nan, "aime2026_pass_at_64": math.nan, "aime2026_n_problems": 0, "aime2026_n_samples": 0}, 798.0),
        suite(r, "gpqa_diamond", {"gpqa_diamond_avg_at_8": 0.4432, "gpqa_diamond_pass_at_8": 0.8081, "gpqa_diamond_avg_at_n": 0.4432,
                                  "gpqa_diamond_pass_at_n": 0.8081, "gpqa_diamond_n_problems": 198, "gpqa_diamond_n_samples": 1584}, 296.5),
        suite(r, "livecodebench", {}, 2.0, error="Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nRuntimeError: LCB_ROOT is not set\n"),
        suite(r, "gem", gem(0.36, 0.33), 655.9),
    ])


if __name__ == "__main__":
    main()
