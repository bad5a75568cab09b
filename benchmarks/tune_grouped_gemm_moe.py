"""Launch-setting sweep for the grouped_gemm_moe expert on one H200.

    python3 benchmarks/tune_grouped_gemm_moe.py [--reps 10] [--seed 0]

For each timed workload (first seed unless --seed): the baseline (reference.py's loop of
torch.matmul per expert, sizes read with .tolist()) and the expert kernel at each candidate
setting (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages, programs per SM): median ms over
--reps calls (CUDA events, L2 flushed before each call), TFLOP/s, GB/s of reference.py's
bytes_moved, the ratio baseline_ms / ms and whether the output is within the task's tolerance.
Each setting compiles once (the kernel's specialisation does not change between these
workloads). The winning in-tolerance setting per workload is printed at the end; the expert's
module constants are LARGE_GROUPS (T / E >= SMALL_GROUP_ROWS) and SMALL_GROUPS.

Shared memory per stage is (BLOCK_M + BLOCK_N) * BLOCK_K * 2 bytes (227 KB per CTA at most):
128x256x64 is 48 KB (3-4 stages), 128x128x64 32 KB, 64x128x64 24 KB (two CTAs per SM fit at
4 stages). Needs a CUDA GPU.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from family1_tune import load_module as _load, time_ms  # noqa: E402  (CUDA events, L2 flushed before each call)

from d2k_spec.catalogue import load_catalogue  # noqa: E402
from d2k_spec.inputs_check import load_reference  # noqa: E402
from d2k_spec.task import load_task  # noqa: E402

# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages, programs per SM)
SETTINGS = [
    (128, 256, 64, 8, 3, 1),
    (128, 256, 64, 8, 4, 1),
    (128, 128, 64, 8, 4, 1),
    (128, 128, 64, 4, 4, 1),
    (128, 128, 128, 8, 3, 1),
    (64, 256, 64, 8, 4, 1),
    (64, 128, 64, 4, 4, 1),
    (64, 128, 64, 4, 4, 2),
    (64, 128, 128, 4, 3, 1),
    (64, 64, 128, 4, 4, 2),
]


def _within(got: torch.Tensor, want: torch.Tensor, tol) -> tuple[bool, float]:
    g, w = got.float(), want.float()
    rel = float((g - w).norm() / w.norm().clamp_min(1e-30))
    ok = bool(((g - w).abs() <= tol.atol + tol.rtol * w.abs()).all()) and rel <= tol.max_rel_l2
    return ok, rel


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()

    task = load_task(REPO / "tasks" / "grouped_gemm_moe", load_catalogue())
    ref = load_reference(task)
    expert = _load(REPO / "tasks" / "grouped_gemm_moe" / "expert" / "submission.py", "ggm_expert")
    tol = task.tolerance["bfloat16"]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"device: {torch.cuda.get_device_name(0)}, {sms} SMs; reps {args.reps}; "
          f"expert constants LARGE_GROUPS={expert.LARGE_GROUPS} SMALL_GROUPS={expert.SMALL_GROUPS}")
    winners = []
    for wl in task.workloads:
        seed = wl.seeds[0] if args.seed is None else args.seed
        x, w, gs = ref.make_inputs(wl, seed, "cuda")
        p = dict(wl.params)
        fl, by = ref.flops(p), ref.bytes_moved(p)
        want = ref.reference(x, w, gs)
        base = time_ms(lambda: ref.reference(x, w, gs), args.reps)
        print(f"\n{wl.name} (seed {seed}): flops {fl / 1e9:.1f} G, bytes {by / 1e9:.3f} GB, "
              f"nonempty experts {int((gs > 0).sum())}/{gs.numel()}, largest group {int(gs.max())}")
        head = f"  {'setting (BM,BN,BK,warps,stages,prog/SM)':<42} {'ms':>8} {'TFLOP/s':>8} {'GB/s':>7} {'x base':>7}  ok"
        print(head)
        print(f"  {'baseline (loop of torch.matmul)':<42} {base:8.4f} {fl / base / 1e9:8.1f} {by / base / 1e6:7.0f} {1.0:7.2f}  -")
        best = None
        for s in SETTINGS:
            label = str(s)
            try:
                call = lambda s=s: expert.launch(x, w, gs, s[:5], s[5] * sms)  # noqa: E731
                got = call()
                torch.cuda.synchronize()
                ok, rel = _within(got, want, tol)
                ms = time_ms(call, args.reps)
                print(f"  {label:<42} {ms:8.4f} {fl / ms / 1e9:8.1f} {by / ms / 1e6:7.0f} {base / ms:7.2f}  "
                      f"{'ok' if ok else f'WRONG rel_l2={rel:.2e}'}")
                if ok and (best is None or ms < best[1]):
                    best = (s, ms)
            except Exception as exc:  # a setting that does not compile or launch: report and go on
                print(f"  {label:<42} error: {type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}")
        # the expert as run() would launch it (its module constants)
        try:
            ms = time_ms(lambda: expert.run(x, w, gs), args.reps)
            ok, rel = _within(expert.run(x, w, gs), want, tol)
            print(f"  {'expert run() (module constants)':<42} {ms:8.4f} {fl / ms / 1e9:8.1f} {by / ms / 1e6:7.0f} {base / ms:7.2f}  "
                  f"{'ok' if ok else f'WRONG rel_l2={rel:.2e}'}")
        except Exception as exc:
            print(f"  expert run() error: {type(exc).__name__}: {exc}")
        winners.append((wl.name, best, base))
        del x, w, gs, want
        torch.cuda.empty_cache()
    print("\nwinners:")
    for name, best, base in winners:
        if best is None:
            print(f"  {name}: no setting within tolerance")
        else:
            print(f"  {name}: {best[0]} {best[1]:.4f} ms ({base / best[1]:.2f}x the baseline)")


if __name__ == "__main__":
    main()
