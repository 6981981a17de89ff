"""The audit zygote: a process forked from the fork server that only forks audit executors.

While executors forked straight from the server lived, every page the server wrote (its relay
loop, buffers, selectors) was copied for it: ~300 page faults an audit, with the fork itself in
the server's time. The zygote writes little between forks, and puts up once the walls that are
the same for every audit (the server's handles closed, rlimits, a seccomp filter that still lets
it fork); each executor adds what the zygote itself cannot have (no new processes, its CPU limit,
signals to itself only, the audit hook) and serves the session harness the zygote made. Measured
here: ~0.4 ms less CPU an audit (3%; bench/notes/isolation-figures.md). The executor's own page faults
do not fall: the pages the walls touched are touched by the audit anyway.

The zygote runs no environment code and holds no handle but its control socket to the server and
its stderr. Wire on the control socket (lines): in `F` fork one executor, `W<pid>` reap that one
(the server has killed it and will never name it again, so its pid is not reused while the server
may still signal it); out `P<pid>` with the executor's socket end and stderr's read end attached,
or `N <why>`.
"""

from __future__ import annotations

import json
import os
import selectors
import time

from host_lines import serve_lines, split_lines
from host_limits import apply_limits, reseed_numpy
from host_session import install_guard, keep_only, leave_server, session_harness
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import socket
    from host_forkserver import ForkServer
    from host_session import Child


# Set in each executor, never in the zygote: it has to fork, and its CPU is spent across audits.
EXECUTOR_LIMITS = ("RLIMIT_NPROC", "RLIMIT_CPU")

# Audit option sets with a zygote of their own; audits with yet others fork from the server.
MAX_ZYGOTES = 2
# How long after a zygote's death the server looks for its orphans even with nothing to read (s):
# the executors it was killed with are zombies within this, and reaped by reap_orphans.
ORPHAN_WATCH_SEC = 2.0
# Zygotes that may die (or fail to fork) in one server's life before it stops starting new ones.
MAX_ZYGOTE_DEATHS = 3


class ZygoteLink:
    """The server's side of one zygote (one per set of audit options)."""

    def __init__(self, pid: int, ctl: socket.socket, err: int, key: str) -> None:
        self.pid, self.ctl, self.err, self.key = pid, ctl, err, key
        self.ready: list[Any] = []  # (pid, socket end, stderr read end) forked and not handed out
        self.asked = 0  # `F` sent and not answered yet
        self.buf: list[Any] = []
        self.fds: list[Any] = []
        self.err_open = True

    def ask(self) -> None:
        self.ctl.sendall(b"F\n")
        self.asked += 1

    def reap(self, pid: int) -> None:
        try:
            self.ctl.sendall(b"W%d\n" % pid)
        except OSError:
            pass

    def receive(self) -> bool:
        """Reads what the zygote sent (blocking until something comes); False when it is gone."""
        import socket

        try:
            data, fds, _flags, _addr = socket.recv_fds(self.ctl, 1 << 12, 8)
        except OSError:
            return False
        if not data:
            for fd in fds:
                os.close(fd)
            return False
        self.fds.extend(fds)  # each arrives with the `P` line it belongs to, never after it
        for line in split_lines(self.buf, data):
            if line[:1] == b"P" and len(self.fds) >= 2:
                sock_fd, err_r = self.fds.pop(0), self.fds.pop(0)
                self.ready.append((int(line[1:]), socket.socket(fileno=sock_fd), err_r))
                self.asked -= 1
            elif line[:1] == b"N":
                self.asked -= 1
                return False  # it could not fork: the server forks audits itself from now on
        return True

    def close(self) -> None:
        self.ctl.close()
        for fd in [self.err, *self.fds]:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []


class ZygoteKeeper:
    """The fork server's part in its zygotes (host_forkserver.ForkServer is one): starting them,
    taking executors from them, and dropping one that died."""

    config: dict[str, Any]
    zygotes: dict[str, ZygoteLink]
    by_fd: dict[Any, Any]
    children: dict[Any, Any]
    unreaped: set[Any]
    zygote_deaths: int
    orphans_until: float
    spare_for: Any
    spare: Any
    judges: list[Any]
    sel: Any

    def spawn(self, run: Any, opts: dict[str, Any]) -> Any: ...
    def take_spare(self, opts: dict[str, Any] | None) -> Any: ...
    def unwatch(self, *fds: Any) -> None: ...
    def end_process(self, pid: int) -> None: ...
    def drop_executor(self, pid: int, sock: Any, err_r: int, alive: bool=True, ours: bool=True) -> None: ...

    def zygote_for(self, opts: dict[str, Any]) -> Any:
        """The zygote that forks executors for audits with these options (started at the first
        such audit); None where the server forks them itself (config `zygote` false, or more
        option sets in use than MAX_ZYGOTES, or too many died)."""
        if not self.config.get("zygote", True) or self.zygote_deaths >= MAX_ZYGOTE_DEATHS:
            return None
        key = json.dumps(opts, sort_keys=True)
        z = self.zygotes.get(key)
        if z is None and len(self.zygotes) < MAX_ZYGOTES:
            self.take_spare(None)  # the server's own spare is not used while a zygote forks
            self.spare_for = None
            pid, ctl, err_r = self.spawn(run_zygote, opts)
            z = ZygoteLink(pid, ctl, err_r, key)
            self.zygotes[key] = z
            self.by_fd[ctl.fileno()] = (z, "zygote")
            self.by_fd[err_r] = (z, "zygote-err")
            self.sel.register(ctl.fileno(), selectors.EVENT_READ, None)
            self.sel.register(err_r, selectors.EVENT_READ, None)
        return z

    def from_zygote(self, z: ZygoteLink) -> Any:
        """An executor from zygote `z`, and the next one asked for (it forks while this audit runs);
        None if the zygote is gone or cannot fork (dropped: the server forks audits itself)."""
        try:
            while not z.ready:
                if z.asked == 0:
                    z.ask()
                if not z.receive():
                    self.zygote_gone(z)
                    return None
            took = z.ready.pop(0)
            if not z.ready and z.asked == 0:
                z.ask()
            return took
        except OSError:
            self.zygote_gone(z)
            return None

    def zygote_err(self, z: ZygoteLink) -> None:
        """A zygote's stderr: it runs no environment code, so what it writes is the workbench's own
        failure; it goes on to the server's own stderr, which the host keeps (forkServer.ts's tail)."""
        try:
            chunk = os.read(z.err, 1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            self.unwatch(z.err)
            z.err_open = False
            return
        try:
            os.write(2, chunk)
        except OSError:
            pass

    def zygote_gone(self, z: ZygoteLink) -> None:
        """A zygote that exited, could not fork or stopped answering: killed and dropped, and the
        executors it forked that no audit has yet are killed. Its death hands its children to the
        sandbox's init: this server, which bubblewrap starts as pid 1 (`--as-pid-1`, so that no
        process of bubblewrap's own is in a game's reach) and which reaps them from then on
        (reap_orphans). Unsandboxed, they go to the host's init instead."""
        self.zygotes.pop(z.key, None)
        self.zygote_deaths += 1
        self.unwatch(z.ctl.fileno(), z.err if z.err_open else -1)
        for pid, sock, err_r in z.ready:
            self.drop_executor(pid, sock, err_r, ours=False)
        z.ready = []
        self.end_process(z.pid)  # reaped: its children are init's from here on
        self.orphans_until = time.monotonic() + ORPHAN_WATCH_SEC
        z.close()
        for child in self.children.values():
            if child.zygote is z:
                # Its audit goes on; killed at its end as ever, and reaped by the init it now belongs to.
                child.zygote = None

    def reap_orphans(self) -> None:
        """Reaps the zombies among this process's children that it never forked: a dead zygote's
        executors, handed to init. Each is seen with WNOWAIT first, so that the exit status of a
        process of its own (a session's, read by ForkServer.reap) is never taken here; one of its
        own waiting first holds the rest until it is reaped, at a later pass."""
        known = {c.pid for c in self.children.values() if not c.reaped} | {j.pid for j in self.judges}
        known |= {z.pid for z in self.zygotes.values()} | self.unreaped
        if self.spare is not None:
            known.add(self.spare[1])
        while True:
            try:
                got = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return
            if got is None or got.si_pid in known:
                return
            try:
                os.waitpid(got.si_pid, 0)
            except ChildProcessError:
                return

    def reap_later(self, child: Child) -> None:
        """A killed executor is reaped when idle, by its parent: this process or its zygote."""
        z = child.zygote
        if z is not None:
            z.reap(child.pid)
        else:
            self.unreaped.add(child.pid)



def run_zygote(server: ForkServer, ctl: socket.socket, err_w: int, opts: dict[str, Any]) -> None:
    """The zygote's life: its walls, then forks on request; returns only in a forked executor,
    which then puts up the rest of its walls and serves its one session."""
    leave_server(server, err_w, keep=(ctl.fileno(),))
    config = {**server.config, **opts}
    limits = apply_limits(config, skip=EXECUTOR_LIMITS)
    libc = server.libc
    if libc is not None:
        PR_SET_DUMPABLE = 4  # other sessions run as the same uid: /proc/<pid>/mem of this one stays closed
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    seccomp = server.seccomp
    zygote_filter = seccomp.install(0, libc, zygote=True) if seccomp is not None else "off"
    walls: dict[str, Any] = {}
    h = session_harness(server, opts, walls)
    sandbox, roots, loaded = server.sandbox, server.roots, server.drop_modules
    server.__dict__.clear()
    sock_fd, err_w = fork_loop(ctl, bool(opts.get("deterministic")))
    # From here on this is an executor: nothing of the zygote's but what it was given.
    os.dup2(err_w, 2)
    os.close(err_w)
    keep_only((sock_fd,))
    walls["limits"] = {**limits, **apply_limits(config, only=EXECUTOR_LIMITS)}
    if seccomp is None:
        walls["seccomp"] = "off"
    elif zygote_filter != "on":
        walls["seccomp"] = zygote_filter
    else:
        walls["seccomp"] = seccomp.install(os.getpid(), libc)
    del libc, seccomp
    install_guard(sandbox, roots, loaded, opts)
    del sandbox
    serve_lines(sock_fd, h)


def fork_loop(ctl: socket.socket, deterministic: bool) -> Any:
    """Serves the server's requests until it closes the socket (then exits); gives
    (socket fd, stderr write end) in each executor it forks."""
    import socket

    pending: list[Any] = []
    dying: set[int] = set()
    while True:
        ctl.settimeout(0.05 if dying else None)
        try:
            chunk = ctl.recv(1 << 12)
        except TimeoutError:
            chunk = None
        except OSError:
            os._exit(0)
        if chunk == b"":
            os._exit(0)
        for line in split_lines(pending, chunk) if chunk else ():
            if line == b"F":
                ours, theirs = socket.socketpair()
                err_r, err_w = os.pipe()
                if not deterministic:
                    reseed_numpy()  # as ForkServer.spawn: every executor its own numpy stream
                try:
                    pid = os.fork()
                except OSError as e:
                    for s in (ours, theirs):
                        s.close()
                    os.close(err_r)
                    os.close(err_w)
                    ctl.settimeout(None)
                    ctl.sendall(b"N " + json.dumps(str(e)).encode() + b"\n")
                    continue
                if pid == 0:
                    # Its objects must not close, when collected, numbers the executor reuses.
                    ctl.detach()
                    ours.detach()
                    os.close(err_r)
                    return theirs.detach(), err_w
                theirs.close()
                os.close(err_w)
                ctl.settimeout(None)
                try:
                    socket.send_fds(ctl, [b"P%d\n" % pid], [ours.fileno(), err_r])
                finally:
                    ours.close()
                    os.close(err_r)
            elif line[:1] == b"W":
                try:
                    dying.add(int(line[1:]))
                except ValueError:
                    pass
        for pid in list(dying):
            try:
                done = os.waitpid(pid, os.WNOHANG)[0]
            except ChildProcessError:
                done = pid
            if done:
                dying.discard(pid)


