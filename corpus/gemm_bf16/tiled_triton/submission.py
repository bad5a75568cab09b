"""Tiled Triton GEMM with tensor cores: C = A @ B^T (bf16 in/out, fp32 accumulation).

The classic pointer-based Triton matmul: tl.dot on [BM, BK] x [BK, BN] tiles with an fp32
accumulator, GROUP_SIZE_M tile grouping for L2 reuse, and a small autotune list with explicit
num_stages so that the compiler software-pipelines the K loop with async copies. One program per
output tile (not persistent), no TMA.

`gemm_splitk_kernel` below is an experiment that was left in the file and is never launched.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


def _config(bm: int, bn: int, bk: int, stages: int, warps: int) -> triton.Config:
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_SIZE_M": 8}, num_stages=stages, num_warps=warps)


CONFIGS = [
    _config(128, 256, 64, stages=3, warps=8),
    _config(128, 128, 64, stages=4, warps=4),
    _config(64, 128, 64, stages=4, warps=4),
    _config(128, 64, 32, stages=4, warps=4),
]

# Used for CPU tensors under TRITON_INTERPRET=1, where benchmarking configs makes no sense.
INTERPRETER_META = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_SIZE_M": 2}


@triton.jit
def gemm_tiled_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
):
    """One output tile per program, in GROUP_SIZE_M-grouped order."""
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    # Grouped order: consecutive programs cover GROUP_SIZE_M tile rows column by column.
    tiles_per_group = GROUP_SIZE_M * num_pid_n
    first_m = (pid // tiles_per_group) * GROUP_SIZE_M
    group_rows = min(num_pid_m - first_m, GROUP_SIZE_M)
    pid_m = first_m + (pid % tiles_per_group) % group_rows
    pid_n = (pid % tiles_per_group) // group_rows

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    # Clamp out-of-range rows to row 0 (loads stay in bounds; the store mask drops them).
    rows_a = tl.where(offs_m < M, offs_m, 0)
    rows_b = tl.where(offs_n < N, offs_n, 0)
    a_ptrs = a_ptr + rows_a[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + rows_b[None, :] * K + offs_k[:, None]   # [BK, BN] view of B^T

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None], other=0.0)
        acc = tl.dot(a, b, acc)          # bf16 x bf16 -> fp32 on tensor cores
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K

    c = acc.to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], c,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


gemm_tiled_tuned = triton.autotune(configs=CONFIGS, key=["M", "N", "K"])(gemm_tiled_kernel)


@triton.jit
def gemm_splitk_kernel(
    a_ptr, b_ptr, ws_ptr,
    M, N, K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    SPLIT_K: tl.constexpr,
):
    """Unused split-K experiment: each program adds its K slice's partial tile into an fp32
    workspace with atomics (the caller would zero it and cast it to bf16 afterwards)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_k = tl.program_id(2)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K * SPLIT_K):
        ks = k0 + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * K + ks[None, :], mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + offs_n[None, :] * K + ks[:, None], mask=(offs_n[None, :] < N) & (ks[:, None] < K), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.atomic_add(ws_ptr + offs_m[:, None] * N + offs_n[None, :], acc,
                  mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def run(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C = A @ B^T for contiguous a [M, K] and b [N, K]."""
    assert a.is_contiguous() and b.is_contiguous() and a.shape[1] == b.shape[1]
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    if a.device.type == "cpu":  # TRITON_INTERPRET=1
        meta = INTERPRETER_META
        grid = (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
        gemm_tiled_kernel[grid](a, b, c, M, N, K, num_stages=3, num_warps=4, **meta)
        return c
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)  # noqa: E731
    gemm_tiled_tuned[grid](a, b, c, M, N, K)
    return c
