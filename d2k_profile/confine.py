"""The OS sandbox the untrusted process puts itself in, before it imports torch or the submission.

Layers, each applied where the kernel allows and reported either way (the report goes to
``environment.json`` and is checked by a self-test right after it is applied):

* **Landlock** (Linux >= 5.13): read and execute everywhere, write only beneath the sandbox's build
  folder (plus the GPU device files and, on a CPU, the shared-memory folder of its buffers); with
  ABI >= 4 no TCP bind/connect; with ABI >= 6 no signals to processes outside the sandbox (the
  judge, the parent). Landlock also forbids ptrace of any process outside the sandbox.
* **seccomp** (a BPF filter, no library needed): ``ptrace``, ``process_vm_readv/writev``,
  ``pidfd_getfd``, ``process_madvise``, ``kcmp``, ``perf_event_open``, ``bpf``, ``setsid`` (every
  descendant stays in the sandbox's session, which is how all of them are killed: ninja needs
  ``setpgid``, so process groups alone would not do), ``io_uring_*`` (it bypasses seccomp) fail
  with EPERM; ``socket`` fails with EACCES for every family but AF_UNIX and
  AF_NETLINK: no network. Other architectures' system calls (i386, x32) are refused.
* **capabilities**: the bounding set and the effective/permitted/inheritable sets are emptied (this
  matters when d2k-profile runs as root, as on the GPU machines).

``no_new_privs`` is set first (both Landlock and an unprivileged seccomp filter need it).
"""

from __future__ import annotations

import ctypes
import errno
import glob
import os
import platform
import socket
import struct
from dataclasses import dataclass, field

_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long
_prctl = _libc.prctl

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, PR_CAPBSET_DROP, PR_GET_NO_NEW_PRIVS = 38, 22, 24, 39
SECCOMP_MODE_FILTER = 2

# System call numbers: the Landlock ones are shared by every architecture (added after 4.x).
LANDLOCK_CREATE_RULESET, LANDLOCK_ADD_RULE, LANDLOCK_RESTRICT_SELF = 444, 445, 446
ARCH = {
    "x86_64": {"audit": 0xC000003E, "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "setsid": 112, "setpgid": 109,
               "kcmp": 312, "perf_event_open": 298, "bpf": 321, "socket": 41, "capset": 126},
    "aarch64": {"audit": 0xC00000B7, "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "setsid": 157, "setpgid": 154,
                "kcmp": 272, "perf_event_open": 241, "bpf": 280, "socket": 198, "capset": 91},
}
COMMON = {"pidfd_getfd": 438, "process_madvise": 440, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427}
DENIED = ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise", "kcmp", "perf_event_open", "bpf",
          "setsid", "io_uring_setup", "io_uring_enter", "io_uring_register")
ALLOWED_SOCKETS = (socket.AF_UNIX, socket.AF_NETLINK)

# Landlock access rights (uapi/linux/landlock.h)
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_DIR_ONLY = sum(1 << b for b in range(4, 13))  # remove dir/file, make char/dir/reg/sock/fifo/block/sym
FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1 << 0, 1 << 1
RULE_PATH_BENEATH = 1


@dataclass
class Report:
    """What is enforced in this process (values are short human-readable strings)."""

    enforced: dict[str, str] = field(default_factory=dict)
    self_test: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return {"enforced": dict(self.enforced), "self_test": dict(self.self_test)}


def _err() -> str:
    return os.strerror(ctypes.get_errno())


def no_new_privs() -> bool:
    return _prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 where it is not available."""
    v = _syscall(LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # LANDLOCK_CREATE_RULESET_VERSION
    return int(v) if v > 0 else 0


def _fs_rights(abi: int) -> int:
    rights = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_READ_DIR | FS_DIR_ONLY
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


def _add_path(ruleset: int, path: str, rights: int) -> bool:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not os.path.isdir(path):  # only file rights apply to a file
            rights &= FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
        attr = struct.pack("<Qi", rights, fd)
        buf = ctypes.create_string_buffer(attr, len(attr))
        return _syscall(LANDLOCK_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH), buf, ctypes.c_uint32(0)) == 0
    finally:
        os.close(fd)


def device_files() -> list[str]:
    """Character devices a GPU process must open read-write (and /dev/null and friends)."""
    return sorted(set(glob.glob("/dev/nvidia*") + glob.glob("/dev/nvidia-caps/*") + glob.glob("/dev/dri/*"))) + [
        "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"]


OPEN_DIRS = ("/dev", "/tmp", "/var/tmp", "/run", "/dev/shm")


OWN_PROC_RIGHTS = FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_READ_DIR
_pinned_proc_dirs: list[int] = []  # fds held open for the process's lifetime (see own_proc_dir)


def own_proc_dir(part: str) -> str:
    """This process's own procfs entry (``/proc/<pid>`` or ``/proc/<pid>/task``), held open.

    Why: the H200's CUDA driver writes files of its own process under /proc (cuInit fails with
    CUDA_ERROR_OPERATING_SYSTEM when Landlock denies it; granting writes beneath /proc makes it
    succeed, and benchmarks/landlock_cuda_bisect.py narrows it further). Only the process's own
    entry is granted: magic links in it (``root``, ``cwd``, ``fd/N``) resolve to their targets,
    which Landlock checks on their own path, so they open nothing outside the sandbox. Landlock
    matches a rule by inode and procfs may rebuild a pid directory's dentry (and inode) once it is
    unused, so the directory is kept open, which pins it."""
    path = f"/proc/{os.getpid()}" + ("/task" if part == "task" else "")
    try:
        _pinned_proc_dirs.append(os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
    except OSError:
        pass
    return path


def apply_landlock(write_dirs: list[str], variant: frozenset[str] = frozenset()) -> str:
    """``variant`` loosens the ruleset where a machine's GPU stack needs it (chosen by
    :mod:`d2k_profile.probe`, narrowest first): ``proctask`` (the process's own /proc/<pid>/task
    writable: its threads' files), ``procself`` (all of its own /proc/<pid> writable), ``noscope``
    (no signal/abstract-socket scoping), ``noioctl`` (device ioctls not governed), ``opendev``
    (/dev, /tmp, /run writable too)."""
    abi = landlock_abi()
    if abi == 0:
        return "not available (kernel without Landlock or it is disabled)"
    fs = _fs_rights(min(abi, 4) if "noioctl" in variant else abi)  # every rule's rights must be a subset (else EINVAL)
    attr = struct.pack("<Q", fs)
    if abi >= 4:
        attr += struct.pack("<Q", NET_BIND_TCP | NET_CONNECT_TCP)
    if abi >= 6 and "noscope" not in variant:
        attr += struct.pack("<Q", SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL)
    if "opendev" in variant:
        write_dirs = [*write_dirs, *OPEN_DIRS]
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _syscall(LANDLOCK_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        return f"failed: landlock_create_ruleset: {_err()}"
    try:
        if not _add_path(ruleset, "/", FS_READ_FILE | FS_READ_DIR | FS_EXECUTE):
            return f"failed: rule for /: {_err()}"
        writable = [d for d in write_dirs if d and os.path.exists(d)]
        for d in writable:
            _add_path(ruleset, d, fs)
        for f in device_files():
            if os.path.exists(f) and not _add_path(ruleset, f, fs & (FS_READ_FILE | FS_WRITE_FILE | FS_IOCTL_DEV | FS_TRUNCATE)):
                return f"failed: rule for {f}: {_err()}"
        own_proc = [own_proc_dir(v[4:]) for v in ("proctask", "procself") if v in variant]
        for d in own_proc:
            if not _add_path(ruleset, d, fs & OWN_PROC_RIGHTS):
                return f"failed: rule for {d}: {_err()}"
        if _syscall(LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            return f"failed: landlock_restrict_self: {_err()}"
    finally:
        os.close(ruleset)
    extra = []
    if abi >= 4:
        extra.append("no TCP bind/connect")
    if abi >= 6 and "noscope" not in variant:
        extra.append("no signals or abstract sockets outside the sandbox")
    if own_proc:
        extra.append(f"its own {', '.join(own_proc)} writable (procfs files of this process only)")
    if "noioctl" in variant and abi >= 5:
        extra.append("device ioctls not governed")
    return f"on (ABI {abi}): writes only beneath {', '.join(writable)} and device files" + (f"; {'; '.join(extra)}" if extra else "")


def drop_capabilities() -> str:
    """Empty the bounding set and the effective/permitted/inheritable capability sets."""
    dropped = 0
    for cap in range(64):
        if _prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0:
            dropped += 1
        elif ctypes.get_errno() == errno.EINVAL:  # past the last capability this kernel knows
            break
    header = struct.pack("<Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = bytes(24)  # two __user_cap_data_struct, all zero
    hbuf, dbuf = ctypes.create_string_buffer(header, 8), ctypes.create_string_buffer(data, 24)
    if _libc.capset(hbuf, dbuf) != 0:
        return f"failed: capset: {_err()}"
    return f"on: all capabilities dropped (bounding set: {dropped} removed)" if dropped else "on: no capabilities held"


def _bpf(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


AF_VSOCK = 40


def seccomp_program(arch: dict[str, int], families: tuple[int, ...] | None = ALLOWED_SOCKETS) -> bytes:
    """The filter: wrong architecture -> ENOSYS; denied calls -> EPERM; socket() of a family not in
    ``families`` -> EACCES (``None``: any family); everything else allowed."""
    LD, JEQ, JGE, RET = 0x20, 0x15, 0x35, 0x06
    ALLOW, ERRNO = 0x7FFF0000, 0x00050000
    nrs = [arch.get(n, COMMON.get(n)) for n in DENIED]
    prog = [_bpf(LD, 0, 0, 4), _bpf(JEQ, 1, 0, arch["audit"]), _bpf(RET, 0, 0, ERRNO | errno.ENOSYS), _bpf(LD, 0, 0, 0),
            _bpf(JGE, 0, 1, 0x40000000), _bpf(RET, 0, 0, ERRNO | errno.ENOSYS)]
    for nr in nrs:  # if equal: return EPERM (next instruction), else skip it
        prog += [_bpf(JEQ, 0, 1, nr), _bpf(RET, 0, 0, ERRNO | errno.EPERM)]
    if families is not None:
        prog += [_bpf(JEQ, 0, 1 + 2 * len(families) + 1, arch["socket"]), _bpf(LD, 0, 0, 16)]  # args[0], low 32 bits
        for fam in families:
            prog += [_bpf(JEQ, 0, 1, fam), _bpf(RET, 0, 0, ALLOW)]
        prog += [_bpf(RET, 0, 0, ERRNO | errno.EACCES)]
    prog += [_bpf(RET, 0, 0, ALLOW)]
    return b"".join(prog)


def apply_seccomp(variant: str = "") -> str:
    """``variant``: ``vsock`` also allows AF_VSOCK sockets (a VM's channel to its host, which some
    GPU stacks use), ``inet`` any socket family (network is then only Landlock's to refuse)."""
    arch = ARCH.get(platform.machine())
    if arch is None:
        return f"not available (no filter for {platform.machine()})"
    families = None if variant == "inet" else (*ALLOWED_SOCKETS, AF_VSOCK) if variant == "vsock" else ALLOWED_SOCKETS
    prog = seccomp_program(arch, families)
    n = len(prog) // 8
    filt = ctypes.create_string_buffer(prog, len(prog))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(n, ctypes.cast(filt, ctypes.c_void_p))
    if _prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return f"failed: {_err()}"
    sockets = {"inet": "sockets of any family", "vsock": "sockets only AF_UNIX/AF_NETLINK/AF_VSOCK"}.get(variant, "sockets only AF_UNIX/AF_NETLINK")
    return f"on: ptrace, process_vm_readv/writev, pidfd_getfd, io_uring, setsid, bpf, perf_event_open denied; {sockets}"


def self_test(build_dir: str) -> dict[str, str]:
    """Try what the sandbox must refuse, and say what happened."""
    out: dict[str, str] = {}
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.close()
        out["network"] = "NOT blocked: an AF_INET socket was created"
    except OSError as exc:
        out["network"] = f"blocked ({errno.errorcode.get(exc.errno, exc.errno)})"
    r = _syscall(101 if platform.machine() == "x86_64" else 117, ctypes.c_long(16), ctypes.c_long(os.getppid()), None, None)  # PTRACE_ATTACH
    out["ptrace"] = "NOT blocked" if r == 0 else f"blocked ({errno.errorcode.get(ctypes.get_errno(), '?')})"
    probe = os.path.join(os.path.dirname(os.path.abspath(build_dir)) or "/", f".d2k-landlock-probe-{os.getpid()}")
    try:
        fd = os.open(probe, os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)
        os.unlink(probe)
        out["write outside the build folder"] = "NOT blocked"
    except OSError as exc:
        out["write outside the build folder"] = f"blocked ({errno.errorcode.get(exc.errno, exc.errno)})"
    return out


def apply(build_dir: str, write_dirs: list[str], layers: list[str]) -> Report:
    """Confine this process (call it once, before importing anything untrusted)."""
    rep = Report()
    if not no_new_privs():
        rep.enforced["no_new_privs"] = f"failed: {_err()}"
    else:
        rep.enforced["no_new_privs"] = "on"
    landlock = next((layer for layer in layers if layer.split(":")[0] == "landlock"), None)
    variant = frozenset(landlock.split(":", 1)[1].split("+")) if landlock and ":" in landlock else frozenset()
    rep.enforced["landlock"] = apply_landlock([build_dir, *write_dirs], variant) if landlock else "off (not requested)"
    rep.enforced["capabilities"] = drop_capabilities() if "capabilities" in layers else "off (not requested)"
    seccomp = next((layer for layer in layers if layer.split(":")[0] == "seccomp"), None)
    rep.enforced["seccomp"] = apply_seccomp(seccomp.split(":", 1)[1] if seccomp and ":" in seccomp else "") if seccomp else "off (not requested)"
    rep.self_test = self_test(build_dir)
    return rep
