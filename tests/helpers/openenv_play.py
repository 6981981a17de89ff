"""Plays one episode against an OpenEnv server with OpenEnv's own Python client (GenericEnvClient).

usage: openenv_play.py BASE_URL RESET_JSON ACTIONS_JSON [TOKEN]
Prints one JSON object: {"reset": result, "steps": [result...], "state": state, "after_end": error text or null}.
Each result is {"observation", "reward", "done"} as the client parsed it.
"""
import json
import sys

from openenv.core.generic_client import GenericEnvClient


def as_dict(r: object) -> dict:
    return {"observation": r.observation, "reward": r.reward, "done": r.done}  # type: ignore[attr-defined]


def main() -> None:
    base, reset_kwargs, actions = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
    headers = {"Authorization": f"Bearer {sys.argv[4]}"} if len(sys.argv) > 4 else None
    out: dict = {"steps": []}
    with GenericEnvClient(base_url=base, headers=headers).sync() as env:
        out["reset"] = as_dict(env.reset(**reset_kwargs))
        done = False
        for a in actions:
            r = env.step({"message": a})
            out["steps"].append(as_dict(r))
            done = bool(r.done)
            if done:
                break
        out["state"] = env.state()
        out["after_end"] = None
        if done:
            try:
                env.step({"message": "one more"})
            except RuntimeError as e:
                out["after_end"] = str(e)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
