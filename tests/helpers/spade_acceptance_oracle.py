"""SPADE's own acceptance functions on a set of game files, for the differential test
(tests/integration/design/spadeAcceptance.diff.test.ts). Nothing of SPADE is copied or stubbed: its
modules are imported from the checkout in SPADE_SRC and called as SPADE calls them.

- validate_game(game_file)                      spade/core/utils/game_files.py:11
- criteria_throw_at_reset(game_file, max_turns) spade/core/envs/synthetic_game_env.py:487
- test_game_difficulty(game_file)               spade/core/generate_and_validate_games.py:23
  (its module imports tqdm: when that is missing the guess verdicts are null and `missing` says so)

Each game is written as SPADE's trainer writes it (save_game_file, game_files.py:26) and run in a
process of its own (a game's module state and the process-global random must not leak between
games). The random-guess test draws from the process-global random, unseeded in SPADE: it is run
GUESS_RUNS times here with random.seed(k) before run k, so the caller can tell a verdict the
game's own seeding fixes from one that depends on the draw.

Usage: SPADE_SRC=DIR python spade_acceptance_oracle.py MAX_TURNS FILE...   -> one JSON object
SPADE_ORACLE_PATH: more folders for sys.path (SPADE's own dependencies installed apart, e.g. tqdm),
kept out of PYTHONPATH so the workbench's interpreters in the same test never see them.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from typing import Any

GUESS_RUNS = 4


def one(path: str, max_turns: int) -> dict[str, Any]:
    sys.path.insert(0, os.environ["SPADE_SRC"])
    sys.path.extend(p for p in os.environ.get("SPADE_ORACLE_PATH", "").split(os.pathsep) if p)
    logging.disable(logging.CRITICAL)
    import random
    import tempfile
    from pathlib import Path

    from spade.core.envs.synthetic_game_env import criteria_throw_at_reset
    from spade.core.utils.game_files import save_game_file, validate_game

    out: dict[str, Any] = {"missing": None}
    with tempfile.TemporaryDirectory() as d:
        code = Path(path).read_text()
        game_file = save_game_file(code, Path(d), 1, 0, "Logical Deduction")
        out["validate_game"] = bool(validate_game(game_file))
        out["reset_gate_rejects"] = bool(criteria_throw_at_reset(str(game_file), max_turns))
        try:
            from spade.core.generate_and_validate_games import test_game_difficulty
        except ImportError as e:
            out["missing"] = getattr(e, "name", None) or str(e)
            out["guess"] = None
            return out
        guesses = []
        for k in range(GUESS_RUNS):
            random.seed(k)
            try:
                valid, rate = test_game_difficulty(str(game_file))
                guesses.append({"valid": bool(valid), "rate": float(rate)})
            except Exception as e:  # its load raised: generate_and_validate_games rejects the game
                guesses.append({"valid": False, "rate": None, "error": type(e).__name__})
        out["guess"] = guesses
    return out


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        print(json.dumps(one(sys.argv[3], int(sys.argv[2]))))
        return
    max_turns = int(sys.argv[1])
    results: dict[str, Any] = {}
    for path in sys.argv[2:]:
        p = subprocess.run([sys.executable, __file__, "--one", str(max_turns), path], capture_output=True, text=True, timeout=300)
        lines = [x for x in p.stdout.splitlines() if x.startswith("{")]
        results[os.path.basename(path)] = json.loads(lines[-1]) if p.returncode == 0 and lines else {"error": (p.stderr or p.stdout)[-500:]}
    print(json.dumps(results))


if __name__ == "__main__":
    main()
