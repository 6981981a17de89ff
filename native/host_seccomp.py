"""The seccomp filter every forked child installs before any environment code runs."""

from __future__ import annotations

import sys
from typing import Any


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

    def __init__(self, arch: Any, audit_arch: Any, nrs: Any, status: Any) -> None:
        self.arch, self.audit_arch, self.nrs, self.status = arch, audit_arch, nrs, status

    @classmethod
    def build(cls) -> Any:
        import platform

        arch = platform.machine()
        if sys.platform != "linux" or arch not in cls.ARCHES:
            return cls(arch, 0, {}, f"unavailable on {sys.platform}/{arch}")
        audit_arch, nrs = cls.ARCHES[arch]
        return cls(arch, audit_arch, nrs, "pending")

    # What the audit zygote (host_zygote.py) may still do under its own filter: fork executors and
    # make their sockets. Signals are left to each executor's filter, which allows its own pid only.
    ZYGOTE_ALLOWS = ("clone", "socketpair", "kill", "tkill", "tgkill")

    def program(self, pid: int, zygote: bool=False) -> Any:
        import struct

        LD_W_ABS, JEQ_K, JSET_K, RET_K = 0x20, 0x15, 0x45, 0x06
        ALLOW, KILL = 0x7FFF0000, 0x80000000
        EPERM, ENOSYS = 0x00050000 | 1, 0x00050000 | 38
        CLONE_THREAD = 0x00010000
        nrs = self.nrs
        ins = []  # (code, jt, jf, k); jumps are patched as relative offsets below

        def op(code: Any, k: Any, jt: Any=0, jf: Any=0) -> None:
            ins.append([code, jt, jf, k])

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

