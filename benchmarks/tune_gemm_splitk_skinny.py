"""Launch-setting sweep of the gemm_splitk_skinny expert on one GPU (H200).

    python3 benchmarks/tune_gemm_splitk_skinny.py [--reps 10] [--only m16_n4096_k14336,...]

For each timed workload (first seed) prints cuBLAS (torch.matmul, the reference and expert
baseline), the expert's run() with its adopted setting, and the expert kernel at each candidate
launch setting (BLOCK_N, BLOCK_K, SPLIT_K, num_stages, num_warps), including the same kernel
with SPLIT_K = 1, so the gain of splitting K is measured on the kernel itself. Columns: median
ms (CUDA events, L2 flushed before each call: benchmarks/family1_tune.time_ms), TFLOP/s, GB/s of
the minimum traffic (reference.bytes_moved: B read once dominates), its fraction of 4.3 TB/s, the
ratio to cuBLAS (> 1 is faster), and whether the output is within the task's tolerance. A
setting that fails to compile or run prints a row with the error. The winner per workload is the
fastest correct setting. Numbers go to standard output only.

Grid (per workload: 128 x BLOCK_N tiles along N; H200: 132 SMs, 227 KB smem per CTA): a [128, 128]
bf16 B stage is 32 KB, so 4 stages + A tiles ~ 140 KB (one CTA per SM), [64, 128] x 4 ~ 72 KB
(two or three per SM), [128, 64] x 6 ~ 100 KB (two per SM). SPLIT_K values put tiles x SPLIT_K at
~1, ~2 and ~4 programs per SM (wave quantisation: 128 or 256 programs fill 132 SMs in one or two
waves, 512 with a small tail).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from d2k_spec.inputs_check import load_reference  # noqa: E402
from d2k_spec.task import load_tasks  # noqa: E402
from family1_tune import load_module as _load, time_ms  # noqa: E402  (CUDA events, L2 flushed before each call)

PEAK_GBS = 4300.0
TASK = "gemm_splitk_skinny"

# (BLOCK_N, BLOCK_K, SPLIT_K, num_stages, num_warps) per workload
GRID = {
    "m16_n4096_k14336": [  # 32 tiles of 128, 64 of 64
        (128, 128, 1, 4, 4), (64, 128, 1, 4, 4),
        (128, 128, 2, 4, 4), (128, 128, 4, 4, 4), (128, 256, 4, 3, 4), (128, 64, 8, 6, 4),
        (64, 128, 2, 4, 4), (64, 128, 4, 4, 4), (64, 128, 4, 6, 4), (64, 128, 8, 4, 4),
        (64, 64, 4, 8, 4), (64, 256, 2, 3, 4),
    ],
    "m8_n8192_k28672": [  # 64 tiles of 128, 128 of 64
        (128, 128, 1, 4, 4), (64, 128, 1, 4, 4),
        (128, 128, 2, 4, 4), (128, 256, 2, 3, 4), (128, 64, 4, 6, 4), (128, 128, 4, 4, 4),
        (64, 128, 2, 4, 4), (64, 128, 2, 6, 4), (64, 128, 4, 4, 4), (64, 256, 2, 3, 4),
        (64, 64, 2, 8, 4), (64, 128, 1, 6, 4),
    ],
    "m32_n2048_k16384": [  # 16 tiles of 128 (BLOCK_M 32), 32 of 64
        (128, 128, 1, 4, 4), (64, 128, 1, 4, 4),
        (128, 128, 4, 4, 4), (128, 128, 8, 4, 4), (128, 64, 8, 6, 4), (128, 256, 8, 2, 4),
        (64, 128, 4, 4, 4), (64, 128, 4, 6, 4), (64, 128, 8, 4, 4), (64, 128, 2, 4, 4),
        (64, 64, 4, 8, 4), (64, 256, 4, 3, 4),
    ],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--only", default="", help="comma-separated workload names")
    args = ap.parse_args()
    start = time.time()
    task = load_tasks(REPO / "tasks")[TASK]
    ref = load_reference(task)
    expert = _load(REPO / "tasks" / TASK / "expert" / "submission.py", "gsk_expert")
    tol = task.tolerance["bfloat16"]
    only = {w for w in args.only.split(",") if w}
    winners = {}
    print(f"{'workload':18s} {'setting (BN,BK,SPLIT,stages,warps)':36s} {'ms':>9s} {'TFLOP/s':>8s} "
          f"{'GB/s':>7s} {'of4.3':>6s} {'vs_cuBLAS':>9s} ok")
    for w in task.workloads:
        if w.smoke or (only and w.name not in only):
            continue
        a, b = ref.make_inputs(w, w.seeds[0], "cuda")
        want = ref.reference(a, b)
        exact = (a.double() @ b.double().t())
        flop, nbytes = ref.flops(w.params), ref.bytes_moved(w.params)

        def check(got):
            err = (got.double() - exact).abs()
            ok = bool((err <= tol.atol + tol.rtol * exact.abs()).all())
            rel = float((got.double() - exact).norm() / exact.norm())
            return ok and rel <= tol.max_rel_l2

        base_ms = time_ms(lambda: ref.reference(a, b), args.reps)

        def row(label, ms, ok):
            print(f"{w.name:18s} {label:36s} {ms:9.4f} {flop / ms / 1e9:8.1f} {nbytes / ms / 1e6:7.0f} "
                  f"{nbytes / ms / 1e6 / PEAK_GBS:6.3f} {base_ms / ms:9.3f} {ok}", flush=True)

        row("cuBLAS (torch.matmul)", base_ms, check(want))
        try:
            got = expert.run(a, b)
            row("expert run() " + str(expert.TUNED.get((w.params["M"], w.params["N"], w.params["K"]))),
                time_ms(lambda: expert.run(a, b), args.reps), check(got))
        except Exception as exc:  # noqa: BLE001 - a failing variant is a row, not the end
            print(f"{w.name:18s} expert run() FAILED {type(exc).__name__}: {str(exc)[:150]}", flush=True)
        best, single = None, {}
        for setting in GRID[w.name]:
            try:
                fn = lambda s=setting: expert.launch(a, b, *s)  # noqa: E731
                ok = check(fn())
                ms = time_ms(fn, args.reps)
                row(str(setting), ms, ok)
                if ok and (best is None or ms < best[1]):
                    best = (setting, ms)
                if ok and setting[2] == 1:
                    single[(setting[0], setting[1])] = ms
            except Exception as exc:  # noqa: BLE001
                print(f"{w.name:18s} {str(setting):36s} FAILED {type(exc).__name__}: {str(exc)[:150]}", flush=True)
        winners[w.name] = (best, base_ms, single)
        del a, b, want, exact
        torch.cuda.empty_cache()
    print("\nwinners (fastest correct setting):")
    for name, (best, base_ms, single) in winners.items():
        if best is None:
            print(f"  {name}: no correct setting")
            continue
        line = f"  {name}: {best[0]}  {best[1]:.4f} ms  {base_ms / best[1]:.3f}x cuBLAS ({base_ms:.4f} ms)"
        same = single.get((best[0][0], best[0][1]))
        if same is not None:
            line += f"; same tile with SPLIT_K=1 {same:.4f} ms ({same / best[1]:.2f}x slower)"
        if single:
            line += f"; best SPLIT_K=1 setting {min(single.values()):.4f} ms"
        print(line)
    print(f"total {time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
