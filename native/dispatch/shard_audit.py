"""
A shard of a pool audit, run where a cluster runs it (a Ray task, a Slurm array task): the same
native audit as the workbench's local pool (core/audit/pool.ts). Each environment's audit is a
session of native/cpython_main.py's fork server inside bubblewrap, started here exactly as
core/runtime/osSandbox.ts starts it; this file only supervises calls as core/runtime/supervisor.ts
does (limits, deaths, refused attempts, the check that ran) and hands back the raw reply. Verdicts
are made by the workbench from that reply (finishAudit in core/audit/pool.ts), so no verdict is
made here and none can differ from a local audit's.

Lives in a folder of its own: every top-level native/*.py is imported by the fork server.

Use: python shard_audit.py CONFIG.json ITEMS.jsonl OUT.jsonl [FIRST COUNT]
  CONFIG: {python, harness, envTimeoutSec, memoryMb, cpuSec, workers, options}
  ITEMS: one {"key", "source", "hint"} a line; OUT gets one result a line, appended and flushed as
  each environment finishes (the workbench follows the file as it follows a log).
"""
# Hints stay unevaluated: a cluster node's python may be older than the one mypy checks for.
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, cast

# An item, a config, a reply and a result are JSON objects, read and written as they come.
Json = dict[str, Any]

SANDBOX_HARNESS_DIR = "/opt/spade/native"
# As core/runtime/osSandbox.ts's: --as-pid-1 leaves no process of bubblewrap's inside the sandbox.
BASE_FLAGS = [
    "--unshare-user", "--unshare-pid", "--as-pid-1", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
    "--die-with-parent", "--new-session", "--uid", "65534", "--gid", "65534", "--hostname", "spade-sandbox",
]
TIER_PRELOAD = {"lean": ["numpy"], "full": ["numpy", "math_verify"]}
MATH = re.compile(r"\b(?:math_verify|sympy|latex2sympy2_extended)\b")
PROBE = (
    "import sys, os\n"
    "print(os.pathsep.join(sorted({sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}"
    " | {p for p in sys.path if p and os.path.exists(p)})))\n"
    "print(sys.executable)"
)


def find_bwrap() -> str | None:
    for p in ([os.environ["SPADE_BWRAP"]] if os.environ.get("SPADE_BWRAP") else ["/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"]):
        if os.path.exists(p):
            return p
    return None


def system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ["/lib", "/lib64", "/lib32", "/bin", "/sbin"]:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for f in ["/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives"]:
        if os.path.exists(f):
            args += ["--ro-bind", f, f]
    return args


def interpreter_binds(dirs: Iterable[str]) -> list[str]:
    out: set[str] = set()
    for d in dirs:
        if not d or not os.path.exists(d):
            continue
        for p in (d, os.path.realpath(d)):
            if p in ("/", "/tmp", "/usr") or p.startswith("/usr/") or p.startswith("/proc"):
                continue
            out.add(p)
    kept: list[str] = []
    for p in sorted(out):
        if not any(p.startswith(q.rstrip("/") + "/") for q in kept):
            kept.append(p)
    return [a for p in kept for a in ("--ro-bind", p, p)]


def probe_python(path: str) -> Json | None:
    r = subprocess.run([path, "-s", "-c", PROBE], capture_output=True, text=True, timeout=30, cwd="/",
                       env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/")})
    if r.returncode != 0:
        return None
    dirs, exe = (r.stdout.strip().split("\n") + ["", ""])[:2]
    return {"path": exe if os.path.isabs(exe) else path, "dirs": [d for d in dirs.split(os.pathsep) if os.path.isabs(d)]}


def base_env() -> dict[str, str]:
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
            "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def sandbox_command(py: Json, harness: str, config: str) -> list[str]:
    bwrap = find_bwrap()
    if not bwrap:
        raise RuntimeError("bubblewrap (bwrap) is not installed on this node; native audits are refused without it")
    env = {"HOME": "/tmp", **base_env()}
    return [bwrap, *BASE_FLAGS, *system_binds(), "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
            *interpreter_binds(py["dirs"] + [os.path.dirname(py["path"])]),
            "--ro-bind", harness, SANDBOX_HARNESS_DIR, "--chdir", "/tmp", "--clearenv",
            *[a for k, v in env.items() for a in ("--setenv", k, v)],
            py["path"], "-s", SANDBOX_HARNESS_DIR + "/cpython_main.py", config]


class Tail:
    def __init__(self, limit: int) -> None:
        self.limit, self.text = limit, ""

    def add(self, chunk: str) -> None:
        self.text = (self.text + chunk)[-self.limit:]

    def suffix(self, lines: int = 3) -> str:
        t = self.text.strip()
        return ": " + " | ".join(t.split("\n")[-lines:]) if t else ""


class Session:
    def __init__(self, sid: str) -> None:
        self.sid = sid
        self.violations: list[dict[str, str]] = []
        self.phase = ""
        self.tail = Tail(2000)
        self.done = threading.Event()
        self.reply: Json | None = None

    def settle(self, reply: Json) -> None:
        if self.reply is None:
            self.reply = reply
            self.done.set()

    def die(self, reason: str, kind: str) -> None:
        what = "Time limit" if kind == "timeout" else "Native interpreter failure"
        err: Json = {"kind": kind, "message": "%s: %s" % (what, reason), "restarted": True}
        if self.phase:
            err["phase"] = self.phase
        self.settle({"ok": False, "error": err})


class Server:
    """One fork server (a tier), its stdout read by a thread that routes lines to sessions."""

    def __init__(self, argv: list[str]) -> None:
        self.sessions: dict[str, Session] = {}
        self.lock = threading.Lock()
        self.tail = Tail(4000)
        self.ready = threading.Event()
        self.dead: str | None = None
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/", env={})
        # All three are pipes (PIPE above), never None.
        self.stdin, self.stdout, self.stderr = (cast(IO[bytes], f) for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr))
        threading.Thread(target=self.read, daemon=True).start()
        threading.Thread(target=self.read_err, daemon=True).start()

    def read_err(self) -> None:
        for raw in self.stderr:
            self.tail.add(raw.decode("utf8", "replace"))

    def read(self) -> None:
        for raw in self.stdout:
            line = raw.decode("utf8", "replace").rstrip("\n")
            if line.startswith("Z "):
                try:
                    msg = json.loads(line[2:])
                except ValueError:
                    continue
                if msg.get("ready"):
                    self.ready.set()
                continue
            sp = line.find(" ")
            if sp < 0:
                continue
            tag, sid, rest = line[0], line[1:sp], line[sp + 1:]
            with self.lock:
                s = self.sessions.get(sid)
            if s is None:
                continue
            if tag == "R":
                try:
                    reply = json.loads(rest)
                except ValueError:
                    s.die("the Python process wrote something that is not a protocol reply", "crashed")
                    continue
                if not reply.get("ok") and s.phase and isinstance(reply.get("error"), dict) and "phase" not in reply["error"]:
                    reply["error"]["phase"] = s.phase
                s.settle(reply)
            elif tag == "E":
                if rest.startswith("@sandbox-violation "):
                    try:
                        v = json.loads(rest[19:])
                    except ValueError:
                        v = None
                    if isinstance(v, dict) and isinstance(v.get("event"), str) and len(s.violations) < 200:
                        s.violations.append({"event": v["event"][:100], "detail": str(v.get("detail", "") if v.get("detail") is not None else "")[:300]})
                    continue
                m = re.match(r"^@audit-phase (\S+)", rest)
                if m:
                    s.phase = m.group(1)
                    continue
                s.tail.add(rest + "\n")
            elif tag == "X":
                with self.lock:
                    self.sessions.pop(sid, None)
                s.die("the session's process exited (%s)%s" % (rest, s.tail.suffix()), "crashed")
        code = self.proc.wait()
        self.dead = "the Python fork server exited (%s)%s" % (code if code >= 0 else -code, self.tail.suffix())
        self.ready.set()
        with self.lock:
            gone = list(self.sessions.values())
            self.sessions.clear()
        for s in gone:
            s.die(self.dead, "crashed")

    def write(self, line: str) -> None:
        if self.dead:
            return
        try:
            self.stdin.write(line.encode("utf8"))
            self.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    def open(self, sid: str, opts: Json) -> Session:
        self.ready.wait()
        if self.dead:
            raise RuntimeError(self.dead)
        s = Session(sid)
        with self.lock:
            self.sessions[sid] = s
        self.write("O%s %s\n" % (sid, json.dumps(opts)))
        return s

    def close(self, s: Session) -> None:
        with self.lock:
            self.sessions.pop(s.sid, None)
        self.write("K%s\n" % s.sid)

    def shutdown(self) -> None:
        try:
            self.stdin.close()
            self.proc.wait(timeout=2)
        except Exception:
            self.proc.kill()


class Runner:
    def __init__(self, cfg: Json) -> None:
        self.cfg = cfg
        self.timeout = float(cfg.get("envTimeoutSec", 120))
        self.servers: dict[str, Server] = {}
        self.lock = threading.Lock()
        self.seq = 0
        self.why: str | None = None
        self.py = probe_python(cfg.get("python") or sys.executable)
        if self.py is None:
            self.why = "No usable python3 found on this node (%s)" % (cfg.get("python") or sys.executable)
        elif not find_bwrap():
            self.why = "bubblewrap (bwrap) is not installed on this node; native audits are refused without it"

    def server(self, tier: str) -> Server:
        with self.lock:
            s = self.servers.get(tier)
            if s is None or s.dead:
                config = json.dumps({"memoryMb": self.cfg.get("memoryMb", 2048), "cpuSec": self.cfg.get("cpuSec", 3600),
                                     "timeoutSec": self.timeout, "preload": TIER_PRELOAD[tier]})
                s = Server(sandbox_command(cast(Json, self.py), self.cfg["harness"], config))
                self.servers[tier] = s
            return s

    def audit(self, item: Json) -> Json:
        """One environment, as AuditPool.audit runs it; the raw reply and what the session showed."""
        started = time.time()
        if self.why:
            return {"key": item["key"], "unavailable": self.why}
        with self.lock:
            self.seq += 1
            sid = "audit-%d" % self.seq
        server = self.server("full" if MATH.search(item["source"]) else "lean")
        s = server.open(sid, {"timeoutSec": self.timeout, "judge": True})
        options = dict(self.cfg.get("options") or {})
        options["hint"] = item.get("hint")
        options["phases"] = "lasting"
        server.write("S%s %s\n" % (sid, json.dumps({"cmd": "audit", "source": item["source"], "options": options, "id": 1, "timeoutSec": self.timeout})))
        # The local supervisor checks limits every 250 ms and gives a pool audit no grace.
        if not s.done.wait(self.timeout + 0.25):
            s.die("the call ran past %d ms and did not stop by itself, so its process was killed" % round(self.timeout * 1000), "timeout")
        server.close(s)
        return {"key": item["key"], "reply": s.reply, "violations": list(s.violations), "phase": s.phase,
                "stderrTail": s.tail.text, "elapsedMs": round((time.time() - started) * 1000), "node": os.uname().nodename}

    def shutdown(self) -> None:
        for s in self.servers.values():
            s.shutdown()


def run_items(items: Iterable[Json], cfg: Json, emit: Callable[[Json], object], job: Callable[[Runner, Json], Json] | None = None) -> None:
    """Audits items (or does `job` to each) with cfg['workers'] at a time, calling emit(result) as each finishes."""
    runner = Runner(cfg)
    do = job or Runner.audit
    todo = list(items)
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                if not todo:
                    return
                item = todo.pop(0)
            try:
                r = do(runner, item)
            except Exception as e:  # the interpreter could not start: nothing was judged, so nothing is stored
                r = {"key": item["key"], "failed": "%s: %s" % (type(e).__name__, e)}
            with lock:
                emit(r)

    try:
        threads = [threading.Thread(target=work) for _ in range(max(1, int(cfg.get("workers", 1))))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        runner.shutdown()


def iter_items(items: Iterable[Json], cfg: Json, job: Callable[[Runner, Json], Json] | None = None) -> Iterator[Json]:
    """The same as run_items, as a generator (a Ray streaming task yields each result)."""
    import queue

    q: queue.Queue[object] = queue.Queue()
    done = object()

    def run() -> None:
        try:
            run_items(items, cfg, q.put, job)
        finally:
            q.put(done)

    threading.Thread(target=run, daemon=True).start()
    while True:
        r = q.get()
        if r is done:
            return
        yield cast(Json, r)


def main(argv: list[str], job: Callable[[Runner, Json], Json] | None = None) -> None:
    cfg_path, items_path, out_path = argv[1:4]
    with open(cfg_path) as f:
        cfg = json.load(f)
    cfg.setdefault("harness", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    cfg["harness"] = os.path.abspath(cfg["harness"])
    with open(items_path) as f:
        items = [json.loads(line) for line in f if line.strip()]
    if len(argv) > 5:
        first, count = int(argv[4]), int(argv[5])
        items = items[first:first + count]
    # Results already in OUT (a task run again after a requeue) are not audited twice.
    done: set[str] = set()
    if os.path.exists(out_path):
        with open(out_path) as f:
            for line in f:
                try:
                    done.add(json.loads(line)["key"])
                except (ValueError, KeyError, TypeError):
                    pass  # a line cut short by a kill: its environment runs again
    items = [it for it in items if it["key"] not in done]
    with open(out_path, "a") as out:
        if out.tell() > 0:
            with open(out_path, "rb") as last:
                last.seek(-1, 2)
                if last.read(1) != b"\n":
                    out.write("\n")
        def emit(r: Json) -> None:
            out.write(json.dumps(r) + "\n")
            out.flush()

        run_items(items, cfg, emit, job)


if __name__ == "__main__":
    main(sys.argv)
