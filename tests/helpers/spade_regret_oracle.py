"""SPADE's own regret for one game, computed by SPADE's functions from a checkout (SPADE_SRC).

Used by tests/integration/episodes/spadeRegretDifferential.test.ts. Nothing of SPADE's logic is
re-implemented or replaced here: SPADE's own methods run, unbound from its orchestrator class, on
an object that holds only what they read (the config, the blacklists, the hint generator and the
model). The model and the hint generator are OURS, scripted: they stand in for the LLM.

  - hinted arm: SpadeOrchestrator._compute_hint_phase_for_game_async (spade/core/orchestrator.py:1921,
    seeds `hash(game_file + str(i)) % 2**31` at :1951-1974), which plays each hinted game with the
    real _play_game_with_hint_async (:1783) on the real make_synthetic_env.
  - unhinted arm: SpadeOrchestrator.play_games_async (:1492; its failure rule at :1524-1547 and
    :1614-1623) with the real play_game_async (:285), then spade.core.utils.trajectory_build.
    normalize_rewards_per_game for game2rewards (:89), as the trainer builds it (:2506).
  - regret: SpadeOrchestrator._finalize_regrets (:2027).

Argv: SPADE_SRC GAME_DIR GAME_FILE HINT NOHINT_SCRIPT_JSON HINT_PLAYS NOHINT_PLAYS. PYTHONHASHSEED
is the caller's. Prints one JSON object.
"""
from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import sys
import types
from pathlib import Path
from typing import Any


def _absent_client_libraries() -> list[str]:
    """SPADE's orchestrator imports the OpenAI client and transformers at module level; they are
    never called here (our scripted model stands in). Where they are not installed, an empty module
    takes their place so the import succeeds; SPADE's own modules are always the real ones."""
    missing = []
    for name in ("openai", "transformers"):
        if importlib.util.find_spec(name) is None:
            mod = types.ModuleType(name)

            def _absent(attr: str, _n: str = name) -> Any:
                return type(attr, (), {"__init__": lambda self, *a, **k: (_ for _ in ()).throw(RuntimeError(f"{_n} is not installed"))})

            mod.__getattr__ = _absent  # type: ignore[method-assign]
            sys.modules[name] = mod
            missing.append(name)
    return missing


class ScriptedModel:
    """Our stand-in for the LLM, both arms. A hinted prompt is answered from its observation's mode
    (0: win, 1: lose, 2: the model fails); an unhinted one from NOHINT_SCRIPT in call order ("win",
    "lose" or "error"). Every seed a hinted observation shows is noted."""

    EOS = 0

    def __init__(self, nohint_script: list[str]) -> None:
        self.nohint_script = list(nohint_script)
        self.calls = 0
        self.hint_seeds: list[int] = []
        self.tokenizer = types.SimpleNamespace(eos_token_id=self.EOS)

    def apply_template(self, messages: Any, chat_template_kwargs_override: Any = None) -> list[int]:
        return [1, 2, 3]

    async def generate_async(self, messages: list[dict[str, str]], **kw: Any) -> list[dict[str, Any]]:
        text = messages[-1]["content"]
        if "HINT:" in text:
            m = re.search(r"seed (\d+) mode (\d)", text)
            assert m, text
            self.hint_seeds.append(int(m.group(1)))
            answer = ["win", "lose", "error"][int(m.group(2))]
        else:
            answer = self.nohint_script[self.calls]
            self.calls += 1
        if answer == "error":
            raise RuntimeError("scripted model failure")
        return [{"text": f"\\boxed{{{answer}}}", "token_ids": [7, self.EOS], "logprobs": [0.0, 0.0]}]


class ScriptedHinter:
    def __init__(self, hint: str) -> None:
        self.hint = hint

    async def generate_hint_with_retry(self, game_code: str) -> str:
        return self.hint


def main() -> None:
    spade_src, game_dir, game_file, hint, script, hint_plays, nohint_plays = sys.argv[1:8]
    sys.path.insert(0, spade_src)
    absent = _absent_client_libraries()
    from spade.core.orchestrator import SpadeOrchestrator
    from spade.core.types import SpadeConfig
    from spade.core.utils.trajectory_build import normalize_rewards_per_game

    os.chdir(game_dir)  # SPADE hashes the path string it is given: the bare file name here
    config = SpadeConfig(hint_plays_per_game=int(hint_plays), max_turns=4, actor_enable_thinking=False)
    model = ScriptedModel(json.loads(script))
    me = types.SimpleNamespace(config=config, model=model, hint_generator=ScriptedHinter(hint), _hung_game_blacklist=set(), _step_timeout_games=set(), _actor_template_kwargs=None)
    for name in ("_compute_hint_phase_for_game_async", "_play_game_with_hint_async", "play_games_async", "play_game_async", "_apply_game_template", "_finalize_regrets", "_play_game_tool_use_async", "_play_game_thinking_async"):
        setattr(me, name, types.MethodType(getattr(SpadeOrchestrator, name), me))
    policy = types.SimpleNamespace(get_game_metadata=lambda _f: None)

    async def run() -> dict[str, Any]:
        code = Path(game_file).read_text()
        gf, r_hint, stats = await me._compute_hint_phase_for_game_async(game_file, code)
        # One play at a time (SPADE's semaphore), so the scripted answers meet the plays in order.
        trajs, info = await me.play_games_async([Path(game_file)], policy, trajectories_per_game=int(nohint_plays), max_concurrent=1)
        _, nstats = normalize_rewards_per_game(trajs, [Path(game_file)], None, "grpo")
        game2rewards = nstats.get("game", {})
        game2regret, hint_stats = me._finalize_regrets({gf: (r_hint, stats)}, game2rewards)
        return {
            "hintSeeds": model.hint_seeds,
            "rHint": r_hint,
            "rNoHint": hint_stats[gf].get("r_no_hint"),
            "regret": game2regret[gf],
            "noHintRewards": game2rewards.get(str(game_file), []),
            "played": info,
            "modelCalls": model.calls,
            "absentLibraries": absent,
            "python": list(sys.version_info[:3]),
        }

    print(json.dumps(asyncio.run(run())))


if __name__ == "__main__":
    main()
