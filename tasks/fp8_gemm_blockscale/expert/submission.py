"""Expert ``fp8_gemm_blockscale``: Triton fp8 wgmma GEMM with per-K-block scale promotion.

C[M, N] = sum over 128-wide K blocks kb of (A_kb @ B_kb^T) * a_scale[kb, m] * b_scale[n // 128, kb].

  * BLOCK_K = 128: each K step is one scale block. tl.dot on the raw e4m3 tiles (TMA tensor
    descriptors, K-major A [M, K] and B [N, K]) lowers to wgmma .e4m3 on sm_90 and gives the
    block's partial in a fresh fp32 tile; it is scaled by the rows' a_scale times the tile's one
    b_scale (BLOCK_N divides 128) and added to the fp32 accumulator (one FMA per element);
  * explicit num_stages keeps several K blocks of tiles and scales in flight;
  * GROUP_M grouped tile order for L2 reuse;
  * the launch settings depend on M: below 512 rows (the decode shape, M=128) the tiles are
    64 x 128, so its one row of 56 128-wide tiles becomes 112 programs for the 132 SMs, each with
    the whole K loop;
  * SPLIT_K > 1 (``config=``, and the CPU interpreter's setting, which keeps the path tested) gives
    each program a slice of whole scale blocks; the fp32 partials go to a workspace that a second
    small kernel sums and rounds to bf16. No GPU setting splits: on the decode shape split 1 was
    1.16x faster than split 2 on an H200 and 1.19x on an H100 (docs/h200-results.md), the
    workspace round trip and the second pass costing more than the idle SMs.

Launch settings are module constants per workload shape class (chosen by
benchmarks/tune_fp8_gemm_blockscale.py and benchmarks/fp8_launch_variants.py through d2k-profile).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

SCALE_BLOCK = 128
# (BLOCK_M, BLOCK_N, GROUP_M, SPLIT_K, num_stages, num_warps)
LARGE = (128, 128, 8, 1, 4, 8)      # M >= 512: thousands of tiles
SMALL_M = (64, 128, 8, 1, 6, 4)     # M < 512: few tiles, long K -> half-height tiles, 6 x 24 KB stages
INTERPRETER = (32, 64, 2, 2, 2, 4)  # CPU (TRITON_INTERPRET=1): small, ragged against smoke
REDUCE_BLOCK = 1024


@triton.jit
def _grouped(tile, num_m, num_n, GROUP_M: tl.constexpr):
    width = GROUP_M * num_n
    first = (tile // width) * GROUP_M
    rows = min(num_m - first, GROUP_M)
    return first + (tile % width) % rows, (tile % width) // rows


@triton.jit
def fp8_blockscale_kernel(
    a_desc, b_desc, as_ptr, bs_ptr, out_ptr,
    M, N, KB,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr, NUM_STAGES: tl.constexpr,
):
    pid = tl.program_id(0)
    split = tl.program_id(1)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    pid_m, pid_n = _grouped(pid, num_m, num_n, GROUP_M)
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    rows = off_m + tl.arange(0, BLOCK_M)
    row_ok = rows < M
    sb_row = bs_ptr + (off_n // BLOCK_K) * KB  # BLOCK_N divides 128: one b_scale per K block

    per_split = tl.cdiv(KB, SPLIT_K)
    kb_lo = split * per_split
    kb_hi = min(kb_lo + per_split, KB)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in tl.range(kb_lo, kb_hi, num_stages=NUM_STAGES):
        a = a_desc.load([off_m, kb * BLOCK_K])
        b = b_desc.load([off_n, kb * BLOCK_K])
        sa = tl.load(as_ptr + kb * M + rows, mask=row_ok, other=0.0)
        sb = tl.load(sb_row + kb)
        part = tl.dot(a, b.T)  # e4m3 x e4m3 -> fp32, one 128-wide K block
        acc += part * (sa * sb)[:, None]

    cols = off_n + tl.arange(0, BLOCK_N)
    mask = row_ok[:, None] & (cols < N)[None, :]
    if SPLIT_K == 1:
        tl.store(out_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.bfloat16), mask=mask)
    else:
        tl.store(out_ptr + (split * M + rows[:, None]) * N + cols[None, :], acc, mask=mask)


@triton.jit
def splitk_sum_kernel(ws_ptr, c_ptr, MN, SPLIT_K: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < MN
    total = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in tl.static_range(SPLIT_K):
        total += tl.load(ws_ptr + s * MN + offs, mask=ok, other=0.0)
    tl.store(c_ptr + offs, total.to(tl.bfloat16), mask=ok)


def settings(M: int, device_type: str) -> tuple:
    if device_type == "cpu":
        return INTERPRETER
    return SMALL_M if M < 512 else LARGE


def run(a: torch.Tensor, a_scale: torch.Tensor, b: torch.Tensor, b_scale: torch.Tensor, config: tuple | None = None) -> torch.Tensor:
    M, K = a.shape
    N = b.shape[0]
    KB = K // SCALE_BLOCK
    if a.dtype != torch.float8_e4m3fn or b.dtype != torch.float8_e4m3fn:
        raise TypeError(f"a and b must be float8_e4m3fn, got {a.dtype} and {b.dtype}")
    if K % SCALE_BLOCK or b.shape[1] != K or tuple(a_scale.shape) != (KB, M) or tuple(b_scale.shape) != (triton.cdiv(N, SCALE_BLOCK), KB):
        raise ValueError("shapes do not match the block-scaled interface")
    bm, bn, group, split, stages, warps = config or settings(M, a.device.type)
    assert SCALE_BLOCK % bn == 0, "BLOCK_N must divide 128 (one b_scale per tile per K block)"
    c = torch.empty((M, N), device=a.device, dtype=torch.bfloat16)
    a_desc = TensorDescriptor.from_tensor(a, [bm, SCALE_BLOCK])
    b_desc = TensorDescriptor.from_tensor(b, [bn, SCALE_BLOCK])
    split = max(1, min(split, KB))
    out = c if split == 1 else torch.empty((split, M, N), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn), split)
    fp8_blockscale_kernel[grid](
        a_desc, b_desc, a_scale, b_scale, out, M, N, KB,
        BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=SCALE_BLOCK, GROUP_M=group, SPLIT_K=split, NUM_STAGES=stages,
        num_warps=warps, num_stages=stages,
    )
    if split > 1:
        splitk_sum_kernel[(triton.cdiv(M * N, REDUCE_BLOCK),)](out, c, M * N, SPLIT_K=split, BLOCK=REDUCE_BLOCK, num_warps=4)
    return c
