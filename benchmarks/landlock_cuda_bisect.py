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
* ``d2k``: the ruleset the sandbox uses (:func:`d2k_profile.confine.apply_landlock`).

    python benchmarks/landlock_cuda_bisect.py          # prints one line per case
"""

from __future__ import annotations

import ctypes
import json
import struct
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from d2k_profile import confine as C  # noqa: E402

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
    if case == "d2k":
        Path("/tmp/d2k-bisect-build").mkdir(exist_ok=True)
        return C.apply_landlock(["/tmp/d2k-bisect-build"])
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


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "child":
        child(sys.argv[2])
        return
    cases = ["none", "grant-all", "grant-all+net", "grant-all+scope", *(f"minus-{r}" for r in RIGHTS), "d2k"]
    for case in cases:
        p = subprocess.run([sys.executable, __file__, "child", case], capture_output=True, text=True, timeout=60)
        line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else json.dumps({"case": case, "rc": p.returncode, "stderr": p.stderr[-300:]})
        print(line, flush=True)


if __name__ == "__main__":
    main()
