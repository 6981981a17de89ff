"""One session's process: what the fork server keeps of it (Child) and what runs in it once forked."""

from __future__ import annotations

import json
import os
import signal
import sys

from host_lines import serve_lines
from host_limits import apply_limits
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import socket
    from host_forkserver import ForkServer


class Child:
    """One session's process. An audit's (`judge` set) is its executor, spoken to through the judge."""

    def __init__(self, sid: str, pid: int, sock: Any, err: Any, judge: Any=None) -> None:
        self.sid, self.pid, self.sock, self.err = sid, pid, sock, err
        self.judge = judge
        self.out: list[Any] = []  # the start of a reply line not ended yet (split_lines)
        self.out_len = 0
        self.cut = False  # its reply passed MAX_REPLY_LINE: killed, and nothing more of it relayed
        self.errbuf: list[Any] = []
        self.sock_open = sock is not None
        self.err_open = True
        self.reaped = False

    def send(self, data: bytes) -> None:
        try:
            (self.judge.ctl if self.judge is not None else self.sock).sendall(data)
        except OSError:
            self.kill()

    def kill(self) -> None:
        if self.reaped:
            return
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass



def leave_server(server: ForkServer, err_w: int, keep: Any=()) -> None:
    """A freshly forked child drops every handle it inherited but its own: the server's pipes,
    other sessions' sockets and the judges' control sockets (a game holding one could speak
    for a judge)."""
    os.dup2(err_w, 2)
    os.close(err_w)
    # The server's socket objects must not close, when collected, a number this process reuses.
    for other in server.children.values():
        if other.sock is not None:
            other.sock.detach()
    for j in server.judges:
        j.ctl.detach()
    last = 3
    for fd in sorted(set(keep)):
        if fd >= last:
            os.closerange(last, fd)
            last = fd + 1
    os.closerange(last, 1 << 20)
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    server.sel = None



def apply_walls(server: ForkServer, opts: dict[str, Any]) -> Any:
    """A child's own walls, before anything else runs in it: rlimits, undumpable, seccomp."""
    applied = apply_limits({**server.config, **opts})
    if server.libc is not None:
        PR_SET_DUMPABLE = 4  # other sessions run as the same uid: /proc/<pid>/mem of this one stays closed
        server.libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    seccomp = server.seccomp.install(os.getpid(), server.libc) if server.seccomp else "off"
    return applied, seccomp



def run_child(server: ForkServer, sock: socket.socket, err_w: int, opts: dict[str, Any]) -> None:
    """One session's process: walls first, then the harness answers on the socket until EOF."""
    leave_server(server, err_w, keep=(sock.fileno(),))
    harness = server.harness
    # numpy's global generator was reseeded by the server just before this fork (ForkServer.spawn).
    applied, seccomp = apply_walls(server, opts)
    network = server.network
    h = server.fresh_harness  # made in the server, never used there: no game has touched it

    default_timeout = float(opts.get("timeoutSec") or 30)

    alarm = harness.call_alarm(harness.CallTimeout)

    def before(timeout: Any=None) -> None:
        alarm.arm(float(timeout or default_timeout))

    after = alarm.disarm

    h.before_call = before
    h.after_call = after
    base_ping = h.commands["ping"]

    def ping(hh: Any, req: dict[str, Any]) -> Any:
        out = base_ping(hh, req)
        out.update(limits=applied, network=network, pid=os.getpid(), seccomp=seccomp, uid=os.getuid())
        return out

    h.register("ping", ping)

    def report(event: Any) -> None:
        try:
            os.write(2, b"\n@sandbox-violation " + json.dumps(event).encode() + b"\n")
        except Exception:
            pass

    if opts.get("auditHook", True):
        server.sandbox.install(server.roots, report=report, loaded=server.drop_modules)
    for name in ("ctypes", "_ctypes", "ctypes.util", "ctypes._endian"):
        sys.modules.pop(name, None)
    server.__dict__.clear()  # the server's handles (its fds, the seccomp builder) are not the game's
    serve_lines(sock.detach(), h)
