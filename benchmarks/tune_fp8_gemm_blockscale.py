"""H200 launch-setting sweep for the fp8_gemm_blockscale expert.

    python3 benchmarks/tune_fp8_gemm_blockscale.py [--reps 10]

Per timed workload (seed 0): the reference (cuBLAS block-scaled fp8 via F.scaled_mm), then each
candidate (BLOCK_M, BLOCK_N, GROUP_M, SPLIT_K, num_stages, num_warps) of the expert: median ms,
TFLOP/s, ratio to the reference, and whether the output is within the task tolerance. Smem per
stage = (BM + BN) * 128 bytes (fp8, BLOCK_K = 128): 128x128 is 32 KB, so 4-5 stages fit in 227 KB.
BLOCK_N must divide 128 (one b_scale per tile per K block). Needs a CUDA GPU.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from family1_tune import load_module as _load, time_ms  # noqa: E402  (CUDA events, L2 flushed before each call)
from d2k_spec.task import load_task  # noqa: E402

TASK = REPO / "tasks" / "fp8_gemm_blockscale"
LARGE_GRID = [
    (128, 128, 8, 1, 3, 8), (128, 128, 8, 1, 4, 8), (128, 128, 8, 1, 5, 8), (128, 128, 8, 1, 4, 4),
    (64, 128, 8, 1, 5, 4), (128, 64, 8, 1, 5, 4), (128, 128, 16, 1, 4, 8), (256, 128, 8, 1, 3, 8),
]
SMALL_GRID = [
    (128, 128, 8, 1, 4, 8), (128, 128, 8, 2, 4, 8), (128, 128, 8, 3, 4, 8), (64, 128, 8, 1, 5, 4),
    (64, 128, 8, 2, 5, 4), (64, 64, 8, 2, 5, 4), (128, 64, 8, 2, 5, 4), (64, 128, 8, 4, 5, 4),
]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    ref = _load(TASK / "reference.py", "fp8_ref")
    expert = _load(TASK / "expert" / "submission.py", "fp8_expert")
    task = load_task(TASK)
    tol = task.tolerance["bfloat16"]
    best = {}
    print(f"{'workload':22s} {'setting':34s} {'ms':>9s} {'TFLOP/s':>8s} {'x ref':>6s} ok", flush=True)
    for w in task.workloads:
        a, sa, b, sb = ref.make_inputs(w, 0, "cuda")
        flop = ref.flops(w.params)
        want = ref.reference(a, sa, b, sb)
        ref_ms = time_ms(lambda: ref.reference(a, sa, b, sb), args.reps)
        print(f"{w.name:22s} {'reference (cuBLAS scaled_mm)':34s} {ref_ms:9.4f} {flop / ref_ms / 1e9:8.1f} {1.0:6.2f}", flush=True)
        grid = SMALL_GRID if w.params["M"] < 512 else LARGE_GRID
        for cfg in grid:
            try:
                got = expert.run(a, sa, b, sb, config=cfg)
                d = (got.float() - want.float())
                ok = bool((d.abs() <= tol.atol + tol.rtol * want.float().abs()).all()) and float(d.norm() / want.float().norm()) <= tol.max_rel_l2
                ms = time_ms(lambda: expert.run(a, sa, b, sb, config=cfg), args.reps)
                print(f"{w.name:22s} {str(cfg):34s} {ms:9.4f} {flop / ms / 1e9:8.1f} {ref_ms / ms:6.2f} {ok}", flush=True)
                if ok and (w.name not in best or ms < best[w.name][1]):
                    best[w.name] = (cfg, ms, ref_ms / ms)
            except Exception as exc:  # noqa: BLE001 - a failing setting is a row, not the end
                print(f"{w.name:22s} {str(cfg):34s} failed: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
    print("\nwinners (BLOCK_M, BLOCK_N, GROUP_M, SPLIT_K, num_stages, num_warps):")
    for name, (cfg, ms, ratio) in best.items():
        print(f"  {name:22s} {cfg}  {ms:.4f} ms  {ratio:.2f}x reference")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
