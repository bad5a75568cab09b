"""Where the long-row softmax's time goes: Nsight Compute sections for the shared-memory kernel and Triton.

Why: benchmarks/softmax_smem_rows.py times settings but cannot say what holds one below the copy
bandwidth: DRAM, issue slots, barriers, or too few warps. This script reads that script's JSON
lines, picks for each chosen workload the fastest setting of the expert's shared-memory kernel, and
profiles one launch of it (inside an NVTX range, after two warm-up calls), and of the expert's
Triton kernel, under ``ncu --clock-control none`` with the SpeedOfLight, Occupancy, LaunchStats and
WarpStateStats sections (one process per target, so that every target's ncu replays its own
launch). The same sections for the ring candidates of commit a7de729 are in
examples/h200/dec05/ring_ncu.txt.

GPU only (PYTHONPATH=.): ``python benchmarks/softmax_smem_rows_ncu.py SWEEP.jsonl OUT.txt
[--workload M:N ...]`` (default: the two long-row workloads). Each target's ncu report is appended
to OUT.txt under a header line; a target whose ncu fails is recorded with its error. ``--target``
is the inner mode ncu runs.
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

DEFAULT = ["1024:32768", "128:262144"]
SECTIONS = ["SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats"]
KERNELS = {"triton": "regex:softmax_(rows|chunk_stats|chunk_normalize)_kernel", "smem": "regex:softmax_smem_rows_kernel"}


def _targets(sweep: Path, workloads: list[str]) -> list[tuple[str, str, dict | None]]:
    """(workload, kind, setting): the Triton path and the fastest shared-memory setting."""
    rows = [json.loads(line) for line in sweep.read_text().splitlines() if line.strip()]
    out: list[tuple[str, str, dict | None]] = []
    for w in workloads:
        m, n = (int(v) for v in w.split(":"))
        out.append((w, "triton", None))
        smem = [r for r in rows if r.get("M") == m and r.get("N") == n and r.get("kind") == "smem" and "ms" in r]
        if smem:
            best = min(smem, key=lambda r: r["ms"])
            out.append((w, "smem", {"threads": best["threads"], "split": best["split"]}))
    return out


def _target(workload: str, kind: str, setting_json: str) -> None:
    """Run one implementation three times; ncu profiles the launch inside the NVTX range "profile"
    (the Triton path's first call autotunes, launching the kernel many times)."""
    import softmax_smem_rows as bench

    m, n = (int(v) for v in workload.split(":"))
    mod = bench._expert()
    x = bench._inputs(m, n, torch.float32 if n == 262144 else torch.bfloat16, 0)
    setting = json.loads(setting_json)
    if kind == "triton":
        fn = bench._triton_call(mod, x)
    else:
        fn = lambda: mod.smem_rows_softmax(x, setting["split"], setting["threads"])  # noqa: E731
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
        for workload, kind, setting in _targets(args.sweep, args.workload or DEFAULT):
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
