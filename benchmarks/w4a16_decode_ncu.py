"""Where the w4a16 decode kernel's time goes: Nsight Compute sections for the expert's m1 and m16 calls.

Why: benchmarks/w4a16_decode.py found the tensor-core decode kernel 2-3x faster than the Triton
kernels, yet it reads the packed weights at well under the copy bandwidth. Whether DRAM, issue
slots, latency (too few bytes in flight) or the shared-memory sum holds it back decides what to
change next. This script profiles one launch of the expert's ``run`` per decode workload (inside an
NVTX range, after two warm-up calls) under ``ncu --clock-control none`` with the SpeedOfLight,
MemoryWorkloadAnalysis, Occupancy, LaunchStats and WarpStateStats sections, one process per
workload, and appends each report to OUT.txt under a header line (a failed ncu is recorded with its
error).

GPU only (PYTHONPATH=.): ``python benchmarks/w4a16_decode_ncu.py OUT.txt``; ``--target NAME`` is the
inner mode ncu runs.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from d2k_profile.loader import load_module  # noqa: E402
from d2k_spec.task import load_task  # noqa: E402

TASK = ROOT / "tasks" / "w4a16_gemm"
SECTIONS = ["SpeedOfLight", "MemoryWorkloadAnalysis", "Occupancy", "LaunchStats", "WarpStateStats"]


def _workloads():
    """The timed workloads the expert sends to its decode kernel."""
    limit = load_module(TASK / "expert", "w4a16_expert").DECODE_MAX_M
    return [w for w in load_task(TASK).workloads if int(w.params["M"]) <= limit]


def _target(name: str) -> None:
    ref = load_module(TASK / "reference.py", "w4a16_reference")
    mod = load_module(TASK / "expert", "w4a16_expert")
    wl = next(w for w in _workloads() if w.name == name)
    inputs = ref.make_inputs(wl, wl.seeds[0], "cuda")
    for _ in range(2):
        mod.run(*inputs)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("profile")
    mod.run(*inputs)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, nargs="?")
    ap.add_argument("--target", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.target:
        _target(args.target)
        return 0
    ncu = shutil.which("ncu")
    if ncu is None or args.out is None:
        print("needs ncu on PATH and an OUT.txt path", file=sys.stderr)
        return 2
    with args.out.open("a") as sink:
        for wl in _workloads():
            cmd = [ncu, "--clock-control", "none", "--nvtx", "--nvtx-include", "profile/", "--kernel-name",
                   "regex:w4a16_decode_mma_kernel", "--launch-count", "1"] + [a for s in SECTIONS for a in ("--section", s)]
            cmd += [sys.executable, __file__, "--target", wl.name]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            sink.write(f"===== {wl.name} (ncu exit {done.returncode})\n{done.stdout}\n{done.stderr[-2000:]}\n")
            sink.flush()
            print(f"{wl.name}: ncu exit {done.returncode}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
