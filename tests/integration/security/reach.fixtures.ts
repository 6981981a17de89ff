/**
 * The games of reach.test.ts. A spy looks for every other process in its sandbox (the fork server,
 * the audit zygote, judges, other environments' processes) and tries each way one process of a uid
 * reaches another: its memory, its descriptors, signals, ptrace, its limits and scheduling. It
 * reports, through the one channel an audit has for game text (reset()'s exception message), which
 * processes it saw and which it reached, by method. It runs with or without the in-process guard:
 * with it, what the guard refuses comes back refused; the calls it raises no event for (the
 * scheduling ones) and, with it off, everything else, meet only the OS walls.
 */
export function spyGame(opts: { waitSec?: number; drain?: boolean; numpy?: boolean } = {}): string {
  return `import json, os, time
${opts.numpy ? 'import numpy  # the app audits a numpy game in native CPython\n' : ''}
WAIT = ${opts.waitSec ?? 0}
DRAIN = ${opts.drain ? 'True' : 'False'}

def reached(f):
    """True when the call got past the permission checks: it ran, or failed for another reason."""
    try:
        f()
        return True
    except PermissionError:
        return False  # EPERM, EACCES, or the guard's refusal
    except OSError as e:
        return e.errno != 3  # ESRCH: gone meanwhile
    except Exception:
        return False  # the guard's refusal, a module it refused to import

def libc():
    import ctypes
    return ctypes, ctypes.CDLL(None, use_errno=True)

def syscall(*args):
    ctypes, c = libc()
    if c.syscall(*args) != 0:
        raise OSError(ctypes.get_errno(), "syscall %d" % args[0])

def sigqueue(nr, *target):
    ctypes, _ = libc()
    info = (ctypes.c_int * 32)()
    info[2] = -1  # SI_QUEUE: what a process may send to another
    syscall(nr, *target, 0, ctypes.byref(info))  # signal 0: the permission check alone

def pidfd_signal(p):
    fd = os.open("/proc/%d" % p, os.O_RDONLY)  # a /proc/<pid> directory is a pidfd to pidfd_send_signal
    try:
        syscall(424, fd, 0, None, 0)
    finally:
        os.close(fd)

def ptrace(p):
    syscall(101, 0x4206, p, 0, 0)  # PTRACE_SEIZE: attaches without stopping it
    syscall(101, 17, p, 0, 0)  # PTRACE_DETACH

def vm_read(p):
    ctypes, c = libc()
    buf = ctypes.create_string_buffer(8)
    local = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 8)
    remote = (ctypes.c_void_p * 2)(0x10000, 8)
    if c.process_vm_readv(p, local, 1, remote, 1, 0) < 0:
        raise OSError(ctypes.get_errno(), "process_vm_readv")

stolen = [0]

def descriptors(p):
    got = False
    for n in os.listdir("/proc/%d/fd" % p):
        try:
            fd = os.open("/proc/%d/fd/%s" % (p, n), os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            continue
        got = True
        if DRAIN:  # what the issue's game did: read (and so take) what another process was to read
            try:
                stolen[0] += len(os.read(fd, 1 << 16))
            except OSError:
                pass
        os.close(fd)
    if not got:
        raise PermissionError(13, "no descriptor opened")

def setown(p):
    import fcntl
    r, w = os.pipe()
    try:
        fcntl.fcntl(r, fcntl.F_SETOWN, p)  # no O_ASYNC: nothing is sent
    finally:
        os.close(r)
        os.close(w)

def writable(p, name):
    os.close(os.open("/proc/%d/%s" % (p, name), os.O_WRONLY))

def live(p):
    """Whether the process still has its memory: an exiting one (a zombie) has none, and its
    /proc files open for anyone and read empty."""
    with open("/proc/%d/statm" % p) as f:
        return f.read().split()[0] != "0"

def read(p, name):
    with open("/proc/%d/%s" % (p, name), "rb") as f:
        if name == "mem":
            f.seek(int(open("/proc/%d/maps" % me()).read().split("-")[0], 16))  # a mapped address (the layouts agree: forked)
        data = f.read(1)
    if not data and not live(p):
        raise ProcessLookupError(3, "exiting")

def me():
    return os.getpid()

METHODS = {
    "mem": lambda p: read(p, "mem"),
    "maps": lambda p: read(p, "maps"),
    "environ": lambda p: read(p, "environ"),
    "fd": descriptors,
    "kill": lambda p: os.kill(p, 0),
    "tgkill": lambda p: syscall(234, p, p, 0),
    "sigqueue": lambda p: sigqueue(129, p),
    "tgsigqueue": lambda p: sigqueue(297, p, p),
    "pidfd": lambda p: os.close(os.pidfd_open(p)),
    "pidfd_signal": pidfd_signal,
    "ptrace": ptrace,
    "vm_read": vm_read,
    "setown": setown,
    "prlimit": lambda p: __import__("resource").prlimit(p, __import__("resource").RLIMIT_NOFILE),
    "nice": lambda p: os.setpriority(os.PRIO_PROCESS, p, os.getpriority(os.PRIO_PROCESS, p)),
    "affinity": lambda p: os.sched_setaffinity(p, os.sched_getaffinity(p)),
    "oom": lambda p: writable(p, "oom_score_adj"),
}

def exists(p):
    try:
        os.getpriority(os.PRIO_PROCESS, p)  # no audit event, and nothing but existence told
        return True
    except OSError:
        return False

class SpyEnv:
    def reset(self, seed=None):
        time.sleep(WAIT)
        me = os.getpid()
        seen = [p for p in range(1, 4096) if p != me and exists(p)]
        out = {}
        for name, f in METHODS.items():
            hits = [p for p in seen if reached(lambda: f(p))]
            if hits:
                out[name] = hits
        everyone = os.getuid()
        if reached(lambda: os.setpriority(os.PRIO_USER, everyone, os.getpriority(os.PRIO_USER, everyone))):
            out["nice_user"] = [0]
        raise RuntimeError("reach " + json.dumps({"seen": seen, "reached": out, "stolen": stolen[0]}, sort_keys=True))

    def step(self, action):
        return "o", 0.0, True, False, {}
`;
}

/**
 * A victim: a game that makes forbidden attempts (its audit's `sandbox` evidence, which a spy
 * draining the server's pipes would take) and carries a marker in its source.
 */
export const VICTIM = `import os
SECRET = "victim-source-marker"

class VictimEnv:
    def __init__(self):
        self.n = 0
    def reset(self, seed=None):
        for f in (lambda: open("/etc/hostname").read(), lambda: os.system("id"), lambda: __import__("socket")):
            try:
                f()
            except Exception:
                pass
        self.n = 0
        return "Say \\\\boxed{yes}", {}
    def step(self, action):
        self.n += 1
        won = "yes" in action
        return ("won" if won else "no"), (1.0 if won else 0.0), won or self.n >= 5, False, {}
    def solution(self):
        return "yes"
`;

export interface Reach {
  seen: number[];
  reached: Record<string, number[]>;
  stolen: number;
}

/** The spy's report out of any text that carries its exception message (a reply, a check's message). */
export function reachOf(text: string): Reach {
  const m = /reach (\{.*?"stolen": \d+\})/.exec(text.replace(/\\"/g, '"'));
  if (!m) throw new Error(`no reach report in ${text.slice(0, 2000)}`);
  return JSON.parse(m[1]!) as Reach;
}
