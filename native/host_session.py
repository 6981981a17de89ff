"""One session's process: what the fork server keeps of it (Child) and what runs in it once forked."""

from __future__ import annotations

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
        self.zygote: Any = None  # the zygote that forked it (its parent, which reaps it), if any

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
    for z in server.zygotes.values():
        z.ctl.detach()
        for _pid, sock, _err in z.ready:
            sock.detach()
    if server.spare is not None:
        _opts, _pid, sock, _err = server.spare
        sock.detach()
    keep_only(keep)
    server.sel = None


def keep_only(keep: Any) -> None:
    """Closes every descriptor above stderr but those in `keep`, and takes a process group of its
    own (the host kills a session's group)."""
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



def apply_walls(server: ForkServer, opts: dict[str, Any]) -> Any:
    """A child's own walls, before anything else runs in it: rlimits, undumpable, seccomp."""
    applied = apply_limits({**server.config, **opts})
    if server.libc is not None:
        PR_SET_DUMPABLE = 4  # other sessions run as the same uid: /proc/<pid>/mem of this one stays closed
        server.libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    seccomp = server.seccomp.install(os.getpid(), server.libc) if server.seccomp else "off"
    return applied, seccomp



def session_harness(server: ForkServer, opts: dict[str, Any], walls: dict[str, Any]) -> Any:
    """The harness a session's process serves, from the one the server made and never used: its
    calls under the per-call timer, and a ping that reports the walls (`walls`, filled in once they
    are up). Made before any environment code runs, in the process the session's comes from."""
    harness = server.harness
    h = server.fresh_harness  # made in the server, never used there: no game has touched it
    network = server.network
    default_timeout = float(opts.get("timeoutSec") or 30)

    alarm = harness.call_alarm(harness.CallTimeout)

    def before(timeout: Any=None) -> None:
        alarm.arm(float(timeout or default_timeout))

    h.before_call = before
    h.after_call = alarm.disarm
    base_ping = h.commands["ping"]

    def ping(hh: Any, req: dict[str, Any]) -> Any:
        out = base_ping(hh, req)
        out.update(limits=walls.get("limits"), network=network, pid=os.getpid(), seccomp=walls.get("seccomp"), uid=os.getuid())
        return out

    h.register("ping", ping)
    return h



def install_guard(sandbox: Any, roots: Any, loaded: Any, opts: dict[str, Any]) -> None:
    """The audit hook (sandbox.py), the last wall before environment code, reporting each refused
    attempt on this process's own stderr (which only the server reads and tags with the session).
    The hook writes the reports itself, with what it bound at install: a game can replace nothing
    of it (issue 46: a reporter that looked up os.write at call time was blinded by a game)."""
    if opts.get("auditHook", True):
        sandbox.install(roots, report_fd=2, loaded=loaded)
    for name in ("ctypes", "_ctypes", "ctypes.util", "ctypes._endian"):
        sys.modules.pop(name, None)



def run_child(server: ForkServer, sock: socket.socket, err_w: int, opts: dict[str, Any]) -> None:
    """One session's process: walls first, then the harness answers on the socket until EOF."""
    leave_server(server, err_w, keep=(sock.fileno(),))
    # numpy's global generator was reseeded by the server just before this fork (ForkServer.spawn).
    walls: dict[str, Any] = {}
    walls["limits"], walls["seccomp"] = apply_walls(server, opts)
    h = session_harness(server, opts, walls)
    install_guard(server.sandbox, server.roots, server.drop_modules, opts)
    server.__dict__.clear()  # the server's handles (its fds, the seccomp builder) are not the game's
    serve_lines(sock.detach(), h)
