"""SPADE Workbench harness: one episode's calls, reset and step, as the protocol describes their
returns and as SPADE's env wrapper converts them (docs/spade-formats.md section 2)."""

from __future__ import annotations

import json
import types

from harness_values import _SAFE_INT, VALUE_MAX_STR, CallTimeout, json_number, cut, describe, plain, repr_safe, str_safe, type_name
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness import Session

# Private references: a game may patch builtins or shared modules (undone at the next episode
# boundary, see SharedBaseline); until then the harness must keep answering with the originals.
if not TYPE_CHECKING:  # mypy reads the builtins themselves; at run time these are the originals
    len, isinstance, type, str, repr, int, float, bool = len, isinstance, type, str, repr, int, float, bool  # noqa: A001
    list, dict, tuple, set, frozenset, getattr, callable, id = list, dict, tuple, set, frozenset, getattr, callable, id  # noqa: A001
    sorted, min, max, range, any, all, next, hasattr, print = sorted, min, max, range, any, all, next, hasattr, print  # noqa: A001
_json_dumps, _json_loads = json.dumps, json.loads


# ---------------------------------------------------------------- SPADE's wrapper conversion


RESET_ERROR_OBS = "Error during reset. Starting new game."


def sanitize_info(info: Any) -> Any:
    """SPADE's info filter: numbers, bools and None stay, strings go, the rest through float()."""
    if type(info) is not dict and not isinstance(info, dict):
        return {}
    if not info:
        return {}
    out = {}
    for k, v in info.items():
        if isinstance(v, (int, float, bool, type(None))):
            out[k] = v
        elif isinstance(v, str):
            continue
        else:
            try:
                out[k] = float(v)
            except (ValueError, TypeError):
                continue
    return out


def _plain_info(info: Any) -> Any:
    return {(k if type(k) is str else str_safe(k) or repr_safe(k)): plain(v) for k, v in info.items()}


def spade_reset_view(ret: Any) -> Any:
    """What SPADE's wrapper makes of a reset() return (the game ran without raising)."""
    if isinstance(ret, tuple) and len(ret) == 2:
        obs, info = ret
    elif isinstance(ret, str):
        obs, info = ret, {}
    else:
        obs, info = str(ret), {}
    info = sanitize_info(info)
    # A tuple's observation is passed on as it is; every prompt SPADE builds formats it with str().
    return {"observation": obs if type(obs) is str else str(obs), "info": _plain_info(info)}


def spade_step_view(ret: Any) -> Any:
    """SPADE's wrapper conversion of one step() return; conversion errors are step errors."""
    try:
        if isinstance(ret, tuple) and len(ret) == 5:
            obs, reward, term, trunc, info = ret
            obs = str(obs) if obs is not None else "No observation"
            reward = float(reward) if reward is not None else 0.0
            term = bool(term) if term is not None else False
            trunc = bool(trunc) if trunc is not None else False
            info = sanitize_info(info if isinstance(info, dict) else {})
            return {"observation": cut(obs, VALUE_MAX_STR), "reward": json_number(reward), "terminated": term, "truncated": trunc, "info": _plain_info(info)}
        return {"observation": "Invalid game response", "reward": -1.0, "terminated": True, "truncated": False, "info": {}, "error": "shape"}
    except (CallTimeout, KeyboardInterrupt):
        raise
    except Exception as e:
        return spade_step_error(e)


def _mark_spade(e: Any, view: Any) -> None:
    """Carries SPADE's view of a failed call on the exception, for error_info to report."""
    try:
        e.__spade_wb_view__ = view
    except Exception:
        pass


def spade_step_error(e: Any) -> Any:
    return {"observation": cut(f"Error: {str_safe(e)}", VALUE_MAX_STR), "reward": -1.0, "terminated": True, "truncated": False, "info": {}, "error": "exception"}


GUESS_RUNS, GUESS_TRIES = 20, 5  # test_game_difficulty's defaults: 20 episodes, 5 guesses each


def spade_guess_end(view: Any) -> Any:
    """How SPADE's offline too-easy test (test_game_difficulty) reads one wrapper step: "won" at a
    reward above 0, whatever the flags say (checked first, as SPADE does); "ended" at the episode's
    end; None to guess again. `view`: spade_step_view's reward, terminated and truncated."""
    r = view["reward"]
    if type(r) is str:
        r = float(r)  # json_number's spelling of a non-finite reward ("NaN", "Infinity"): NaN > 0 is False, as in SPADE
    if r > 0:
        return "won"
    return "ended" if view["terminated"] or view["truncated"] else None


# ---------------------------------------------------------------- seeds


class _ClassWatch:
    """Stands in for a class (numpy.random.RandomState, Generator) while a seeded reset runs: a call
    is noted and made on the class itself, and every other use answers as the class does. numpy 2's
    default_rng(seed) asks `isinstance(seed, np.random.RandomState)` through the module, so a plain
    function there raised TypeError inside a valid game's reset; isinstance, issubclass, subclassing
    (PEP 560), attribute reads and == go to the class. Only `is` can tell the two apart, and only
    while the reset runs."""

    def __init__(self, cls: Any, label: str, calls: list[str]) -> None:
        object.__setattr__(self, "_wb_cls", cls)
        object.__setattr__(self, "_wb_label", label)
        object.__setattr__(self, "_wb_calls", calls)

    def __call__(self, *a: Any, **kw: Any) -> Any:
        if (a and a[0] is not None) or kw.get("seed") is not None:
            self._wb_calls.append(self._wb_label)
        return self._wb_cls(*a, **kw)

    def __instancecheck__(self, obj: Any) -> bool:
        return isinstance(obj, self._wb_cls)

    def __subclasscheck__(self, sub: Any) -> bool:
        return issubclass(sub, self._wb_cls)

    def __mro_entries__(self, bases: Any) -> Any:
        return (self._wb_cls,)

    def __getattr__(self, name: str) -> Any:
        return getattr(object.__getattribute__(self, "_wb_cls"), name)

    def __eq__(self, other: Any) -> bool:
        return other is self or other is self._wb_cls

    def __hash__(self) -> int:
        return hash(self._wb_cls)

    def __repr__(self) -> str:
        return repr(self._wb_cls)


def _watched_function(orig: Any, label: str, calls: list[str]) -> Any:
    """A function (random.seed, numpy.random.seed, default_rng) that notes a call with a seed and
    makes it; its name, doc and __wrapped__ are the original's."""

    def seeded(*a: Any, **kw: Any) -> Any:
        if (a and a[0] is not None) or kw.get("seed", kw.get("a")) is not None:
            calls.append(label)
        return orig(*a, **kw)

    for k in ("__module__", "__name__", "__qualname__", "__doc__"):
        try:
            setattr(seeded, k, getattr(orig, k))
        except Exception:
            pass
    seeded.__wrapped__ = orig  # type: ignore[attr-defined]
    return seeded


class _SeedWatch:
    """Notes which generators a game seeds during one reset(seed) (SPADE mode only).

    SPADE reproduces an episode only when the game seeds what it draws from; the workbench says
    when a seeded reset seeded nothing. The watched names are put back before the call returns.
    Classes are watched through _ClassWatch, never replaced by a function: a game's reset must
    behave as it does in SPADE under numpy 1 and numpy 2 alike (SPADE allows numpy >= 1.24).
    """

    def __init__(self, rnd: Any, np: Any) -> None:
        self.rnd, self.np = rnd, np
        self.calls: list[str] = []
        self.saved: list[tuple[Any, str, Any]] = []

    def _wrap(self, owner: Any, attr: Any, label: str) -> None:
        orig = getattr(owner, attr, None)
        if orig is None:
            return
        watched = _ClassWatch(orig, label, self.calls) if isinstance(orig, type) else _watched_function(orig, label, self.calls)
        try:
            setattr(owner, attr, watched)
            self.saved.append((owner, attr, orig))
        except Exception:
            pass

    def __enter__(self) -> Any:
        r = self.rnd
        self._wrap(r, "seed", "random.seed")
        rcls = getattr(r, "Random", None)
        if isinstance(rcls, type):
            orig = rcls.__dict__.get("seed")
            if orig is not None:
                calls = self.calls

                def seed(inst: Any, a: Any=None, *rest: Any, **kw: Any) -> Any:
                    if a is not None:
                        calls.append("random.Random")
                    return orig(inst, a, *rest, **kw)

                for k in ("__module__", "__name__", "__qualname__", "__doc__"):
                    setattr(seed, k, getattr(orig, k, None))
                seed.__wrapped__ = orig  # type: ignore[attr-defined]
                try:
                    rcls.seed = seed  # type: ignore[attr-defined]
                    self.saved.append((rcls, "seed", orig))
                except Exception:
                    pass
        npr = getattr(self.np, "random", None) if self.np is not None else None
        if npr is not None:
            for attr in ("seed", "default_rng", "RandomState", "Generator"):
                self._wrap(npr, attr, f"numpy.random.{attr}")
        return self

    def __exit__(self, *a: Any) -> Any:
        for owner, attr, orig in reversed(self.saved):
            try:
                setattr(owner, attr, orig)
            except Exception:
                pass
        return False


def _reset(s: Session, seed: int | None, preseed: int | None = None) -> Any:
    np = s.ns.get("np") if s.ns else None
    watch = None
    if seed is None and preseed is not None:
        # An unseeded reset (SPADE resets its unhinted plays so, orchestrator.py:335) made repeatable:
        # the game still gets no seed, but the `random` it draws from (and numpy's) starts from a
        # number the workbench drew and keeps with the episode, so a replay draws the same.
        s.modules["random"].seed(preseed)
        if np is not None and hasattr(np, "random"):
            np.random.seed(preseed % (2**32))
    if seed is not None and s.deterministic:
        # Workbench determinism: a seed means one episode even for games that forget random.seed.
        s.modules["random"].seed(seed)
        if np is not None and hasattr(np, "random"):
            np.random.seed(seed % (2**32))
    try:
        if seed is not None and not s.deterministic:
            watch = _SeedWatch(s.modules["random"], np if isinstance(np, types.ModuleType) else None)
            with watch:
                ret = s.env.reset(seed=seed)
        else:
            ret = s.env.reset(seed=seed) if seed is not None else s.env.reset()
    except (CallTimeout, KeyboardInterrupt):
        raise
    except Exception as e:
        _mark_spade(e, {"observation": RESET_ERROR_OBS, "info": {}})
        raise
    out = describe_reset(ret)
    out["spade"] = spade_reset_view(ret)
    if watch is not None:
        out["seeded"] = sorted(set(watch.calls))
        if not watch.calls:
            # SPADE cannot replay such an episode if the game draws random numbers.
            out["seedIgnored"] = True
    return out


def describe_reset(ret: Any) -> Any:
    if isinstance(ret, tuple) and len(ret) == 2:
        obs, info = ret
        return {"observation": plain(obs), "info": plain(info), "types": [type_name(obs), type_name(info)], "shape": "tuple2"}
    if isinstance(ret, str):
        return {"observation": cut(ret, VALUE_MAX_STR), "info": {}, "types": ["str"], "shape": "str"}
    return {"observation": None, "info": {}, "types": [type_name(ret)], "shape": "other", "raw": describe(ret)}


# Type-name tuples for the usual step shapes, shared by every step that has them: building five
# names per step was a third of a play() step's harness cost. Only stable (builtin, numpy,
# collections) types are cached, so a game's own classes never outlive their session here.
_STEP_TYPES: dict[Any, Any] = {}
_STABLE_MODULES = ("builtins", "numpy", "collections")


def _step_types(obs: Any, reward: Any, term: Any, trunc: Any, info: Any) -> Any:
    key = (type(obs), type(reward), type(term), type(trunc), type(info))
    names = _STEP_TYPES.get(key)
    if names is None:
        names = (type_name(obs), type_name(reward), type_name(term), type_name(trunc), type_name(info))
        if len(_STEP_TYPES) < 256 and all(getattr(t, "__module__", "") in _STABLE_MODULES for t in key):
            _STEP_TYPES[key] = names
    return names


def _info_pair(info: Any) -> Any:
    """(described info, SPADE's sanitized info) for a dict of str keys and builtin scalars, else None."""
    if len(info) > 1000:
        return None
    d, sp = {}, {}
    for k, v in list(info.items()):
        t = type(v)
        if type(k) is not str:
            return None
        if t is str:
            d[k] = v if len(v) <= VALUE_MAX_STR else cut(v, VALUE_MAX_STR)
        elif t is bool or v is None:
            d[k] = sp[k] = v
        elif t is float:
            d[k] = sp[k] = v if v - v == 0.0 else json_number(v)
        elif t is int and -_SAFE_INT <= v <= _SAFE_INT:
            d[k] = sp[k] = v
        else:
            return None
    return d, sp


def describe_step(ret: Any) -> Any:
    if isinstance(ret, tuple) and len(ret) == 5:
        obs, reward, term, trunc, info = ret
        tr = type(reward)
        if type(obs) is str and (term is True or term is False) and (trunc is True or trunc is False) and type(info) is dict and not info and len(obs) <= VALUE_MAX_STR:
            # What nearly every game returns: SPADE's conversion only makes an int reward a float.
            if tr is float:
                r = reward if reward - reward == 0.0 else json_number(reward)
                spr = r
            elif tr is int and -_SAFE_INT <= reward <= _SAFE_INT:
                r, spr = reward, float(reward)
            else:
                r = None
            if r is not None:
                return {
                    "observation": obs, "reward": r, "terminated": term, "truncated": trunc, "info": {},
                    "types": _step_types(obs, reward, term, trunc, info), "shape": "tuple5",
                    "spade": {"observation": obs, "reward": spr, "terminated": term, "truncated": trunc, "info": {}},
                }
        if type(obs) is str and (term is True or term is False) and (trunc is True or trunc is False) and type(info) is dict and len(obs) <= VALUE_MAX_STR \
                and (tr is float or (tr is int and -_SAFE_INT <= reward <= _SAFE_INT)):
            pair = _info_pair(info)
            if pair is not None:
                # A dict of builtin scalars: described and converted in one pass.
                r = reward if tr is int or reward - reward == 0.0 else json_number(reward)
                return {
                    "observation": obs, "reward": r, "terminated": term, "truncated": trunc, "info": pair[0],
                    "types": _step_types(obs, reward, term, trunc, info), "shape": "tuple5",
                    "spade": {"observation": obs, "reward": r if tr is float else float(reward), "terminated": term, "truncated": trunc, "info": pair[1]},
                }
        return {
            "observation": obs if type(obs) is str and len(obs) <= VALUE_MAX_STR else plain(obs),
            "reward": reward if type(reward) is float and reward - reward == 0.0 else plain(reward),
            "terminated": term if term is True or term is False else plain(term),
            "truncated": trunc if trunc is True or trunc is False else plain(trunc),
            "info": plain(info),
            "types": _step_types(obs, reward, term, trunc, info),
            "shape": "tuple5",
            "spade": spade_step_view(ret),
        }
    return {"shape": "other", "types": [type_name(ret)], "raw": describe(ret), "spade": spade_step_view(ret)}


def _step(s: Session, action: str | None) -> Any:
    try:
        ret = s.env.step(action)
    except (CallTimeout, KeyboardInterrupt):
        raise
    except Exception as e:
        # SPADE's wrapper: a raising step is a -1.0 terminal step with the message as observation.
        _mark_spade(e, spade_step_error(e))
        raise
    return describe_step(ret)
