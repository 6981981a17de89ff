"""Native CPython host for the harness: a fork server that gives every environment its own process.

Started by core/runtime/forkServer.ts inside bubblewrap (core/runtime/osSandbox.ts: new user, pid,
network, ipc and uts namespaces, read-only binds of the interpreter only, a private /tmp) as
`python3 -s -E cpython_main.py '<json config>'`. This process never runs environment code: it
imports the harness and the modules games lean on (numpy) once, then forks one child per session.
A child serves that one session and is thrown away with it, so nothing a game does to its
interpreter (patched modules, harness internals, leaked globals) reaches another environment.

Each child, before any environment code runs, applies resource limits, makes itself undumpable,
installs a seccomp filter (no new processes, no exec, no sockets, no ptrace, signals only to
itself) and the audit hook of sandbox.py. bubblewrap and seccomp are the walls; the audit hook is
the third one and the detector: every refused attempt is reported on the child's own stderr pipe,
which only this process reads and tags with the session, so a game cannot speak for another.

Wire (lines, see forkServer.ts): in `O<sid> <config>` open, `S<sid> <request>` call, `K<sid>` kill,
`P` ping; out `Z <json>` server, `R<sid> <reply>`, `E<sid> <stderr line>`, `X<sid> <exit json>`.
"""

import json
import os
import selectors
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
HOST_ONLY = ("harness", "sandbox", "cpython_main")


def main():
    config = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    proto_in, proto_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)

    sys.path.insert(0, HERE)
    import importlib

    import harness
    import sandbox

    extensions = []
    for name in sorted(os.listdir(HERE)):
        stem = name[:-3]
        if name.endswith(".py") and stem.isidentifier() and stem not in HOST_ONLY and not stem.startswith("harness_"):
            extensions.append(importlib.import_module(stem))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
    # Loaded once here, shared copy-on-write by every child. math_verify (SPADE's game prompt imports
    # it) pulls in sympy, which asks ctypes a question at import: answered here, before any guard.
    preload = config.get("preload")
    preload = [m for m in preload if isinstance(m, str)] if isinstance(preload, list) else ["numpy", "math_verify"]
    for mod in ["random", "statistics", "typing", *preload]:
        try:
            importlib.import_module(mod)
        except Exception:
            pass
    # numpy's first seed() imports and builds its entropy machinery (20 ms in every child that
    # reseeds, i.e. every session); done once here, a child's reseed costs half a millisecond.
    reseed_numpy()

    seccomp = Seccomp.build() if config.get("seccomp", True) else None
    roots = [p for p in sys.path if p and os.path.isdir(p)] + [HERE]
    server = ForkServer(proto_in, proto_out, config, harness, sandbox, extensions, seccomp, roots)
    # Everything a child needs is made here once and inherited (a harness no game has touched,
    # libc for prctl, the network facts): a child's own start-up is then only its walls.
    server.prepare()
    import gc

    gc.freeze()  # objects made so far stay out of the collector: forked children share their pages
    server.serve()


def reseed_numpy():
    """numpy's global generator from fresh OS entropy (where numpy is loaded)."""
    np = sys.modules.get("numpy")
    if np is not None:
        try:
            np.random.seed()
        except Exception:
            pass


class ForkServer:
    def __init__(self, fd_in, fd_out, config, harness, sandbox, extensions, seccomp, roots):
        self.fd_in, self.fd_out = fd_in, fd_out
        self.config = config
        self.harness, self.sandbox, self.extensions = harness, sandbox, extensions
        self.seccomp = seccomp
        self.roots = roots
        self.children = {}  # sid -> Child
        self.judges = []  # long-lived audit judges (processes that run no environment code)
        self.by_fd = {}  # fd -> (Child, "sock" | "err")
        self.sel = selectors.DefaultSelector()
        self.inbuf = b""
        # The next audit's executor, forked and walled while the server had nothing else to do, so
        # that an audit's open does not wait for a fork: (its options, pid, socket end, stderr).
        # It has run nothing; an audit with other options gets a process of its own instead.
        self.spare = None
        self.spare_for = None  # the options of the last audit opened: a spare is made for these
        self.unreaped = set()  # killed executors, reaped when idle instead of waited for in line

    def prepare(self):
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

            self.libc = ctypes.CDLL(None, use_errno=True)
        except Exception:
            self.libc = None
        # Which loaded modules the guard drops in each child, found once here: walking sys.modules
        # in a child touched a page per module name (copy-on-write faults, 2 ms a session).
        self.drop_modules = self.sandbox.risky_loaded()

    def emit(self, data):
        view = memoryview(data)
        while view:
            n = os.write(self.fd_out, view)
            view = view[n:]

    def serve(self):
        os.set_blocking(self.fd_in, True)
        self.sel.register(self.fd_in, selectors.EVENT_READ, None)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        self.emit(b"Z " + json.dumps({"ready": True, "pid": os.getpid(), **self.facts()}).encode() + b"\n")
        while True:
            events = self.sel.select(0) if self.idle_work() else ()
            if not events:
                self.when_idle()
                # A killed process may still be dying: look again shortly rather than leave a zombie.
                events = self.sel.select(0.05 if self.unreaped else None)
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
                    else:
                        self.pump(owner, kind)

    def idle_work(self):
        return bool(self.unreaped) or (self.spare is None and self.spare_for is not None)

    def when_idle(self):
        """What waits for a moment with nothing to read: reaping killed executors, the next spare."""
        for pid in list(self.unreaped):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                self.unreaped.discard(pid)
        if self.spare is None and self.spare_for is not None:
            opts = self.spare_for
            self.spare = (opts, *self.spawn(run_child, opts))

    def take_spare(self, opts):
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
        if not exited:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            self.unreaped.add(pid)
        sock.close()
        try:
            os.close(err_r)
        except OSError:
            pass
        return None

    def facts(self):
        import platform

        return {
            "python": platform.python_version(),
            "seccomp": self.seccomp.status if self.seccomp else "off",
            "uid": os.getuid(),
            "network": network_state(),
        }

    def command(self, line):
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

    def spawn(self, run, opts):
        """Forks a process that runs `run(server, its socket, its stderr's write end, opts)` and
        never returns here; gives (pid, the other end of its socket, the read end of its stderr)."""
        import socket

        ours, theirs = socket.socketpair()
        err_r, err_w = os.pipe()
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

    def open(self, sid, opts):
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

    def open_audit(self, sid, opts):
        """An audit: the game runs in a process forked for it alone (the executor); the checks run
        in a judge, a process that runs no environment code and is reused from audit to audit
        (as the Pyodide worker's judge interpreter is). The judge gets the executor's end of a
        fresh socket pair over its control socket and drives it until the session ends."""
        import socket

        xpid, judge_end, err_r = self.take_spare(opts) or self.spawn(run_child, opts)
        self.spare_for = opts
        judge = self.idle_judge(opts)
        child = Child(sid, xpid, None, err_r, judge=judge)
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

    def idle_judge(self, opts):
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

    def judge_input(self, j, kind):
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

    def drain(self, child):
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

    def judge_gone(self, j):
        """A judge that exited or was killed: its session (if any) ends with it."""
        for fd in (j.ctl.fileno(), j.err):
            if fd in self.by_fd:
                self.by_fd.pop(fd, None)
                try:
                    self.sel.unregister(fd)
                except (KeyError, ValueError):
                    pass
        if j in self.judges:
            self.judges.remove(j)
        try:
            os.kill(j.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.waitpid(j.pid, 0)
        except ChildProcessError:
            pass
        j.ctl.close()
        try:
            os.close(j.err)
        except OSError:
            pass
        child = self.children.get(j.sid)
        if child is not None:
            self.end_audit(child, {"code": None, "judge": "exited"})

    def retire(self, j):
        if j.sid is None and not j.draining:
            self.judge_gone(j)

    def end_audit(self, child, status=None):
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
            self.unreaped.add(child.pid)
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

    def pump(self, child, kind):
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
        self.tagged(b"R" if kind == "sock" else b"E", child.sid, parts)

    def tagged(self, tag, sid, parts):
        if parts:
            prefix = tag + sid.encode() + b" "
            self.emit(b"".join(prefix + p + b"\n" for p in parts))

    def reap(self, child):
        self.children.pop(child.sid, None)
        for fd in (child.sock.fileno(),):
            self.by_fd.pop(fd, None)
        child.sock.close()
        try:
            os.close(child.err)
        except OSError:
            pass
        status = None
        try:
            _, st = os.waitpid(child.pid, 0)
            status = {"code": os.waitstatus_to_exitcode(st)}
        except ChildProcessError:
            status = {"code": None}
        self.emit(b"X" + child.sid.encode() + b" " + json.dumps(status).encode() + b"\n")

    def shutdown(self):
        self.take_spare(None)
        for child in list(self.children.values()):
            child.kill()
        for j in list(self.judges):
            try:
                os.kill(j.pid, signal.SIGKILL)
            except OSError:
                pass


# The longest reply line relayed to the host (which could not hold a longer string anyway).
MAX_REPLY_LINE = 256 << 20


def split_lines(pending, chunk, stderr=False):
    """The lines that `chunk` completes. `pending` (a list, updated in place) holds the start of a
    line not ended yet, as the chunks it came in, joined once when its end arrives: relaying a line
    read in n pieces costs its length, not n times its length (re-joining a growing buffer at every
    64 KiB read took 175 ms for the 6 MB reply of a 20,000-step play). Stderr lines are a tail for
    people: blank ones dropped, each cut at 4,000 bytes, an endless one kept to its last 64 KiB."""
    last = chunk.rfind(b"\n")
    if last < 0:
        pending.append(chunk)
        if stderr and sum(map(len, pending)) > 65536:
            pending[:] = [b"".join(pending)[-65536:]]
        return []
    done = b"".join([*pending, chunk[:last]]) if pending else chunk[:last]
    rest = chunk[last + 1:]
    pending[:] = [rest[-65536:] if stderr else rest] if rest else []
    parts = done.split(b"\n")
    if stderr:
        return [p[:4000] for p in parts if p.strip()]
    return parts


class Child:
    """One session's process. An audit's (`judge` set) is its executor, spoken to through the judge."""

    def __init__(self, sid, pid, sock, err, judge=None):
        self.sid, self.pid, self.sock, self.err = sid, pid, sock, err
        self.judge = judge
        self.out = []  # the start of a reply line not ended yet (split_lines)
        self.out_len = 0
        self.cut = False  # its reply passed MAX_REPLY_LINE: killed, and nothing more of it relayed
        self.errbuf = []
        self.sock_open = sock is not None
        self.err_open = True
        self.reaped = False

    def send(self, data):
        try:
            (self.judge.ctl if self.judge is not None else self.sock).sendall(data)
        except OSError:
            self.kill()

    def kill(self):
        if self.reaped:
            return
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass


# A judge is replaced after this many audits: nothing it keeps grows without bound.
JUDGE_AUDITS = 500


class Judge:
    """A process that runs audit checks (native/audit_checks.py) for one session at a time."""

    def __init__(self, pid, ctl, err):
        self.pid, self.ctl, self.err = pid, ctl, err
        self.sid = None
        self.draining = False
        self.audits = 0
        self.out = []  # the start of a reply line not ended yet (split_lines)
        self.errbuf = []


def leave_server(server, err_w, keep=()):
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


def read_lines(read):
    """The lines `read()` delivers, in order; the process exits when it delivers nothing (EOF)."""
    yield from lines_of(read)
    os._exit(0)


def lines_of(read):
    """The lines `read()` delivers, in order, until it delivers nothing (EOF); split as the server
    relays them (split_lines), so a huge line costs its length, not its length squared."""
    pending = []
    while True:
        try:
            chunk = read()
        except InterruptedError:
            continue
        if not chunk:
            return
        yield from split_lines(pending, chunk)


def serve_lines(fd, h):
    """Answers request lines on `fd` with the harness until EOF, then exits."""
    for line in read_lines(lambda: os.read(fd, 1 << 16)):
        if line.strip():
            reply = h.dispatch(line.decode("utf-8", "replace")).encode("utf-8", "replace") + b"\n"
            view = memoryview(reply)
            while view:
                n = os.write(fd, view)
                view = view[n:]


def apply_walls(server, opts):
    """A child's own walls, before anything else runs in it: rlimits, undumpable, seccomp."""
    applied = apply_limits({**server.config, **opts})
    if server.libc is not None:
        PR_SET_DUMPABLE = 4  # other sessions run as the same uid: /proc/<pid>/mem of this one stays closed
        server.libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    seccomp = server.seccomp.install(os.getpid(), server.libc) if server.seccomp else "off"
    return applied, seccomp


def run_judge(server, ctl, err_w, opts):
    """An audit judge: the checks, in a process that runs no environment code. It serves one
    audit session at a time, driving that session's executor over the socket the server hands it
    (`A<sid>` with the descriptor attached), and frees itself on `D` (answering `F`)."""
    import socket

    leave_server(server, err_w, keep=(ctl.fileno(),))
    apply_walls(server, opts)
    harness = server.harness
    checks = sys.modules["audit_checks"]
    current = {"fd": None, "replies": iter(())}

    def transport(line):
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

    def attach(xfd):
        if current["fd"] is not None:
            os.close(current["fd"])
        current["fd"] = xfd
        # 64 KiB reads come from the heap; a 1 MiB one was an mmap, a shrinking mremap and a munmap per reply.
        current["replies"] = lines_of(lambda: os.read(xfd, 1 << 16)) if xfd is not None else iter(())

    h = harness.Harness()
    checks.install_judge(h, harness, transport)
    # Only what a judge is for: no command here may run environment code.
    h.commands = {name: h.commands[name] for name in ("audit", "ping")}
    server.__dict__.clear()

    def write(data):
        view = memoryview(data)
        while view:
            view = view[ctl.send(view):]

    fds = []

    def receive():
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


def run_child(server, sock, err_w, opts):
    """One session's process: walls first, then the harness answers on the socket until EOF."""
    leave_server(server, err_w, keep=(sock.fileno(),))
    harness = server.harness
    if not opts.get("deterministic"):
        # SPADE runs games in one long process whose global generators are wherever they are: a
        # game that ignores its seed is not reproducible. `random` reseeds itself after fork;
        # numpy's global generator must be told to, or every child would deal the same stream.
        reseed_numpy()
    applied, seccomp = apply_walls(server, opts)
    network = server.network
    h = server.fresh_harness  # made in the server, never used there: no game has touched it

    default_timeout = float(opts.get("timeoutSec") or 30)

    alarm = harness.call_alarm(harness.CallTimeout)

    def before(timeout=None):
        alarm.arm(float(timeout or default_timeout))

    after = alarm.disarm

    h.before_call = before
    h.after_call = after
    base_ping = h.commands["ping"]

    def ping(hh, req):
        out = base_ping(hh, req)
        out.update(limits=applied, network=network, pid=os.getpid(), seccomp=seccomp, uid=os.getuid())
        return out

    h.register("ping", ping)

    def report(event):
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


class Seccomp:
    """A seccomp-bpf filter, assembled here (no libseccomp): refuses process creation, exec,
    sockets, ptrace and friends with EPERM, and signals to any process but the caller's own."""

    ARCHES = {
        # AUDIT_ARCH value, syscall numbers
        "x86_64": (0xC000003E, {
            "fork": 57, "vfork": 58, "execve": 59, "execveat": 322, "clone": 56, "clone3": 435,
            "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kill": 62, "tkill": 200,
            "tgkill": 234, "socket": 41, "socketpair": 53, "pidfd_open": 434, "pidfd_send_signal": 424,
            "pidfd_getfd": 438, "setns": 308, "unshare": 272, "mount": 165, "bpf": 321, "perf_event_open": 298,
            "userfaultfd": 323, "io_uring_setup": 425, "keyctl": 250, "add_key": 248, "request_key": 249,
            "mknod": 133, "mknodat": 259, "chroot": 161, "pivot_root": 155, "setsid": 112, "personality": 135,
        }),
        "aarch64": (0xC00000B7, {
            "execve": 221, "execveat": 281, "clone": 220, "clone3": 435, "ptrace": 117, "process_vm_readv": 270,
            "process_vm_writev": 271, "kill": 129, "tkill": 130, "tgkill": 131, "socket": 198, "socketpair": 199,
            "pidfd_open": 434, "pidfd_send_signal": 424, "pidfd_getfd": 438, "setns": 268, "unshare": 97,
            "mount": 40, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282, "io_uring_setup": 425,
            "keyctl": 219, "add_key": 217, "request_key": 218, "mknodat": 33, "chroot": 51, "pivot_root": 41,
            "setsid": 157, "personality": 92,
        }),
    }

    def __init__(self, arch, audit_arch, nrs, status):
        self.arch, self.audit_arch, self.nrs, self.status = arch, audit_arch, nrs, status

    @classmethod
    def build(cls):
        import platform

        arch = platform.machine()
        if sys.platform != "linux" or arch not in cls.ARCHES:
            return cls(arch, 0, {}, f"unavailable on {sys.platform}/{arch}")
        audit_arch, nrs = cls.ARCHES[arch]
        return cls(arch, audit_arch, nrs, "pending")

    def program(self, pid):
        import struct

        LD_W_ABS, JEQ_K, JSET_K, RET_K = 0x20, 0x15, 0x45, 0x06
        ALLOW, KILL = 0x7FFF0000, 0x80000000
        EPERM, ENOSYS = 0x00050000 | 1, 0x00050000 | 38
        CLONE_THREAD = 0x00010000
        nrs = self.nrs
        ins = []  # (code, jt, jf, k); jumps are patched as relative offsets below

        def op(code, k, jt=0, jf=0):
            ins.append([code, jt, jf, k])

        op(LD_W_ABS, 4)  # seccomp_data.arch
        op(JEQ_K, self.audit_arch, 1, 0)
        op(RET_K, KILL)
        op(LD_W_ABS, 0)  # seccomp_data.nr
        if self.arch == "x86_64":
            op(0x35, 0x40000000, 0, 1)  # JGE: the x32 ABI is a second syscall table; refuse it whole
            op(RET_K, EPERM)
        deny = [n for k, n in nrs.items() if k not in ("clone", "clone3", "kill", "tgkill", "tkill")]
        for n in deny:
            op(JEQ_K, n, 0, 1)
            op(RET_K, EPERM)
        op(JEQ_K, nrs["clone3"], 0, 1)
        op(RET_K, ENOSYS)  # glibc then falls back to clone(), whose flags a filter can read
        # clone: threads only (CLONE_THREAD set in flags, the first argument)
        op(JEQ_K, nrs["clone"], 0, 4)
        op(LD_W_ABS, 16)
        op(JSET_K, CLONE_THREAD, 1, 0)
        op(RET_K, EPERM)
        op(RET_K, ALLOW)
        # kill(pid, sig) and tgkill(tgid, tid, sig): only this process may be signalled
        pid_slots = []
        for name in ("kill", "tgkill"):
            op(JEQ_K, nrs[name], 0, 4)
            op(LD_W_ABS, 16)
            pid_slots.append(len(ins))
            op(JEQ_K, pid, 1, 0)
            op(RET_K, EPERM)
            op(RET_K, ALLOW)
        op(JEQ_K, nrs["tkill"], 0, 1)
        op(RET_K, EPERM)
        op(RET_K, ALLOW)
        self.pid_slots = pid_slots
        return b"".join(struct.pack("HBBI", c, jt, jf, k) for c, jt, jf, k in ins), len(ins)

    def prepare(self):
        """Builds the filter once in the server (a child then only writes its pid into it): making
        the ctypes structures in every child cost a millisecond of its start."""
        if self.status != "pending":
            return
        try:
            import ctypes

            prog, n = self.program(0)
            self.buf = ctypes.create_string_buffer(prog, len(prog))

            class Fprog(ctypes.Structure):
                _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

            self.fprog = Fprog(n, ctypes.cast(self.buf, ctypes.c_void_p))
            self.fprog_ref = ctypes.byref(self.fprog)
        except Exception as e:
            self.status = f"not applied: {type(e).__name__}: {e}"

    def install(self, pid, libc=None):
        if self.status != "pending":
            return self.status
        try:
            import ctypes
            import struct

            if getattr(self, "fprog", None) is None:
                self.prepare()
                if self.status != "pending":
                    return self.status
            for i in self.pid_slots:
                struct.pack_into("I", self.buf, i * 8 + 4, pid)
            libc = libc or ctypes.CDLL(None, use_errno=True)
            PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
            if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                return f"not applied: no_new_privs errno {ctypes.get_errno()}"
            if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, self.fprog_ref, 0, 0) != 0:
                return f"not applied: errno {ctypes.get_errno()}"
            return "on"
        except Exception as e:
            return f"not applied: {type(e).__name__}: {e}"


def apply_limits(config):
    applied = {}
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


def network_state():
    """'isolated' when this process sits in a network namespace with nothing but loopback."""
    try:
        import socket

        names = [n for _, n in socket.if_nameindex()]
    except Exception as e:
        return f"unknown ({type(e).__name__})"
    return "isolated" if set(names) <= {"lo"} else "host"


if __name__ == "__main__":
    main()
