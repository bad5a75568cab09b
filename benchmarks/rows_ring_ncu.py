"""Where the row experts' time goes: Nsight Compute sections for the fastest ring plans and Triton.

Why: the ring sweep (benchmarks/rows_ring.py) times plans but cannot say what holds a plan below
the copy bandwidth: DRAM, issue slots, the special-function unit, barriers, or too few warps. This
script reads a sweep's JSON lines, picks for each chosen workload the fastest setting of the
expert's shared-memory kernel and the fastest ring plan in each mode (row in registers, vpt > 0;
row in shared memory, vpt 0), and profiles one launch of each (inside an NVTX range, after two
warm-up calls), and of the expert's Triton kernel, under ``ncu --clock-control none`` with the
SpeedOfLight, Occupancy, LaunchStats and WarpStateStats sections (one process per target, so that
every target's ncu replays its own launch).

GPU only (PYTHONPATH=.): ``python benchmarks/rows_ring_ncu.py SWEEP.jsonl OUT.txt [--workload
op:M:N ...]`` (default: the two long-row softmax workloads). Each target's ncu report is appended to OUT.txt under a header line; a target
whose ncu fails is recorded with its error. ``--target`` is the inner mode ncu runs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

DEFAULT = ["softmax:1024:32768", "softmax:128:262144"]
SECTIONS = ["SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats"]
KERNELS = {"ring": "regex:(softmax|layernorm)_ring_kernel", "triton": "regex:softmax_rows_kernel|_layernorm_fwd",
           "smem": "regex:softmax_smem_rows_kernel"}


def _best_plans(sweep: Path, workloads: list[str]) -> list[tuple[str, str, dict | None]]:
    """(workload, kind, setting) targets: the Triton path, the fastest shared-memory setting, the
    fastest ring plan with the row in registers and in shared memory."""
    rows = [json.loads(line) for line in sweep.read_text().splitlines() if line.strip()]
    out: list[tuple[str, str, dict | None]] = []
    for w in workloads:
        op, m, n = w.split(":")
        mine = [r for r in rows if r.get("op") == op and r.get("M") == int(m) and r.get("N") == int(n) and "ms" in r]
        out.append((w, "triton", None))
        smem = [r for r in mine if r["kind"] == "smem"]
        if smem:
            best = min(smem, key=lambda r: r["ms"])
            out.append((w, "smem", {"threads": best["threads"], "split": best["split"]}))
        for registers in (True, False):
            ring = [r for r in mine if r["kind"] == "ring" and (r["plan"]["vpt"] > 0) == registers]
            if ring:
                out.append((w, "ring", min(ring, key=lambda r: r["ms"])["plan"]))
    return out


def _target(workload: str, kind: str, setting_json: str) -> None:
    """Run one implementation three times; ncu profiles the launch inside the NVTX range "profile"
    (the Triton path's first call autotunes, launching the kernel many times)."""
    import rows_ring as rr

    op, m, n = workload.split(":")
    dtype = torch.float32 if int(n) == 262144 else torch.bfloat16
    mod = rr._experts()[op]
    args = rr._inputs(op, int(m), int(n), dtype, 0)
    setting = json.loads(setting_json)
    if kind == "triton":
        fn = rr._triton_call(mod, op, args)
    elif kind == "smem":
        fn = lambda: mod.smem_rows_softmax(args[0], setting["split"], setting["threads"])  # noqa: E731
    else:
        fn = rr._ring_call(op, args, rr.RingPlan(**setting))
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    with torch.cuda.nvtx.range("profile"):
        fn()
    torch.cuda.synchronize()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sweep", type=Path, nargs="?")
    ap.add_argument("out", type=Path, nargs="?")
    ap.add_argument("--workload", action="append")
    ap.add_argument("--target", nargs=3, metavar=("WORKLOAD", "KIND", "SETTING_JSON"))
    args = ap.parse_args(argv)
    if args.target:
        _target(*args.target)
        return 0
    ncu = shutil.which("ncu")
    if ncu is None:
        print("ncu not found")
        return 1
    with args.out.open("w") as sink:
        for workload, kind, setting in _best_plans(args.sweep, args.workload or DEFAULT):
            kernel = KERNELS[kind]
            cmd = [ncu, "--clock-control", "none", "--nvtx", "--nvtx-include", "profile/", "-k", kernel, "--launch-count", "1"]
            for s in SECTIONS:
                cmd += ["--section", s]
            cmd += [sys.executable, __file__, "--target", workload, kind, json.dumps(setting)]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
            sink.write(f"==== {workload} {kind} {json.dumps(setting)} (rc {proc.returncode})\n")
            sink.write(proc.stdout[-12000:])
            if proc.returncode:
                sink.write(proc.stderr[-3000:])
            sink.flush()
            print(f"{workload} {kind} {setting}: rc {proc.returncode}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
