"""Expert W4A16 GEMM: int4 weights unpacked and dequantised in registers in the K loop.

Decode batches (M <= 16) on a CUDA GPU of compute capability 8.0 or later go to
w4a16_decode_mma.cu (bound through load_inline): the dequantised weights are the 16-row operand
of mma.m16n8k16 and the activations the 8-column one (swap-AB), the warps of a CTA split K and sum
their fragments in shared memory. On an H100 it ran the m1 and m16 workloads 2.2x and 3.0x faster
than the Triton kernels below (docs/h200-results.md). Elsewhere (other M, the CPU interpreter),
two Triton kernels, chosen by M in run():
  - M < GEMV_MAX_M: a split-K GEMV on CUDA cores. Each program owns GEMV_BLOCK_N output columns
    and one K slice; per K step it loads a [BLOCK_N, BLOCK_K/8] int32 tile (rows contiguous
    along K), unpacks the 8 nibbles of every word by broadcasting shifts over a new axis and
    reshaping, converts them with the 0x6400 magic number, applies (q - z) * s of the tile's
    group and accumulates x * w in an fp32 [BLOCK_N, BLOCK_K] tile, reduced once at the end.
  - otherwise: a tensor-core kernel, tl.dot(x_tile, w_tile^T) with the same in-register dequant
    of the B tile and an fp32 accumulator, split-K on a third grid axis for small M.
Partials of a split (SPLIT_K > 1) go to an fp32 [SPLIT_K, M, N] workspace that a small kernel
sums and rounds to fp16; with SPLIT_K == 1 the kernels write y directly.

The Triton launch settings are module constants (chosen by benchmarks/tune_w4a16_gemm.py on the
H200), the decode kernel's by benchmarks/w4a16_decode.py.
"""

from __future__ import annotations

from pathlib import Path

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


# ---- decode batches on tensor cores (w4a16_decode_mma.cu) ----------------------------------------

_BIND = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

extern "C" int w4a16_decode_mma_launch(const void* x, const void* qweight, const void* scales, const void* zeros,
                                       void* y, int M, int N, int K, int tiles, int warps, int depth,
                                       cudaStream_t stream);

at::Tensor decode_mma(const at::Tensor& x, const at::Tensor& qweight, const at::Tensor& scales,
                      const at::Tensor& zeros, int64_t tiles, int64_t warps, int64_t depth) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.is_contiguous() && x.scalar_type() == at::kHalf, "x: fp16 [M, K]");
  TORCH_CHECK(qweight.is_contiguous() && qweight.scalar_type() == at::kInt && qweight.size(1) * 8 == x.size(1),
              "qweight: int32 [N, K/8]");
  TORCH_CHECK(scales.is_contiguous() && zeros.is_contiguous() && scales.scalar_type() == at::kHalf &&
              zeros.scalar_type() == at::kHalf && scales.size(0) == qweight.size(0) && zeros.sizes() == scales.sizes() &&
              scales.size(1) * 128 == x.size(1), "scales, zeros: fp16 [N, K/128]");
  TORCH_CHECK(reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 == 0 && reinterpret_cast<uintptr_t>(qweight.data_ptr()) % 16 == 0,
              "x and qweight: 16-byte aligned");
  const at::cuda::CUDAGuard guard(x.device());
  auto y = at::empty({x.size(0), qweight.size(0)}, x.options());
  const int err = w4a16_decode_mma_launch(x.data_ptr(), qweight.data_ptr(), scales.data_ptr(), zeros.data_ptr(),
                                          y.data_ptr(), x.size(0), qweight.size(0), x.size(1), tiles, warps, depth,
                                          at::cuda::getCurrentCUDAStream());
  TORCH_CHECK(err == 0, "w4a16_decode_mma_launch: ", cudaGetErrorString(static_cast<cudaError_t>(err)));
  return y;
}
"""
_ext = None

DECODE_MAX_M = 16  # two 8-row batch tiles of the MMA's 8-column operand
# (tiles of 16 columns per warp, warps per CTA splitting K, steps loaded ahead) by batch tiles:
# the fastest of 42 checked settings on the m1 and m16 workloads (benchmarks/w4a16_decode.py).
DECODE_SETTINGS = {1: (1, 4, 1), 2: (2, 8, 1)}


def _decode_module():
    global _ext
    if _ext is None:
        from torch.utils.cpp_extension import load_inline

        source = Path(__file__).resolve().parent / "w4a16_decode_mma.cu"
        _ext = load_inline(name="w4a16_decode_mma_expert", cpp_sources=_BIND, cuda_sources=source.read_text(),
                           functions=["decode_mma"], extra_cuda_cflags=["-O3", "-std=c++17"])
    return _ext


def decode_mma(x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor,
               tiles: int, warps: int, depth: int) -> torch.Tensor:
    """y = x @ dequant(qweight)^T for M <= 16 by the tensor-core decode kernel at one setting
    (the instantiated ones are listed in w4a16_decode_mma.cu)."""
    return _decode_module().decode_mma(x, qweight, scales, zeros, tiles, warps, depth)


def _decode_fits(x: torch.Tensor, qweight: torch.Tensor) -> bool:
    """The decode kernel's preconditions: fp16 on an Ampere-or-later GPU (mma.m16n8k16), M <= 16,
    16-byte aligned x and weights."""
    return (x.is_cuda and x.dtype == torch.float16 and 1 <= x.shape[0] <= DECODE_MAX_M
            and torch.cuda.get_device_capability(x.device) >= (8, 0)
            and x.data_ptr() % 16 == 0 and qweight.data_ptr() % 16 == 0)


def run(x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor) -> torch.Tensor:
    """y [M, N] = x [M, K] @ dequant(qweight [N, K/8], scales, zeros [N, K/128])^T in fp16."""
    m, k = x.shape
    assert k % GROUP == 0 and qweight.shape[1] * 8 == k and x.is_contiguous() and qweight.is_contiguous()
    if _decode_fits(x, qweight):
        return decode_mma(x, qweight, scales, zeros, *DECODE_SETTINGS[1 if m <= 8 else 2])
    return triton_run(x, qweight, scales, zeros)


def triton_run(x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor) -> torch.Tensor:
    """The Triton kernels alone (any M, also under the CPU interpreter)."""
    m, k = x.shape
    n = qweight.shape[0]
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
