"""H200 tuning run for the conv2d_nhwc expert (Triton implicit GEMM): cuDNN vs launch settings.

    python3 benchmarks/tune_conv2d_nhwc.py [--reps 10]

For each timed workload: the reference (F.conv2d on channels_last views = cuDNN) and every
candidate setting (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, SPLIT_K, num_warps, num_stages) of
tasks/conv2d_nhwc/expert/submission.py:launch, with median ms (L2 flushed before each call),
TFLOP/s, the ratio to cuDNN (cuDNN ms / ours: > 1 is faster) and whether the output is within the
task tolerance. A setting that fails to compile or run prints its error as a row. At the end the
winning setting per workload, as the tuple to put into CONFIGS[C] of the expert.

Shared memory per stage is (BLOCK_M + BLOCK_N) * BLOCK_K * 2 bytes; every candidate stays under
the 227 KB a CTA may use. Tile counts (132 SMs): c64 M=100352 -> 784 tiles of 128x64; c256
M=12544 -> 98 x 2 tiles of 128x128 (1.5 waves); c512 M=1568 -> 13 x 4 = 52 tiles of 128x128, so
SPLIT_K 2-4 (104-208 programs) or 64-wide tiles (100-200) are tried.
"""

from __future__ import annotations

import argparse
import sys
import time
import tomllib
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
from family1_tune import load_module as _load, time_ms  # noqa: E402  (CUDA events, L2 flushed before each call)

TASK = ROOT / "tasks" / "conv2d_nhwc"

#        (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, SPLIT_K, num_warps, num_stages)
GRID = {
    "n32_h56_w56_c64_k64": [
        (128, 64, 64, 8, 1, 4, 4), (128, 64, 64, 8, 1, 4, 3), (128, 64, 64, 8, 1, 8, 4),
        (64, 64, 64, 8, 1, 4, 4), (128, 64, 32, 8, 1, 4, 4), (256, 64, 64, 8, 1, 8, 3),
        (64, 64, 32, 8, 1, 4, 5),
    ],
    "n16_h28_w28_c256_k256": [
        (128, 128, 64, 8, 1, 8, 4), (128, 128, 64, 8, 1, 8, 3), (128, 128, 64, 8, 1, 4, 4),
        (128, 256, 64, 8, 1, 8, 3), (64, 128, 64, 8, 1, 4, 4), (128, 64, 64, 8, 1, 4, 4),
        (128, 128, 32, 8, 1, 4, 5), (64, 256, 64, 8, 1, 8, 3),
    ],
    "n8_h14_w14_c512_k512": [
        (128, 128, 64, 8, 3, 8, 4), (128, 128, 64, 8, 2, 8, 4), (128, 128, 64, 8, 4, 8, 3),
        (128, 128, 64, 8, 1, 8, 4), (64, 128, 64, 8, 1, 4, 4), (64, 128, 64, 8, 2, 4, 4),
        (64, 64, 64, 8, 1, 4, 4), (128, 64, 64, 8, 2, 4, 4), (64, 64, 64, 8, 2, 4, 4),
    ],
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    t0 = time.time()
    ref = _load(TASK / "reference.py", "conv_ref")
    expert = _load(TASK / "expert" / "submission.py", "conv_expert")
    spec = tomllib.loads((TASK / "task.toml").read_text())
    tol = spec["tolerance"]["bfloat16"]

    winners = {}
    for wl in spec["workload"]:
        if wl.get("smoke") or wl["name"] not in GRID:
            continue
        p = wl["params"]
        g = torch.Generator(device="cuda").manual_seed(0)
        s = wl["distribution"]["std"]
        x = (torch.randn((p["N"], p["H"], p["W"], p["C"]), generator=g, device="cuda") * s).to(torch.bfloat16)
        w = (torch.randn((p["K"], 3, 3, p["C"]), generator=g, device="cuda") * s).to(torch.bfloat16)
        want = ref.reference(x, w)
        fl = ref.flops(p)
        base = time_ms(lambda: ref.reference(x, w), args.reps)
        print(f"\n{wl['name']}: cuDNN {base:.4f} ms  {fl / base / 1e9:.1f} TFLOP/s   (default CONFIGS[{p['C']}] = {expert.CONFIGS.get(p['C'])})")
        print(f"  {'setting (BM, BN, BK, G, SPLIT, warps, stages)':<46} {'ms':>8} {'TFLOP/s':>8} {'x cuDNN':>8}  ok")
        best = None
        for cfg in GRID[wl["name"]]:
            try:
                got = expert.launch(x, w, cfg)
                torch.cuda.synchronize()
                d = (got.float() - want.float())
                ok = bool((d.abs() <= tol["atol"] + tol["rtol"] * want.float().abs()).all()) and \
                    (d.norm() / want.float().norm()).item() <= tol["max_rel_l2"]
                ms = time_ms(lambda: expert.launch(x, w, cfg), args.reps)
                print(f"  {str(cfg):<46} {ms:8.4f} {fl / ms / 1e9:8.1f} {base / ms:8.3f}  {'yes' if ok else 'NO'}")
                if ok and (best is None or ms < best[1]):
                    best = (cfg, ms)
            except Exception as exc:  # a failing setting is a row, not the end of the run
                print(f"  {str(cfg):<46} error: {type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}")
        winners[wl["name"]] = (p["C"], best, base)
    print("\nwinners (put into CONFIGS[C] of tasks/conv2d_nhwc/expert/submission.py):")
    for name, (c, best, base) in winners.items():
        if best is None:
            print(f"  {name}: no setting passed")
        else:
            print(f"  {name}: CONFIGS[{c}] = {best[0]}  {best[1]:.4f} ms, {base / best[1]:.3f}x cuDNN")
    print(f"total {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
