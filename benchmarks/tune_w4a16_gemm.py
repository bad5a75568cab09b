"""H200 tuning of the w4a16_gemm expert's launch constants.

    python3 benchmarks/tune_w4a16_gemm.py [--reps N]

For each timed workload: the reference (dequantise + torch.matmul) time, then for each candidate
setting of the expert's module constants the median ms, GB/s (minimum traffic, the workloads are
weight-stream bound at M <= 16) and TFLOP/s, the speedup over the reference and whether the
output is within the task tolerance. A failing setting prints its error and the sweep goes on.
The winner per workload is printed at the end (set it in tasks/w4a16_gemm/expert/submission.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from family1_tune import load_module as _module, time_ms  # noqa: E402  (CUDA events, L2 flushed before each call)

from d2k_spec.task import load_task  # noqa: E402


TASK = ROOT / "tasks" / "w4a16_gemm"
R = _module(TASK / "reference.py", "w4_ref")
E = _module(TASK / "expert" / "submission.py", "w4_expert")

# (GEMV_BLOCK_N, GEMV_BLOCK_K, GEMV_SPLIT_K, GEMV_WARPS, GEMV_STAGES): 12288 / BN programs x split
GEMV_GRID = [
    (32, 128, 1, 4, 3), (32, 128, 2, 4, 3), (32, 128, 4, 4, 3), (64, 128, 2, 4, 3),
    (64, 128, 4, 8, 3), (16, 128, 2, 2, 4), (32, 64, 4, 4, 4), (128, 64, 4, 8, 3),
]
# (BLOCK_M, BLOCK_N, BLOCK_K, SPLIT_K, num_warps, num_stages)
SMALL_GRID = [
    (16, 64, 128, 1, 4, 3), (16, 64, 128, 2, 8, 3), (16, 64, 128, 4, 8, 3), (16, 128, 64, 4, 8, 4),
    (16, 32, 128, 4, 4, 4), (16, 64, 64, 8, 4, 4), (16, 128, 128, 2, 8, 3), (16, 256, 64, 2, 8, 3),
]
LARGE_GRID = [
    (64, 128, 64, 1, 8, 4), (128, 128, 64, 1, 8, 3), (128, 64, 64, 1, 4, 4), (64, 256, 64, 1, 8, 3),
    (128, 256, 32, 1, 8, 3), (64, 128, 128, 1, 8, 3), (128, 128, 128, 1, 8, 2), (64, 64, 128, 1, 4, 4),
]


def _apply(name: str, cfg) -> None:
    if name.startswith("m1_"):
        E.GEMV_BLOCK_N, E.GEMV_BLOCK_K, E.GEMV_SPLIT_K, E.GEMV_WARPS, E.GEMV_STAGES = cfg
    elif name.startswith("m16_"):
        E.MMA_SMALL = cfg
    else:
        E.MMA_LARGE = cfg


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    task = load_task(TASK)
    tol = task.tolerance["float16"]
    winners = {}
    for wl in task.workloads:
        if wl.smoke:
            continue
        p = wl.params
        inputs = R.make_inputs(wl, wl.seeds[0], "cuda")
        ref = R.reference(*inputs)
        gb, tf = R.bytes_moved(p) / 1e9, R.flops(p) / 1e12
        base = time_ms(lambda: R.reference(*inputs), args.reps)
        print(f"\n{wl.name}: reference {base:.4f} ms ({gb / base * 1e3:.0f} GB/s, {tf / base * 1e3:.1f} TFLOP/s)")
        grid = GEMV_GRID if wl.name.startswith("m1_") else SMALL_GRID if wl.name.startswith("m16_") else LARGE_GRID
        best = None
        for cfg in grid:
            try:
                _apply(wl.name, cfg)
                y = E.run(*inputs)
                torch.cuda.synchronize()
                d = (y.double() - ref.double())
                ok = bool((d.abs() <= tol.atol + tol.rtol * ref.double().abs()).all()) and (d.norm() / ref.double().norm()).item() <= tol.max_rel_l2
                ms = time_ms(lambda: E.run(*inputs), args.reps)
                print(f"  {str(cfg):28s} {ms:.4f} ms  {gb / ms * 1e3:7.0f} GB/s  {tf / ms * 1e3:6.1f} TFLOP/s  x{base / ms:5.2f}  {'ok' if ok else 'WRONG'}")
                if ok and (best is None or ms < best[0]):
                    best = (ms, cfg)
            except Exception as exc:  # a failing setting is a row, not the end of the sweep
                print(f"  {str(cfg):28s} error: {type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}")
        winners[wl.name] = best
    print("\nwinners:")
    for name, best in winners.items():
        print(f"  {name}: {best[1] if best else None} ({best[0]:.4f} ms)" if best else f"  {name}: none passed")


if __name__ == "__main__":
    main()
