"""The fork server: one process per session, forked from this one, and the lines relayed between them."""

from __future__ import annotations

import json
import os
import selectors
import signal
import time

from host_judge import JUDGE_AUDITS, Judge, run_judge
from host_lines import MAX_REPLY_LINE, split_lines
from host_limits import network_state, reseed_numpy
from host_session import Child, run_child
from host_zygote import ZygoteKeeper
from typing import Any, Callable


class ForkServer(ZygoteKeeper):
    def __init__(self, fd_in: Any, fd_out: Any, config: dict[str, Any], harness: Any, sandbox: Any, extensions: Any, seccomp: Any, roots: Any) -> None:
        self.fd_in, self.fd_out = fd_in, fd_out
        self.config = config
        self.harness, self.sandbox, self.extensions = harness, sandbox, extensions
        self.seccomp = seccomp
        self.roots = roots
        self.children: dict[Any, Any] = {}  # sid -> Child
        self.judges: list[Any] = []  # long-lived audit judges (processes that run no environment code)
        self.by_fd: dict[Any, Any] = {}  # fd -> (Child, "sock" | "err")
        self.sel: Any = selectors.DefaultSelector()
        self.inbuf = b""
        # The next audit's executor, forked and walled while the server had nothing else to do, so
        # that an audit's open does not wait for a fork: (its options, pid, socket end, stderr).
        # It has run nothing; an audit with other options gets a process of its own instead.
        self.spare: Any = None
        self.spare_for: Any = None  # the options of the last audit opened: a spare is made for these
        self.unreaped: set[Any] = set()  # killed executors, reaped when idle instead of waited for in line
        # Audit zygotes (host_zygote.py) by their options: each forks executors with most walls up.
        self.zygotes: dict[str, Any] = {}
        self.zygote_deaths = 0  # past MAX_ZYGOTE_DEATHS the server forks every audit itself
        self.orphans_until = 0.0  # while a dead zygote's orphans may still be dying (reap_orphans)

    def prepare(self) -> None:
        if self.seccomp is not None:
            self.seccomp.prepare()
        self.harness.warm()
        h = self.harness.Harness()
        for mod in self.extensions:
            if callable(getattr(mod, "install", None)):
                mod.install(h, self.harness)
        self.fresh_harness = h
        self.network = network_state()
        try:
            import ctypes

            self.libc: Any = ctypes.CDLL(None, use_errno=True)
        except Exception:
            self.libc = None
        # Which loaded modules the guard drops in each child, found once here: walking sys.modules
        # in a child touched a page per module name (copy-on-write faults, 2 ms a session).
        self.drop_modules = self.sandbox.risky_loaded()

    def emit(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self.fd_out, view)
            view = view[n:]

    def serve(self) -> None:
        os.set_blocking(self.fd_in, True)
        self.sel.register(self.fd_in, selectors.EVENT_READ, None)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        self.emit(b"Z " + json.dumps({"ready": True, "pid": os.getpid(), **self.facts()}).encode() + b"\n")
        while True:
            events = self.sel.select(0) if self.idle_work() else ()
            if not events:
                self.when_idle()
                # A killed process may still be dying: look again shortly rather than leave a zombie.
                events = self.sel.select(0.05 if self.unreaped or self.orphan_watch() else None)
            for key, _ in events:
                if key.fd == self.fd_in:
                    chunk = os.read(self.fd_in, 1 << 16)
                    if not chunk:
                        self.shutdown()
                        return
                    self.inbuf += chunk
                    while True:
                        nl = self.inbuf.find(b"\n")
                        if nl < 0:
                            break
                        line, self.inbuf = self.inbuf[:nl], self.inbuf[nl + 1:]
                        if line:
                            self.command(line)
                else:
                    got = self.by_fd.get(key.fd)
                    if got is None:
                        continue
                    owner, kind = got
                    if kind in ("judge", "judge-err"):
                        self.judge_input(owner, kind)
                    elif kind == "zygote":
                        if not owner.receive():
                            self.zygote_gone(owner)
                    elif kind == "zygote-err":
                        self.zygote_err(owner)
                    else:
                        self.pump(owner, kind)

    def idle_work(self) -> Any:
        return bool(self.unreaped) or (self.spare is None and self.spare_for is not None) or self.orphan_watch()

    def orphan_watch(self) -> bool:
        return self.orphans_until > 0 and time.monotonic() < self.orphans_until

    def when_idle(self) -> None:
        """What waits for a moment with nothing to read: reaping killed executors, the next spare."""
        for pid in list(self.unreaped):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                self.unreaped.discard(pid)
        if self.zygote_deaths:
            self.reap_orphans()
        if self.spare is None and self.spare_for is not None:
            opts = self.spare_for
            self.spare = (opts, *self.spawn(run_child, opts))

    def take_spare(self, opts: dict[str, Any] | None) -> Any:
        """The spare executor if it was made for these options and is alive; else None, and the
        spare is dropped (opts None: just drop it)."""
        spare, self.spare = self.spare, None
        if spare is None:
            return None
        made_for, pid, sock, err_r = spare
        try:
            exited = os.waitpid(pid, os.WNOHANG)[0] != 0  # reaped now if so: never signal it again
        except ChildProcessError:
            exited = True
        if made_for == opts and not exited:
            return pid, sock, err_r
        self.drop_executor(pid, sock, err_r, alive=not exited)
        return None

    def drop_executor(self, pid: int, sock: Any, err_r: int, alive: bool=True, ours: bool=True) -> None:
        """An executor no audit will use: killed (if `alive`), reaped when idle (if this process is
        its parent: `ours`), its socket end and stderr closed."""
        if alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            if ours:
                self.unreaped.add(pid)
        sock.close()
        try:
            os.close(err_r)
        except OSError:
            pass

    def end_process(self, pid: int) -> None:
        """Kills a process of this server's own (a judge, a zygote) and waits for it."""
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass

    def unwatch(self, *fds: Any) -> None:
        """Stops selecting on those of these descriptors still watched."""
        for fd in fds:
            if fd in self.by_fd:
                self.by_fd.pop(fd, None)
                try:
                    self.sel.unregister(fd)
                except (KeyError, ValueError):
                    pass

    def facts(self) -> Any:
        import platform

        return {
            "python": platform.python_version(),
            "seccomp": self.seccomp.status if self.seccomp else "off",
            "uid": os.getuid(),
            "network": network_state(),
        }

    def command(self, line: bytes) -> None:
        tag = line[:1]
        if tag == b"S":
            sp = line.find(b" ")
            child = self.children.get(line[1:sp].decode())
            if child is None:
                sid = line[1:sp].decode()
                self.emit(b"X" + sid.encode() + b" " + json.dumps({"gone": True}).encode() + b"\n")
                return
            child.send(line[sp + 1:] + b"\n")
        elif tag == b"O":
            sp = line.find(b" ")
            sid = line[1:sp].decode() if sp > 0 else line[1:].decode()
            opts = json.loads(line[sp + 1:]) if sp > 0 else {}
            self.open(sid, opts)
        elif tag == b"K":
            child = self.children.get(line[1:].decode())
            if child is not None:
                if child.judge is not None:
                    self.end_audit(child)
                else:
                    child.kill()
        elif tag == b"P":
            self.emit(b"Z " + json.dumps({"pong": True, "children": len(self.children)}).encode() + b"\n")

    def spawn(self, run: Callable[..., None], opts: dict[str, Any]) -> Any:
        """Forks a process that runs `run(server, its socket, its stderr's write end, opts)` and
        never returns here; gives (pid, the other end of its socket, the read end of its stderr)."""
        import socket

        ours, theirs = socket.socketpair()
        err_r, err_w = os.pipe()
        if run is run_child and not opts.get("deterministic"):
            # SPADE runs games in one long process whose global generators are wherever they are: a
            # game that ignores its seed is not reproducible. `random` reseeds itself after fork;
            # numpy's global generator must be told to, or every child would deal the same stream.
            # Reseeded here, the state the child inherits is fresh OS entropy that no other child
            # gets (this process never draws from it); in the child, numpy's first use faulted in
            # ~130 copy-on-write pages, 0.6 ms of every session's start.
            reseed_numpy()
        pid = os.fork()
        if pid == 0:
            try:
                ours.close()
                os.close(err_r)
                run(self, theirs, err_w, opts)
            finally:
                os._exit(70)
        theirs.close()
        os.close(err_w)
        return pid, ours, err_r

    def open(self, sid: str, opts: dict[str, Any]) -> None:
        if sid in self.children:
            return
        if opts.get("judge"):
            self.open_audit(sid, opts)
            return
        pid, parent_sock, err_r = self.spawn(run_child, opts)
        child = Child(sid, pid, parent_sock, err_r)
        self.children[sid] = child
        self.by_fd[child.sock.fileno()] = (child, "sock")
        self.by_fd[err_r] = (child, "err")
        self.sel.register(child.sock.fileno(), selectors.EVENT_READ, None)
        self.sel.register(err_r, selectors.EVENT_READ, None)
        self.emit(b"Z " + json.dumps({"opened": sid, "pid": pid}).encode() + b"\n")

    def open_audit(self, sid: str, opts: dict[str, Any]) -> None:
        """An audit: the game runs in a process forked for it alone (the executor); the checks run
        in a judge, a process that runs no environment code and is reused from audit to audit
        (as the Pyodide worker's judge interpreter is). The judge gets the executor's end of a
        fresh socket pair over its control socket and drives it until the session ends."""
        import socket

        zygote = self.zygote_for(opts)
        took = self.from_zygote(zygote) if zygote is not None else None
        if took is None:
            zygote = None
            xpid, judge_end, err_r = self.take_spare(opts) or self.spawn(run_child, opts)
            self.spare_for = opts
        else:
            xpid, judge_end, err_r = took
        judge = self.idle_judge(opts)
        child = Child(sid, xpid, None, err_r, judge=judge)
        child.zygote = zygote
        self.children[sid] = child
        self.by_fd[err_r] = (child, "err")
        self.sel.register(err_r, selectors.EVENT_READ, None)
        judge.sid = sid
        judge.audits += 1
        try:
            socket.send_fds(judge.ctl, [b"A" + sid.encode() + b"\n"], [judge_end.fileno()])
        except OSError:
            child.kill()
        judge_end.close()
        self.emit(b"Z " + json.dumps({"opened": sid, "pid": xpid, "judge": judge.pid}).encode() + b"\n")

    def idle_judge(self, opts: dict[str, Any]) -> Any:
        for j in self.judges:
            if j.sid is None and not j.draining:
                return j
        pid, server_end, err_r = self.spawn(run_judge, opts)
        j = Judge(pid, server_end, err_r)
        self.judges.append(j)
        self.by_fd[server_end.fileno()] = (j, "judge")
        self.by_fd[err_r] = (j, "judge-err")
        self.sel.register(server_end.fileno(), selectors.EVENT_READ, None)
        self.sel.register(err_r, selectors.EVENT_READ, None)
        return j

    def judge_input(self, j: Judge, kind: str) -> None:
        fd = j.ctl.fileno() if kind == "judge" else j.err
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            self.judge_gone(j)
            return
        if kind == "judge-err":
            parts = split_lines(j.errbuf, chunk, stderr=True)
            if j.sid in self.children:
                self.tagged(b"E", j.sid, parts)
            return
        parts = split_lines(j.out, chunk)
        for line in parts:
            if j.draining:
                if line == b"F":  # every reply of the ended session is behind it
                    j.draining = False
                    if j.audits >= JUDGE_AUDITS:
                        self.retire(j)
                continue
            child = self.children.get(j.sid)
            if child is None:
                continue
            # What the executor reported before the answer the judge just used (sandbox attempts)
            # goes out first, so the host has every attempt when it reads the verdict.
            self.drain(child)
            self.tagged(b"R", child.sid, [line])

    def drain(self, child: Child) -> None:
        if not child.err_open:
            return
        os.set_blocking(child.err, False)
        try:
            while child.err_open:
                try:
                    self.pump(child, "err")
                except BlockingIOError:
                    break
        finally:
            if child.err_open:
                os.set_blocking(child.err, True)

    def judge_gone(self, j: Judge) -> None:
        """A judge that exited or was killed: its session (if any) ends with it."""
        self.unwatch(j.ctl.fileno(), j.err)
        if j in self.judges:
            self.judges.remove(j)
        self.end_process(j.pid)
        j.ctl.close()
        try:
            os.close(j.err)
        except OSError:
            pass
        child = self.children.get(j.sid)
        if child is not None:
            self.end_audit(child, {"code": None, "judge": "exited"})

    def retire(self, j: Judge) -> None:
        if j.sid is None and not j.draining:
            self.judge_gone(j)

    def end_audit(self, child: Child, status: Any=None) -> None:
        """The host ended an audit session (or its judge died): the executor goes, the judge is told."""
        self.children.pop(child.sid, None)
        child.kill()
        if child.err_open:
            self.by_fd.pop(child.err, None)
            try:
                self.sel.unregister(child.err)
            except (KeyError, ValueError):
                pass
            child.err_open = False
        try:
            os.close(child.err)
        except OSError:
            pass
        # Killed: reaped when the server is idle. Waiting here held every other session up while
        # the kernel tore the process down.
        if not child.reaped:
            self.reap_later(child)
        status = status or {"code": None, "killed": True}
        j = child.judge
        if j is not None and j.sid == child.sid:
            j.sid = None
            if j in self.judges:
                j.draining = True
                try:
                    j.ctl.sendall(b"D\n")
                except OSError:
                    self.judge_gone(j)
        self.emit(b"X" + child.sid.encode() + b" " + json.dumps(status).encode() + b"\n")

    def pump(self, child: Child, kind: str) -> None:
        fd = child.sock.fileno() if kind == "sock" else child.err
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            raise
        except OSError:
            chunk = b""
        if not chunk:
            self.sel.unregister(fd)
            self.by_fd.pop(fd, None)
            if child.judge is not None:
                # An audit's executor is gone (or closed its stderr): it is killed and reaped now;
                # the session itself ends when the host closes it, after the judge has answered.
                child.err_open = False
                child.kill()
                if child.zygote is not None:
                    self.reap_later(child)
                else:
                    try:
                        os.waitpid(child.pid, 0)
                    except ChildProcessError:
                        pass
                child.reaped = True  # its pid may be another process's from now on
                return
            if kind == "sock":
                child.sock_open = False
            else:
                child.err_open = False
            if not child.sock_open and not child.err_open:
                self.reap(child)
            elif kind == "sock":
                child.kill()  # the protocol is gone: the process must go too
            return
        if kind == "sock":
            if child.cut:
                return  # read to its end, relayed no more
            parts = split_lines(child.out, chunk)
            child.out_len = sum(map(len, child.out)) if parts else child.out_len + len(chunk)
            if child.out_len > MAX_REPLY_LINE:
                # Only game code writes a reply that never ends (the harness ends each one): it would
                # hold this server's memory, which every session depends on. That session goes.
                child.out, child.out_len, child.cut = [], 0, True
                self.tagged(b"E", child.sid, [b"the session wrote a reply line over %d MiB without ending it; its process was ended" % (MAX_REPLY_LINE >> 20)])
                child.kill()
        else:
            parts = split_lines(child.errbuf, chunk, stderr=True)
            if child.judge is not None:
                # Only the judge names the check an audit is in: the game's own process could
                # otherwise choose which check a kill at the audit's limit is blamed on.
                parts = [p for p in parts if not p.startswith(b"@audit-phase")]
        self.tagged(b"R" if kind == "sock" else b"E", child.sid, parts)

    def tagged(self, tag: bytes, sid: Any, parts: list[bytes]) -> None:
        if parts:
            prefix = tag + sid.encode() + b" "
            self.emit(b"".join(prefix + p + b"\n" for p in parts))

    def reap(self, child: Child) -> None:
        self.children.pop(child.sid, None)
        for fd in (child.sock.fileno(),):
            self.by_fd.pop(fd, None)
        child.sock.close()
        try:
            os.close(child.err)
        except OSError:
            pass
        status: Any = None
        try:
            _, st = os.waitpid(child.pid, 0)
            status = {"code": os.waitstatus_to_exitcode(st)}
        except ChildProcessError:
            status = {"code": None}
        self.emit(b"X" + child.sid.encode() + b" " + json.dumps(status).encode() + b"\n")

    def shutdown(self) -> None:
        self.take_spare(None)
        for z in list(self.zygotes.values()):
            for pid, _sock, _err in z.ready:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                os.kill(z.pid, signal.SIGKILL)
            except OSError:
                pass
        for child in list(self.children.values()):
            child.kill()
        for j in list(self.judges):
            try:
                os.kill(j.pid, signal.SIGKILL)
            except OSError:
                pass
