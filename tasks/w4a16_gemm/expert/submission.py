"""Expert W4A16 GEMM in Triton: int4 weights unpacked and dequantised in registers in the K loop.

Two main kernels, chosen by M in run():
  - M < GEMV_MAX_M: a split-K GEMV on CUDA cores. Each program owns GEMV_BLOCK_N output columns
    and one K slice; per K step it loads a [BLOCK_N, BLOCK_K/8] int32 tile (rows contiguous
    along K), unpacks the 8 nibbles of every word by broadcasting shifts over a new axis and
    reshaping, converts them with the 0x6400 magic number, applies (q - z) * s of the tile's
    group and accumulates x * w in an fp32 [BLOCK_N, BLOCK_K] tile, reduced once at the end.
  - otherwise: a tensor-core kernel, tl.dot(x_tile, w_tile^T) with the same in-register dequant
    of the B tile and an fp32 accumulator, split-K on a third grid axis for small M.
Partials of a split (SPLIT_K > 1) go to an fp32 [SPLIT_K, M, N] workspace that a small kernel
sums and rounds to fp16; with SPLIT_K == 1 the kernels write y directly.

The launch settings are module constants (chosen by benchmarks/tune_w4a16_gemm.py on the H200).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

GROUP = 128

# GEMV path (M < GEMV_MAX_M)
GEMV_MAX_M = 4
GEMV_BLOCK_N = 16
GEMV_BLOCK_K = 128
GEMV_SPLIT_K = 2
GEMV_WARPS = 2
GEMV_STAGES = 4

# tensor-core path: (BLOCK_M, BLOCK_N, BLOCK_K, SPLIT_K, num_warps, num_stages) by M
MMA_SMALL_M = 16  # M <= this: the small-M setting
MMA_SMALL = (16, 64, 64, 8, 4, 4)
MMA_LARGE = (128, 256, 32, 1, 8, 3)

REDUCE_BLOCK = 1024


@triton.jit
def _nibbles_to_half(words, ROWS: tl.constexpr, COLS: tl.constexpr):
    """int32 [ROWS, COLS // 8] -> fp16 [ROWS, COLS] of the unsigned nibbles, k-th nibble of a
    word at bits 4 * k; 0x6400 | q is the fp16 bit pattern of 1024 + q."""
    shifts = tl.arange(0, 8) * 4
    q = (words[:, :, None] >> shifts[None, None, :]) & 0xF
    q = tl.reshape(q, (ROWS, COLS))
    h = (q | 0x6400).to(tl.uint16).to(tl.float16, bitcast=True)
    return h - 1024.0


@triton.jit
def _w4_gemv_kernel(x_ptr, qw_ptr, s_ptr, z_ptr, out_ptr, M, N, K, k_per_split,
                    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_K: tl.constexpr,
                    SPLIT: tl.constexpr, STAGES: tl.constexpr):
    pid_n = tl.program_id(0)
    m = tl.program_id(1)
    pid_k = tl.program_id(2)
    kp = K // 8
    groups = K // GROUP_K
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_n = offs_n < N
    rows = tl.where(mask_n, offs_n, 0)
    offs_w = tl.arange(0, BLOCK_K // 8)
    offs_k = tl.arange(0, BLOCK_K)
    k_lo = pid_k * k_per_split
    acc = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
    for k0 in tl.range(k_lo, k_lo + k_per_split, BLOCK_K, num_stages=STAGES):
        words = tl.load(qw_ptr + rows[:, None] * kp + (k0 // 8 + offs_w)[None, :], eviction_policy="evict_first")
        g = k0 // GROUP_K
        sc = tl.load(s_ptr + rows * groups + g)
        ze = tl.load(z_ptr + rows * groups + g)
        w = (_nibbles_to_half(words, BLOCK_N, BLOCK_K) - ze[:, None]) * sc[:, None]
        xv = tl.load(x_ptr + m * K + k0 + offs_k).to(tl.float32)
        acc += w.to(tl.float32) * xv[None, :]
    y = tl.sum(acc, axis=1)
    if SPLIT == 1:
        tl.store(out_ptr + m * N + offs_n, y.to(tl.float16), mask=mask_n)
    else:
        tl.store(out_ptr + (pid_k * M + m) * N + offs_n, y, mask=mask_n)


@triton.jit
def _w4_mma_kernel(x_ptr, qw_ptr, s_ptr, z_ptr, out_ptr, M, N, K, k_per_split,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   GROUP_K: tl.constexpr, SPLIT: tl.constexpr, STAGES: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_k = tl.program_id(2)
    kp = K // 8
    groups = K // GROUP_K
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_m = offs_m < M
    mask_n = offs_n < N
    rows_m = tl.where(mask_m, offs_m, 0)
    rows_n = tl.where(mask_n, offs_n, 0)
    offs_w = tl.arange(0, BLOCK_K // 8)
    offs_k = tl.arange(0, BLOCK_K)
    k_lo = pid_k * k_per_split
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in tl.range(k_lo, k_lo + k_per_split, BLOCK_K, num_stages=STAGES):
        a = tl.load(x_ptr + rows_m[:, None] * K + (k0 + offs_k)[None, :])
        words = tl.load(qw_ptr + rows_n[:, None] * kp + (k0 // 8 + offs_w)[None, :])
        g = k0 // GROUP_K
        sc = tl.load(s_ptr + rows_n * groups + g)
        ze = tl.load(z_ptr + rows_n * groups + g)
        w = (_nibbles_to_half(words, BLOCK_N, BLOCK_K) - ze[:, None]) * sc[:, None]
        acc = tl.dot(a, tl.trans(w), acc)
    mask = mask_m[:, None] & mask_n[None, :]
    if SPLIT == 1:
        tl.store(out_ptr + offs_m[:, None] * N + offs_n[None, :], acc.to(tl.float16), mask=mask)
    else:
        tl.store(out_ptr + (pid_k * M + offs_m[:, None]) * N + offs_n[None, :], acc, mask=mask)


@triton.jit
def _splitk_sum_kernel(ws_ptr, y_ptr, total, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in tl.static_range(SPLIT):
        s += tl.load(ws_ptr + i * total + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, s.to(tl.float16), mask=mask)


def _split(k: int, block_k: int, split: int) -> int:
    """The largest split <= ``split`` whose K slices are whole BLOCK_K steps."""
    steps = k // block_k
    split = max(1, min(split, steps))
    while steps % split:
        split -= 1
    return split


def run(x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor) -> torch.Tensor:
    m, k = x.shape
    n = qweight.shape[0]
    assert k % GROUP == 0 and qweight.shape[1] * 8 == k and x.is_contiguous() and qweight.is_contiguous()
    y = torch.empty((m, n), dtype=torch.float16, device=x.device)
    if m < GEMV_MAX_M:
        split = _split(k, GEMV_BLOCK_K, GEMV_SPLIT_K)
        out = y if split == 1 else torch.empty((split, m, n), dtype=torch.float32, device=x.device)
        grid = (triton.cdiv(n, GEMV_BLOCK_N), m, split)
        _w4_gemv_kernel[grid](x, qweight, scales, zeros, out, m, n, k, k // split,
                              BLOCK_N=GEMV_BLOCK_N, BLOCK_K=GEMV_BLOCK_K, GROUP_K=GROUP, SPLIT=split,
                              STAGES=GEMV_STAGES, num_warps=GEMV_WARPS)
    else:
        bm, bn, bk, split, warps, stages = MMA_SMALL if m <= MMA_SMALL_M else MMA_LARGE
        split = _split(k, bk, split)
        out = y if split == 1 else torch.empty((split, m, n), dtype=torch.float32, device=x.device)
        grid = (triton.cdiv(m, bm), triton.cdiv(n, bn), split)
        _w4_mma_kernel[grid](x, qweight, scales, zeros, out, m, n, k, k // split,
                             BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_K=GROUP, SPLIT=split,
                             STAGES=stages, num_warps=warps)
    if split > 1:
        total = m * n
        _splitk_sum_kernel[(triton.cdiv(total, REDUCE_BLOCK),)](out, y, total, SPLIT=split, BLOCK=REDUCE_BLOCK)
    return y
