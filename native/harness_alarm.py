"""SPADE Workbench harness: the time limit of each call into environment code, on CPython.

An interval timer (SIGALRM) raises CallTimeout in a call that runs past its limit. Setting the
timer before each call and clearing it after cost two setitimer system calls a call: about 6% of an
audit's time in the game's process, whose ~200 calls are mostly a few microseconds of game code.
Here the kernel's timer is set only when the one pending would ring after the new call's deadline;
a ring that comes early (set for an earlier call, or between calls) sets the timer again for what
is left of the current call, if any. A run of short calls costs one system call per limit's worth of
time instead of two per call; a call past its limit is interrupted exactly as before.

One per process (`call_alarm`): the audit's executor and the session commands share the signal.
"""

from __future__ import annotations

import signal
import time
from typing import Any

_now = time.perf_counter
_setitimer: Any = getattr(signal, "setitimer", None)  # absent where there is no alarm (Pyodide): never made there
_REAL = getattr(signal, "ITIMER_REAL", 0)


class CallAlarm:
    def __init__(self, exc_type: type[BaseException]) -> None:
        self.exc_type = exc_type
        self.deadline: Any = None  # the running call's deadline (perf_counter seconds); None between calls
        self.rings_at: Any = None  # when the kernel's timer is due; None when it is not set
        signal.signal(signal.SIGALRM, self._rang)

    def arm(self, limit: float) -> None:
        deadline = _now() + limit
        self.deadline = deadline
        rings_at = self.rings_at
        if rings_at is None or rings_at > deadline:
            _setitimer(_REAL, limit)
            self.rings_at = deadline

    def disarm(self) -> None:
        self.deadline = None

    def _rang(self, signum: Any, frame: Any) -> None:
        self.rings_at = None
        deadline = self.deadline
        if deadline is None:
            return  # set for a call that has returned: nothing runs on a clock now
        left = deadline - _now()
        if left <= 0:
            self.deadline = None
            raise self.exc_type()
        _setitimer(_REAL, left)
        self.rings_at = deadline


_alarm = None


def call_alarm(exc_type: type[BaseException]) -> Any:
    """This process's CallAlarm (made, and its signal handler installed, at the first use)."""
    global _alarm
    if _alarm is None:
        _alarm = CallAlarm(exc_type)
    return _alarm
