"""Naive tiled Triton GEMM without tensor cores: C = A @ B^T (bf16 in/out, fp32 accumulation).

Each program owns a BLOCK_M x BLOCK_N output tile and walks K in small chunks, forming the
partial products with a broadcast multiply ([BM, BK, 1] * [1, BK, BN]) and reducing the chunk
with tl.sum. That keeps everything on CUDA-core FMAs, so it shows what a tile layout alone buys
without the tensor cores. One fixed configuration, no autotuning, compiler-default pipelining.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

BLOCK_M, BLOCK_N, BLOCK_K = 32, 32, 8


@triton.jit
def gemm_broadcast_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """One BLOCK_M x BLOCK_N tile of C; row-major program order (no grouping)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        # A chunk [BM, BK] and B chunk read as its transpose [BK, BN] (B is stored [N, K]).
        a = tl.load(a_ptr + offs_m[:, None] * K + ks[None, :],
                    mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + offs_n[None, :] * K + ks[:, None],
                    mask=(offs_n[None, :] < N) & (ks[:, None] < K), other=0.0)
        # Not a tl.dot: an explicit outer-product sum over the chunk, on CUDA cores, in fp32.
        prod = a.to(tl.float32)[:, :, None] * b.to(tl.float32)[None, :, :]
        acc += tl.sum(prod, axis=1)

    c = acc.to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], c,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def run(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C = A @ B^T for contiguous a [M, K] and b [N, K]."""
    assert a.is_contiguous() and b.is_contiguous() and a.shape[1] == b.shape[1]
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    gemm_broadcast_kernel[grid](a, b, c, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=4)
    return c
