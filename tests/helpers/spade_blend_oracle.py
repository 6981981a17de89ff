"""SPADE's own designer blend, run from a checkout, for the blend differential test.

Reads JSON rows on stdin ({"meanReward", "regret", "overrides"}), runs SPADE's
recompute_delayed_env_rewards_blend (spade/core/utils/delayed_env_rewards.py:368, at the commit
the checkout holds) once per row with the recipes' settings (cmd/games/train_spade_8b.sh:122-127)
and the row's overrides, and prints what SPADE left in each sample's metadata. Nothing of SPADE's
logic is re-written here: a game is one sample whose step-keyed plays are {0: [0.0], 1: [2 * mean]}
(so SPADE's win_rate is `mean` and its r_no_hint at offset 0 is 0.0) and whose cached hint reward is
`regret` (so SPADE's regret is exactly `regret`); a null mean means no plays, a null regret no
cached hint reward. The same construction made tests/fixtures/spade-blend.json.
"""

import json
import sys
from types import SimpleNamespace
from typing import Any


def main() -> None:
    sys.path.insert(0, sys.argv[1])
    from spade.core.utils.delayed_env_rewards import recompute_delayed_env_rewards_blend

    recipe: dict[str, Any] = {"regret_weight": 0.4, "plateau_weight": 0.6, "regret_floor": True, "regret_scale": 0.15, "micro_lp_weight": 0.0}
    out = []
    for row in json.load(sys.stdin):
        sample = SimpleNamespace(metadata={"game_file": "g.py", "skill": "s"}, reward=0.0)
        plays: dict[str, dict[int, list[float]]] = {}
        if row["meanReward"] is not None:
            plays["g.py"] = {0: [0.0], 1: [2 * row["meanReward"]]}
        hints: dict[str, float] = {} if row["regret"] is None else {"g.py": row["regret"]}
        recompute_delayed_env_rewards_blend([sample], plays, hints, 1.0, **{**recipe, **row["overrides"]})
        m = sample.metadata
        out.append({"blend": m["blend_raw"], "plateau": m["plateau"], "win_rate": m["win_rate"], "regret": m["regret"], "masked": bool(m.get("proposer_masked", False))})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
