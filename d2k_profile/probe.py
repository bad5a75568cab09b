"""Which sandbox layers a machine's GPU stack tolerates, found once and cached.

A sandbox must initialise CUDA and map the judge's buffers (CUDA IPC) after it has confined
itself, and some driver stacks refuse that under some layer (on the H200 VMs of this workplace,
CUDA failed to initialise inside the first sandbox with error 304). Before a GPU run the parent
runs this probe: one process allocates and exports a buffer, and children confine themselves with
a candidate set of layers, then initialise CUDA and read the buffer through its IPC handle. The
strictest set that works is used for every sandbox of the run; what failed, and why, goes into
``environment.json``. The result is cached per machine (kernel, driver, torch) beside the native
module. CPU runs need no probe: every layer applies (the CPU tests check it).

Usage (internal): ``python -m d2k_profile.probe parent NATIVE`` prints the JSON verdict;
``python -m d2k_profile.probe child LAYERS BUILD_DIR HANDLE NATIVE`` is one candidate.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .procs import run_group

FULL = ["landlock", "seccomp", "capabilities"]
# Narrowest first: the probe keeps the first that lets CUDA initialise and read an IPC buffer.
LANDLOCK_VARIANTS = ["landlock", "landlock:proctask", "landlock:procself", "landlock:noscope", "landlock:procself+noscope",
                     "landlock:noioctl", "landlock:procself+noioctl", "landlock:opendev", "landlock:procself+noscope+noioctl+opendev"]
SECCOMP_VARIANTS = ["seccomp", "seccomp:vsock", "seccomp:inet"]
PATTERN = 0x5A
CHILD_TIMEOUT_S = 60.0


def child(layers: str, build_dir: str, handle: str, native_path: str) -> int:
    """Confine, then initialise CUDA and read the parent's buffer through its IPC handle."""
    from . import confine

    names = [x for x in layers.split(",") if x]
    if names:
        rep = confine.apply(build_dir, ["/dev/shm"], names)
        failed = {k: v for k, v in rep.enforced.items() if v.startswith("failed")}
        if failed:
            print(json.dumps({"ok": False, "error": f"could not apply: {failed}"}))
            return 0
    try:
        import torch

        from . import native, shared

        mod = native.load(native_path)
        torch.zeros(1, device="cuda")
        addr = mod.ipc_open(bytes.fromhex(handle))
        t = shared.view(addr, None, 4096, torch.uint8, (4096,))
        ok = bool((t == PATTERN).all())
        print(json.dumps({"ok": ok, "error": "" if ok else "the IPC buffer read back wrong"}))
    except Exception as exc:  # noqa: BLE001  (the probe's answer is the exception)
        print(json.dumps({"ok": False, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}))
    return 0


def parent(native_path: str) -> int:
    """Try the candidate layer sets (in child processes) and print the verdict as JSON."""
    import torch

    from . import native, shared

    mod = native.load(native_path)
    addr, handle = mod.ipc_alloc(4096)
    shared.view(addr, None, 4096, torch.uint8, (4096,)).fill_(PATTERN)
    torch.cuda.synchronize()
    build = tempfile.mkdtemp(prefix="d2k-probe-")

    def attempt(layers: list[str]) -> dict:
        cmd = [sys.executable, "-m", "d2k_profile.probe", "child", ",".join(layers), build, handle.hex(), native_path]
        res = run_group(cmd, timeout_s=CHILD_TIMEOUT_S)
        for line in reversed(res.output.splitlines()):
            if line.startswith("{"):
                return json.loads(line)
        return {"ok": False, "error": f"probe exited {res.returncode}: {res.output[-300:]}"}

    failed: dict[str, str] = {}
    first = attempt(FULL)
    if first["ok"]:
        chosen = FULL
    else:
        failed[",".join(FULL)] = first["error"]
        singles = ["capabilities", *SECCOMP_VARIANTS, *LANDLOCK_VARIANTS]
        with ThreadPoolExecutor(len(singles)) as pool:
            results = dict(zip(singles, pool.map(lambda layer: attempt([layer]), singles)))
        failed.update({k: v["error"] for k, v in results.items() if not v["ok"]})
        landlock = next((v for v in LANDLOCK_VARIANTS if results[v]["ok"]), None)
        seccomp = next((v for v in SECCOMP_VARIANTS if results[v]["ok"]), None)
        chosen = [x for x in (landlock, seccomp, "capabilities" if results["capabilities"]["ok"] else None) if x]
        while chosen and not (r := attempt(chosen))["ok"]:  # together they may still fail: drop the last
            failed[",".join(chosen)] = r["error"]
            chosen = chosen[:-1]
    mod.dev_free(addr)
    print(json.dumps({"layers": chosen, "failed": failed}))
    return 0


def cache_key(native_path: str) -> str:
    import hashlib

    try:
        driver = Path("/proc/driver/nvidia/version").read_text().split("\n")[0]
    except OSError:
        driver = "?"
    raw = f"{platform.release()}|{driver}|{native_path}|{sys.version}"
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def layers_for_gpu(native_path: str, gpu: str | None) -> dict:
    """The probe's verdict for this machine (cached): ``{"layers": [...], "failed": {...}}``."""
    cache = Path(native_path).parent / f"sandbox-probe-{cache_key(native_path)}.json"
    try:
        return json.loads(cache.read_text())
    except (OSError, ValueError):
        pass
    env = {**os.environ, **({"CUDA_VISIBLE_DEVICES": gpu} if gpu is not None else {})}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parent.parent), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]])
    res = run_group([sys.executable, "-m", "d2k_profile.probe", "parent", native_path], timeout_s=4 * CHILD_TIMEOUT_S, env=env)
    verdict = None
    for line in reversed(res.output.splitlines()):
        if line.startswith('{"layers"'):
            verdict = json.loads(line)
            break
    if verdict is None:
        return {"layers": [], "failed": {"probe": f"the probe itself failed: {res.output[-500:]}"}}
    tmp = cache.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(verdict))
    os.replace(tmp, cache)
    return verdict


def main(argv: list[str]) -> int:
    if argv and argv[0] == "child":
        return child(*argv[1:5])
    if argv and argv[0] == "parent":
        return parent(argv[1])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

