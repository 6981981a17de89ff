"""The audit judge: a forked process that runs the checks and never environment code."""

from __future__ import annotations

import os
import select
import sys

from host_lines import lines_of, read_lines
from host_session import apply_walls, leave_server
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import socket
    from host_forkserver import ForkServer


# A judge is replaced after this many audits: nothing it keeps grows without bound.
JUDGE_AUDITS = 500

# How long a crossing waits for the game before the judge names the check it belongs to (ms).
PHASE_AFTER_MS = 40


class Judge:
    """A process that runs audit checks (native/audit_checks.py) for one session at a time."""

    def __init__(self, pid: int, ctl: socket.socket, err: Any) -> None:
        self.pid, self.ctl, self.err = pid, ctl, err
        self.sid: Any = None
        self.draining = False
        self.audits = 0
        self.out: list[Any] = []  # the start of a reply line not ended yet (split_lines)
        self.errbuf: list[Any] = []



def run_judge(server: ForkServer, ctl: socket.socket, err_w: int, opts: dict[str, Any]) -> None:
    """An audit judge: the checks, in a process that runs no environment code. It serves one
    audit session at a time, driving that session's executor over the socket the server hands it
    (`A<sid>` with the descriptor attached), and frees itself on `D` (answering `F`)."""
    import socket

    leave_server(server, err_w, keep=(ctl.fileno(),))
    apply_walls(server, opts)
    harness = server.harness
    checks = sys.modules["audit_checks"]
    current: dict[str, Any] = {"fd": None, "replies": iter(()), "phase": None, "poll": None}

    def transport(line: str) -> Any:
        xfd = current["fd"]
        if xfd is None:
            return ""
        data = memoryview(line.encode("utf-8") + b"\n")
        try:
            while data:
                data = data[os.write(xfd, data):]
            return next(current["replies"], b"").decode("utf-8", "replace")
        except OSError:
            return ""

    def note_phase(line: bytes) -> None:
        current["phase"] = line

    transport.note_phase = note_phase  # type: ignore[attr-defined]

    def read_reply(xfd: int) -> bytes:
        # The check's phase line goes out once one of its crossings has waited PHASE_AFTER_MS for
        # the game: a check that hangs or runs long is named within that, a quick one never.
        line = current["phase"]
        if line is not None:
            if not current["poll"].poll(PHASE_AFTER_MS):
                current["phase"] = None
                try:
                    os.write(2, line)
                except OSError:
                    pass
        return os.read(xfd, 1 << 16)

    def attach(xfd: Any) -> None:
        if current["fd"] is not None:
            os.close(current["fd"])
        current["fd"] = xfd
        current["phase"] = None
        if xfd is not None:
            current["poll"] = select.poll()
            current["poll"].register(xfd, select.POLLIN)
        # 64 KiB reads come from the heap; a 1 MiB one was an mmap, a shrinking mremap and a munmap per reply.
        current["replies"] = lines_of(lambda: read_reply(xfd)) if xfd is not None else iter(())

    h = harness.Harness()
    checks.install_judge(h, harness, transport)
    # Only what a judge is for: no command here may run environment code.
    h.commands = {name: h.commands[name] for name in ("audit", "ping")}
    server.__dict__.clear()

    def write(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[ctl.send(view):]

    fds = []

    def receive() -> Any:
        data, got, _flags, _addr = socket.recv_fds(ctl, 1 << 16, 4)
        fds.extend(got)  # each arrives with the `A` line it belongs to, never after it
        return data

    for line in read_lines(receive):
        tag = line[:1]
        if tag == b"A":
            attach(fds.pop(0) if fds else None)
        elif tag == b"D":
            attach(None)
            write(b"F\n")
        elif line.strip():
            write(h.dispatch(line.decode("utf-8", "replace")).encode("utf-8", "replace") + b"\n")
