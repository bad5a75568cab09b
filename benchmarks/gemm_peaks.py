"""Dense tensor-core peaks of this GPU, and which fp8 block-scale GEMM the installed torch offers.

    python3 benchmarks/gemm_peaks.py [--size 8192] [--reps 20]

Prints, with CUDA events (median of ``--reps`` calls after warm-up, L2 flushed before each):

* bf16 ``torch.matmul`` TFLOP/s on a square ``--size`` problem: the compute-bound tasks' peak;
* fp8 e4m3 ``torch._scaled_mm`` TFLOP/s with tensorwise scales on the same problem (the fp8 peak);
* whether ``torch.nn.functional.scaled_mm`` accepts DeepSeek-V3 block scales (A 1x128, B 128x128)
  on this GPU, for each scale layout tried, with the error against an fp32 product of the
  dequantized operands and the TFLOP/s where it runs; the fp8_gemm_blockscale task's baseline
  depends on the answer.

Numbers go to standard output; nothing is written elsewhere. Needs a CUDA GPU.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from family1_tune import time_ms  # noqa: E402  (CUDA events, L2 flushed before each call)


def tflops(n: int, ms: float) -> float:
    return 2 * n ** 3 / ms / 1e9


def block_scale_layouts(a8, b8, sa, sb):
    """Candidate (name, scale_a, scale_b) layouts: as computed, and with each scale's outer
    dimension made the contiguous one (what cuBLASLt's block-scale mode documents)."""
    yield "row-major scales", sa.contiguous(), sb.contiguous()
    yield "scale_a K-outer (transposed storage)", sa.t().contiguous().t(), sb.contiguous()
    yield "both scales K-outer", sa.t().contiguous().t(), sb.t().contiguous().t()
    yield "scale_a K-outer, scale_b as [K/128, N/128]", sa.t().contiguous().t(), sb.t()


def probe_block_scales(n: int, reps: int) -> None:
    F = torch.nn.functional
    if not hasattr(F, "scaled_mm"):
        print("block scales: torch.nn.functional.scaled_mm is not in this torch")
        return
    S = F.ScalingType
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(n, n, device="cuda", generator=g)
    b = torch.randn(n, n, device="cuda", generator=g)  # [N, K]: the product is a @ b.T
    fmax = torch.finfo(torch.float8_e4m3fn).max
    # A: one scale per row and 128 columns of K; B: one per 128 x 128 block.
    sa = a.view(n, n // 128, 128).abs().amax(-1).clamp_min(1e-12) / fmax
    sb = b.view(n // 128, 128, n // 128, 128).abs().amax((1, 3)).clamp_min(1e-12) / fmax
    a8 = (a.view(n, n // 128, 128) / sa[..., None]).view(n, n).to(torch.float8_e4m3fn)
    b8 = (b.view(n // 128, 128, n // 128, 128) / sb[:, None, :, None]).view(n, n).to(torch.float8_e4m3fn)
    deq_a = (a8.float().view(n, n // 128, 128) * sa[..., None]).view(n, n)
    deq_b = (b8.float().view(n // 128, 128, n // 128, 128) * sb[:, None, :, None]).view(n, n)
    want = deq_a @ deq_b.T
    for name, s_a, s_b in block_scale_layouts(a8, b8, sa, sb):
        def call(s_a=s_a, s_b=s_b):
            return F.scaled_mm(a8, b8.t(), s_a, S.BlockWise1x128, s_b, S.BlockWise128x128, output_dtype=torch.bfloat16)
        try:
            got = call().float()
            err = ((got - want).norm() / want.norm()).item()
            ms = time_ms(call, reps)
            print(f"block scales ({name}): ok, rel L2 error {err:.2e} against the fp32 dequantized product, "
                  f"{ms:.3f} ms, {tflops(n, ms):.0f} TFLOP/s")
        except Exception as exc:  # noqa: BLE001 - each refusal is a finding
            print(f"block scales ({name}): refused: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("gemm_peaks: needs a CUDA GPU", file=sys.stderr)
        return 2
    n = args.size
    print("device:", torch.cuda.get_device_name(), "torch", torch.__version__, "cuda", torch.version.cuda)
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    ms = time_ms(lambda: a @ b, args.reps)
    print(f"bf16 matmul {n}^3: {ms:.3f} ms, {tflops(n, ms):.0f} TFLOP/s")
    a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda")
    for fast in (False, True):
        def fp8(fast=fast):
            return torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=fast)
        try:
            ms = time_ms(fp8, args.reps)
            print(f"fp8 e4m3 _scaled_mm tensorwise (use_fast_accum={fast}) {n}^3: {ms:.3f} ms, {tflops(n, ms):.0f} TFLOP/s")
        except Exception as exc:  # noqa: BLE001
            print(f"fp8 tensorwise (use_fast_accum={fast}): refused: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
    probe_block_scales(n, args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
