"""A child's resource limits and the facts about its network, applied and reported per process."""

from __future__ import annotations

import os
import sys
from typing import Any

try:
    # Imported here, in the fork server, so that no child loads it: loading the extension module
    # in each child was 1.1 ms of its start (apply_limits), a twentieth of an audit's own CPU.
    import resource
except ImportError:  # not on every platform (Windows, Pyodide)
    resource = None  # type: ignore[assignment]


def reseed_numpy() -> None:
    """numpy's global generator from fresh OS entropy (where numpy is loaded): its whole
    Mersenne Twister state (624 words) straight from the OS. np.random.seed() with no argument
    draws the same from the OS through a SeedSequence, 0.7 ms in a freshly forked child; an array
    seed goes through init_by_array, about 0.05 ms."""
    np = sys.modules.get("numpy")
    if np is not None:
        try:
            np.random.seed(np.frombuffer(os.urandom(2496), dtype=np.uint32))
        except Exception:
            try:
                np.random.seed()
            except Exception:
                pass



def apply_limits(config: dict[str, Any], only: Any=None, skip: Any=()) -> Any:
    """Sets this process's resource limits from `config` (those named in `only`, if given, and not
    in `skip`); gives what was set, or why not, by limit name."""
    applied: dict[Any, Any] = {}
    if resource is None:
        return applied
    wanted = {
        "RLIMIT_CPU": config.get("cpuSec"),
        "RLIMIT_AS": (config.get("memoryMb") or 0) * 1024 * 1024 or None,
        "RLIMIT_FSIZE": 0,
        "RLIMIT_NPROC": 0 if config.get("noProcesses", True) else None,
        "RLIMIT_CORE": 0,
        "RLIMIT_NOFILE": 256,
    }
    for name, value in wanted.items():
        if value is None or not hasattr(resource, name) or name in skip or (only is not None and name not in only):
            continue
        which = getattr(resource, name)
        try:
            soft, hard = resource.getrlimit(which)
            new_hard = value if hard == resource.RLIM_INFINITY or value < hard else hard
            resource.setrlimit(which, (min(value, new_hard), new_hard))
            applied[name] = value
        except (ValueError, OSError) as e:
            applied[name] = f"not applied: {e}"
    return applied


def network_state() -> Any:
    """'isolated' when this process sits in a network namespace with nothing but loopback."""
    try:
        import socket

        names = [n for _, n in socket.if_nameindex()]
    except Exception as e:
        return f"unknown ({type(e).__name__})"
    return "isolated" if set(names) <= {"lo"} else "host"

