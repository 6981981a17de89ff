"""A child's resource limits and the facts about its network, applied and reported per process."""

from __future__ import annotations

import sys
from typing import Any


def reseed_numpy() -> None:
    """numpy's global generator from fresh OS entropy (where numpy is loaded)."""
    np = sys.modules.get("numpy")
    if np is not None:
        try:
            np.random.seed()
        except Exception:
            pass



def apply_limits(config: dict[str, Any]) -> Any:
    applied: dict[Any, Any] = {}
    try:
        import resource
    except ImportError:
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
        if value is None or not hasattr(resource, name):
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

