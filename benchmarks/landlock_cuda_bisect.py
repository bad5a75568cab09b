"""Which Landlock restriction stops CUDA from initialising on this machine (a GPU diagnostic).

On the H200 VMs every ruleset d2k-profile's probe tried made CUDA fail with error 304 ("OS call
failed"), so the sandbox runs without Landlock there. This script narrows it down. Each case
runs in a fresh process that applies one ruleset and then calls ``cuInit`` and
``cuDeviceGetCount`` through the driver API (no torch, so nothing is initialised before):

* ``none``: no Landlock at all (the control);
* ``grant-all``: every filesystem right handled, and every right granted beneath ``/``
  (a ruleset that should change nothing);
* ``grant-all+net`` / ``grant-all+scope``: the same plus TCP rules / signal and socket scoping;
* ``minus-<right>``: every right granted beneath ``/`` except one: the right whose absence
  breaks CUDA is the one the driver needs outside the sandbox's folders;
* ``d2k``: the ruleset the sandbox uses (:func:`d2k_profile.confine.apply_landlock`);
* ``d2k+grant:<dir>``: that ruleset plus every right beneath ``<dir>``. When ``d2k`` fails, the
  script grants each top-level directory in turn, then the children of each one that makes CUDA
  start, down to the smallest path that does (the place the driver writes);
* ``d2k+env:<NAME>=<value>``: that ruleset with one environment variable set first (the driver's
  JIT cache: ``CUDA_CACHE_DISABLE``, ``CUDA_CACHE_PATH``, ``HOME``);
* ``d2k:<variant>``: the sandbox's ruleset with one of the probe's variants (``proctask``,
  ``procself``: the process's own ``/proc/<pid>/task`` or ``/proc/<pid>`` writable);
* ``d2k+proc:<name>``: the sandbox's ruleset plus writes to one entry of the process's own
  ``/proc/<pid>`` (each owner-writable file, and ``task``): which file the driver writes.

Where ``strace`` exists, the files ``cuInit`` opens for writing (no Landlock) are listed first.

    python benchmarks/landlock_cuda_bisect.py          # prints one line per case
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from d2k_profile import confine as C

RIGHTS = {
    "execute": 1 << 0, "write_file": 1 << 1, "read_file": 1 << 2, "read_dir": 1 << 3, "remove_dir": 1 << 4,
    "remove_file": 1 << 5, "make_char": 1 << 6, "make_dir": 1 << 7, "make_reg": 1 << 8, "make_sock": 1 << 9,
    "make_fifo": 1 << 10, "make_block": 1 << 11, "make_sym": 1 << 12, "refer": 1 << 13, "truncate": 1 << 14,
    "ioctl_dev": 1 << 15,
}


def cuda_init() -> dict:
    lib = ctypes.CDLL("libcuda.so.1")
    rc = lib.cuInit(0)
    count = ctypes.c_int(-1)
    rc2 = lib.cuDeviceGetCount(ctypes.byref(count)) if rc == 0 else None
    return {"cuInit": rc, "cuDeviceGetCount": rc2, "devices": count.value}


def restrict(case: str) -> str:
    if case == "none":
        return "no ruleset"
    if case == "d2k" or case.startswith(("d2k+", "d2k:")):
        build = Path("/tmp/d2k-bisect-build")
        build.mkdir(exist_ok=True)
        arg = case.split(":", 1)[1] if ":" in case else ""
        extra = [arg] if case.startswith("d2k+grant:") else []
        if case.startswith("d2k+env:"):
            name, _, value = arg.partition("=")
            os.environ[name] = value
        if case.startswith("d2k+proc:"):  # one entry of this process's own /proc/<pid>
            extra = [C.own_proc_dir("task") if arg == "task" else f"{C.own_proc_dir('self')}/{arg}"]
        variant = frozenset(arg.split("+")) if case.startswith("d2k:") else frozenset()
        return C.apply_landlock([str(build), *extra], variant)
    abi = C.landlock_abi()
    if abi == 0:
        return "Landlock not available"
    fs = C._fs_rights(abi)
    granted = fs
    if case.startswith("minus-"):
        granted &= ~RIGHTS[case[len("minus-"):]]
    attr = struct.pack("<Q", fs)
    if abi >= 4:
        attr += struct.pack("<Q", (C.NET_BIND_TCP | C.NET_CONNECT_TCP) if "+net" in case else 0)
    if abi >= 6:
        attr += struct.pack("<Q", (C.SCOPE_ABSTRACT_UNIX | C.SCOPE_SIGNAL) if "+scope" in case else 0)
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = C._syscall(C.LANDLOCK_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        return f"create_ruleset failed: {C._err()}"
    if not C._add_path(ruleset, "/", granted):
        return f"rule for / failed: {C._err()}"
    if C._syscall(C.LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
        return f"restrict_self failed: {C._err()}"
    return f"ABI {abi}, handled {fs:#x}, granted beneath / {granted:#x}"


def child(case: str) -> None:
    C.no_new_privs()
    how = restrict(case)
    try:
        out = cuda_init()
    except OSError as exc:
        out = {"error": str(exc)}
    print(json.dumps({"case": case, "ruleset": how, **out}))


def run_case(case: str) -> dict:
    p = subprocess.run([sys.executable, __file__, "child", case], check=False, capture_output=True, text=True, timeout=60)
    try:
        out = json.loads(p.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        out = {"case": case, "rc": p.returncode, "stderr": p.stderr[-300:]}
    print(json.dumps(out), flush=True)
    return out


def started(out: dict) -> bool:
    return out.get("cuInit") == 0


def children_of(path: str) -> list[str]:
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return []
    return [os.path.join(path, n) for n in names if os.path.isdir(os.path.join(path, n)) and not os.path.islink(os.path.join(path, n))]


def narrow(path: str, depth: int) -> None:
    """Grant each child of ``path`` (which makes CUDA start) alone; recurse into those that do."""
    if depth == 0:
        return
    kids = children_of(path)
    if len(kids) > 40:  # /proc: the numbered process folders say nothing; keep self and the named ones
        kids = [k for k in kids if not os.path.basename(k).isdigit()][:40]
    for kid in kids:
        if started(run_case(f"d2k+grant:{kid}")):
            narrow(kid, depth - 1)


def traced_writes() -> None:
    """The files cuInit opens for writing or truncates, without Landlock (strace, where present)."""
    if shutil.which("strace") is None:
        print(json.dumps({"strace": "not installed"}), flush=True)
        return
    log = "/tmp/d2k-bisect-strace.txt"
    subprocess.run(["strace", "-f", "-qq", "-o", log, "-e", "trace=open,openat,creat,truncate,ftruncate,mkdir,mkdirat",
                    sys.executable, __file__, "child", "none"], check=False, capture_output=True, text=True, timeout=120)
    lines = [ln.strip() for ln in Path(log).read_text(errors="replace").splitlines()
             if any(flag in ln for flag in ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "truncate(", "mkdir"))]
    print(json.dumps({"strace_writes": lines[:200]}), flush=True)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "child":
        child(sys.argv[2])
        return
    traced_writes()
    cases = ["none", "grant-all", "grant-all+net", "grant-all+scope", *(f"minus-{r}" for r in RIGHTS),
             "d2k+env:CUDA_CACHE_DISABLE=1", "d2k+env:CUDA_CACHE_PATH=/tmp/d2k-bisect-build", "d2k+env:HOME=/tmp/d2k-bisect-build"]
    results = {case: run_case(case) for case in cases}
    if not started(results["none"]) or started(run_case("d2k")):
        return  # no CUDA at all here, or the sandbox's ruleset already works
    for variant in ("proctask", "procself"):
        run_case(f"d2k:{variant}")
    for name in ["task", *own_writable_proc_files()]:
        run_case(f"d2k+proc:{name}")
    narrow("/", depth=4)


def own_writable_proc_files() -> list[str]:
    """Owner-writable files of /proc/self (comm, oom_score_adj, coredump_filter, ...)."""
    base = Path("/proc/self")
    out = []
    for entry in sorted(base.iterdir()):
        try:
            if entry.is_file() and not entry.is_symlink() and entry.stat().st_mode & 0o200:
                out.append(entry.name)
        except OSError:
            continue
    return out


if __name__ == "__main__":
    main()
