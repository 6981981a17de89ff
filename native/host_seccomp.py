"""The seccomp filter every forked child installs before any environment code runs."""

from __future__ import annotations

import sys
from typing import Any


class Seccomp:
    """A seccomp-bpf filter, assembled here (no libseccomp): refuses process creation, exec,
    sockets, ptrace and friends with EPERM, and every call that acts on another process (signals,
    its limits, priority, scheduling, an owner for SIGIO) unless it names the caller's own."""

    ARCHES = {
        # AUDIT_ARCH value, syscall numbers
        "x86_64": (0xC000003E, {
            "fork": 57, "vfork": 58, "execve": 59, "execveat": 322, "clone": 56, "clone3": 435,
            "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kill": 62, "tkill": 200,
            "tgkill": 234, "socket": 41, "socketpair": 53, "pidfd_open": 434, "pidfd_send_signal": 424,
            "pidfd_getfd": 438, "setns": 308, "unshare": 272, "mount": 165, "bpf": 321, "perf_event_open": 298,
            "userfaultfd": 323, "io_uring_setup": 425, "keyctl": 250, "add_key": 248, "request_key": 249,
            "mknod": 133, "mknodat": 259, "chroot": 161, "pivot_root": 155, "setsid": 112, "personality": 135,
            "creat": 85,
        }, {
            "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297, "prlimit64": 302, "sched_setaffinity": 203,
            "sched_setparam": 142, "sched_setscheduler": 144, "sched_setattr": 314, "setpriority": 141,
            "ioprio_set": 251, "fcntl": 72, "ioctl": 16, "open": 2, "openat": 257, "openat2": 437,
        }),
        "aarch64": (0xC00000B7, {
            "execve": 221, "execveat": 281, "clone": 220, "clone3": 435, "ptrace": 117, "process_vm_readv": 270,
            "process_vm_writev": 271, "kill": 129, "tkill": 130, "tgkill": 131, "socket": 198, "socketpair": 199,
            "pidfd_open": 434, "pidfd_send_signal": 424, "pidfd_getfd": 438, "setns": 268, "unshare": 97,
            "mount": 40, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282, "io_uring_setup": 425,
            "keyctl": 219, "add_key": 217, "request_key": 218, "mknodat": 33, "chroot": 51, "pivot_root": 41,
            "setsid": 157, "personality": 92,
        }, {
            "rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240, "prlimit64": 261, "sched_setaffinity": 122,
            "sched_setparam": 118, "sched_setscheduler": 119, "sched_setattr": 274, "setpriority": 140,
            "ioprio_set": 30, "fcntl": 25, "ioctl": 29, "openat": 56, "openat2": 437,
        }),
    }

    # Calls whose first argument names a process (0: the caller): allowed for the caller only. A
    # game otherwise reaches every process of its uid in the sandbox, the fork server, the judge
    # and other environments' processes among them: a queued signal kills one, prlimit64 shrinks its
    # limits, the scheduling calls starve it (none of these raises an audit event or needs ctypes).
    OWN_PID_ONLY = ("prlimit64", "sched_setaffinity", "sched_setparam", "sched_setscheduler", "sched_setattr")
    # Signals: the caller's own pid only, never 0 (its process group) or a negative one.
    OWN_SIGNALS = ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")
    # fcntl F_SETOWN/F_SETOWN_EX and ioctl FIOSETOWN/SIOCSPGRP name a process that the kernel then
    # signals (F_SETSIG picks any signal, SIGKILL too) when the descriptor is ready, with the
    # rights of whoever set the owner: a signal to any process of the uid.
    SET_OWNER = {"fcntl": (8, 15), "ioctl": (0x8901, 0x8902)}
    # Opening for writing (the audit hook refuses every such open): /proc/<pid>/oom_score_adj,
    # sched, clear_refs ... of a process of the same uid are writable where the sandbox's uid is the
    # host's root, and no file a game may write is anywhere in the sandbox.
    OPEN_FLAGS_ARG = {"open": 1, "openat": 2}

    def __init__(self, arch: Any, audit_arch: Any, nrs: Any, status: Any, args_nrs: Any=None) -> None:
        self.arch, self.audit_arch, self.nrs, self.status = arch, audit_arch, nrs, status
        self.args_nrs = args_nrs or {}

    @classmethod
    def build(cls) -> Any:
        import platform

        arch = platform.machine()
        if sys.platform != "linux" or arch not in cls.ARCHES:
            return cls(arch, 0, {}, f"unavailable on {sys.platform}/{arch}")
        audit_arch, nrs, args_nrs = cls.ARCHES[arch]
        return cls(arch, audit_arch, nrs, "pending", args_nrs)

    # What the audit zygote (host_zygote.py) may still do under its own filter: fork executors and
    # make their sockets. Signals are left to each executor's filter, which allows its own pid only.
    ZYGOTE_ALLOWS = ("clone", "socketpair", "kill", "tkill", "tgkill")

    def program(self, pid: int, zygote: bool=False) -> Any:
        import struct

        LD_W_ABS, JEQ_K, JSET_K, RET_K = 0x20, 0x15, 0x45, 0x06
        ALLOW, KILL = 0x7FFF0000, 0x80000000
        EPERM, ENOSYS = 0x00050000 | 1, 0x00050000 | 38
        CLONE_THREAD = 0x00010000
        nrs, args_nrs = self.nrs, self.args_nrs
        # (code, jt, jf, k): a jump is a label (resolved below to a relative offset) or an offset
        ins: list[list[Any]] = []
        labels: dict[str, int] = {}
        pid_slots: list[int] = []

        def op(code: Any, k: Any, jt: Any=0, jf: Any=0) -> None:
            ins.append([code, jt, jf, k])

        def mark(name: str) -> None:
            labels[name] = len(ins)

        def arg(i: int) -> None:
            op(LD_W_ABS, 16 + 8 * i)  # the low word of argument i: the kernel reads these as int

        def is_pid(yes: str, no: str) -> None:
            pid_slots.append(len(ins))
            op(JEQ_K, pid, yes, no)

        op(LD_W_ABS, 4)  # seccomp_data.arch
        op(JEQ_K, self.audit_arch, 1, 0)
        op(RET_K, KILL)
        op(LD_W_ABS, 0)  # seccomp_data.nr
        if self.arch == "x86_64":
            op(0x35, 0x40000000, 0, 1)  # JGE: the x32 ABI is a second syscall table; refuse it whole
            op(RET_K, EPERM)
        deny = [n for k, n in nrs.items() if k not in ("clone", "clone3", "kill", "tgkill", "tkill") and not (zygote and k in self.ZYGOTE_ALLOWS)]
        for n in deny:
            op(JEQ_K, n, 0, 1)
            op(RET_K, EPERM)
        op(JEQ_K, nrs["clone3"], 0, 1)
        op(RET_K, ENOSYS)  # glibc then falls back to clone(), whose flags a filter can read
        if zygote:
            op(RET_K, ALLOW)
            return b"".join(struct.pack("HBBI", c, jt, jf, k) for c, jt, jf, k in ins), len(ins)
        if "openat2" in args_nrs:
            op(JEQ_K, args_nrs["openat2"], 0, 1)
            op(RET_K, ENOSYS)  # its flags sit behind a pointer; callers fall back to openat
        # clone: threads only (CLONE_THREAD set in flags, the first argument)
        op(JEQ_K, nrs["clone"], 0, 4)
        op(LD_W_ABS, 16)
        op(JSET_K, CLONE_THREAD, 1, 0)
        op(RET_K, EPERM)
        op(RET_K, ALLOW)
        op(JEQ_K, nrs["tkill"], 0, 1)
        op(RET_K, EPERM)
        # Each block below starts on the syscall number in the accumulator and ends in a return, so
        # a call that is not its own jumps past it with the number still loaded.
        for i, name in enumerate(n for n in (*self.OWN_SIGNALS, *self.OWN_PID_ONLY) if n in nrs or n in args_nrs):
            op(JEQ_K, nrs.get(name, args_nrs.get(name)), 0, f"n{i}")
            arg(0)
            if name in self.OWN_PID_ONLY:
                op(JEQ_K, 0, "allow", 0)
            is_pid("allow", "eperm")
            mark(f"n{i}")
        for name, which in (("setpriority", 0), ("ioprio_set", 1)):  # PRIO_PROCESS, IOPRIO_WHO_PROCESS
            if name not in args_nrs:
                continue
            op(JEQ_K, args_nrs[name], 0, f"w{name}")
            arg(0)
            op(JEQ_K, which, 0, "eperm")
            arg(1)
            op(JEQ_K, 0, "allow", 0)
            is_pid("allow", "eperm")
            mark(f"w{name}")
        for name, cmds in self.SET_OWNER.items():
            op(JEQ_K, args_nrs[name], 0, f"o{name}")
            arg(1)
            for c in cmds:
                op(JEQ_K, c, "eperm", 0)
            op(RET_K, ALLOW)
            mark(f"o{name}")
        for name, i in self.OPEN_FLAGS_ARG.items():
            if name not in args_nrs:
                continue
            op(JEQ_K, args_nrs[name], 0, f"f{name}")
            arg(i)
            op(JSET_K, 3, "eperm", "allow")  # O_WRONLY | O_RDWR
            mark(f"f{name}")
        mark("allow")
        op(RET_K, ALLOW)
        mark("eperm")
        op(RET_K, EPERM)
        for at, row in enumerate(ins):
            for j in (1, 2):
                if isinstance(row[j], str):
                    row[j] = labels[row[j]] - at - 1
                if not 0 <= row[j] <= 255:
                    raise ValueError(f"seccomp jump out of range at {at}")
        self.pid_slots = pid_slots
        return b"".join(struct.pack("HBBI", c, jt, jf, k) for c, jt, jf, k in ins), len(ins)

    def prepare(self) -> None:
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
            zprog, zn = self.program(0, zygote=True)
            self.zbuf = ctypes.create_string_buffer(zprog, len(zprog))
            self.zfprog = Fprog(zn, ctypes.cast(self.zbuf, ctypes.c_void_p))
            self.zfprog_ref = ctypes.byref(self.zfprog)
        except Exception as e:
            self.status = f"not applied: {type(e).__name__}: {e}"

    def install(self, pid: int, libc: Any=None, zygote: bool=False) -> Any:
        """Puts the filter on this process: a session's (`pid`, the one process it may signal), or
        with `zygote` the audit zygote's, which refuses everything a session's does but forking,
        socket pairs and signals; stacked under it, each executor's own filter refuses those too."""
        if self.status != "pending":
            return self.status
        try:
            import ctypes
            import struct

            if getattr(self, "fprog", None) is None:
                self.prepare()
                if self.status != "pending":
                    return self.status
            if not zygote:
                for i in self.pid_slots:
                    struct.pack_into("I", self.buf, i * 8 + 4, pid)
            libc = libc or ctypes.CDLL(None, use_errno=True)
            PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
            if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                return f"not applied: no_new_privs errno {ctypes.get_errno()}"
            if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, self.zfprog_ref if zygote else self.fprog_ref, 0, 0) != 0:
                return f"not applied: errno {ctypes.get_errno()}"
            return "on"
        except Exception as e:
            return f"not applied: {type(e).__name__}: {e}"

