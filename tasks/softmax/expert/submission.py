"""Expert row softmax: Triton kernels, and for rows of 64 KB or more on Hopper a CUDA kernel that
holds each row in shared memory.

Long rows (m1024_n32768 bf16, m128_n262144_fp32) on a CUDA device of compute capability 9.0 or
later go to softmax_smem_rows.cu (bound through load_inline): each CTA takes its row, or a 64 KB
slice of it, into shared memory with one bulk copy (cp.async.bulk on an mbarrier), folds it into
per-thread online (max, sum) pairs, merges them by log-sum-exp and writes y from shared memory:
one read of x and one write of y. The 1 MB fp32 rows are split over a 16-CTA cluster whose CTAs
swap their pairs through distributed shared memory. Why: a 64 KB row held in registers takes a
whole SM, which then loads, reduces and stores strictly in turn (0.58-0.73 of the H200's copy
bandwidth in every Triton design measured); in shared memory it needs ~40 registers a thread, so
three CTAs share an SM and one's copy and stores overlap another's arithmetic. Measured on the
H200 through d2k-profile (docs/h200-results.md): 0.78 of 4.3 TB/s on m1024_n32768 (1.72x
torch.softmax; the Triton kernel reached 0.65) and 0.75 on m128_n262144_fp32 (1.82x; Triton 0.55).
On rows of 16 KB or less the Triton kernels were as fast or faster (benchmarks/softmax_smem_rows.py
and the ring sweep of commit a7de729), so they keep those workloads.

The Triton kernels (every other shape, other GPUs, and the CPU interpreter):

Two strategies, chosen by row length:

* Rows of up to 32768 elements (all bf16 workloads): the row stays in registers. A program loads
  a [ROWS, BLOCK_N] tile once, reduces max and sum over registers, normalizes and stores once,
  which is the minimum DRAM traffic (one read, one write). Short rows are packed several to a
  program so that each program moves >= 4096 elements; num_warps is autotuned among the values
  that give each thread 8-64 elements (fewer wastes the tile, more spills registers).
* Longer rows (m128_n262144_fp32: 128 rows of 1 MB, fewer rows than the 132 SMs): a row does not
  fit on chip, and one program per row would leave the machine under-filled. Each row is split
  into CHUNK-element pieces handled by separate programs: the first kernel computes each chunk's
  (max, sum-exp) with an online (running-max, rescaled-sum) pass; the second merges the row's
  partial pairs by log-sum-exp and normalizes its chunk. The second kernel walks the chunks in
  reverse launch order so that it first re-reads what the first kernel read last, still in L2.

All arithmetic is fp32 (bf16 is widened on load, rounded once on store); exp is exp2 with
log2(e) folded in.
"""

from __future__ import annotations

import os
from pathlib import Path

import torch
import triton
import triton.language as tl

LOG2E: tl.constexpr = tl.constexpr(1.4426950408889634)  # globals used in @triton.jit must be constexpr

# Longest row kept entirely in registers: 32768 values over 1024 threads is 32 fp32 per thread.
MAX_ROW_ON_CHIP = 32768
# A short-row program packs rows until its tile holds this many elements (16 KB of bf16 loads).
MIN_TILE = 4096
# Split path: elements per program, and per loop iteration inside a program.
SPLIT_CHUNK = 16384
SPLIT_BLOCK = 4096
SPLIT_WARPS = 8


def _prune_configs(configs, named_args, **kwargs):
    """Autotune only num_warps values that give every thread 8-64 elements of the tile (fewer
    wastes threads, more spills registers)."""
    tile = kwargs["BLOCK_N"] * kwargs["ROWS"]
    kept = [c for c in configs if 8 <= tile // (32 * c.num_warps) <= 64]
    return kept or [min(configs, key=lambda c: abs(tile // (32 * c.num_warps) - 32))]


def _time_config(kernel_call, quantiles):
    """Autotuner timing; under TRITON_INTERPRET=1 (CPU) there is nothing to time, so every
    config is run once and ties go to the first one."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        kernel_call()
        return [0.0, 0.0, 0.0]
    return triton.testing.do_bench(kernel_call, quantiles=quantiles)


@triton.autotune(
    configs=[triton.Config({}, num_warps=w) for w in (4, 8, 16, 32)],
    key=["BLOCK_N", "ROWS"],
    prune_configs_by={"early_config_prune": _prune_configs},
    do_bench=_time_config,
)
@triton.jit
def softmax_rows_kernel(x_ptr, y_ptr, M, N, stride_x, stride_y, BLOCK_N: tl.constexpr, ROWS: tl.constexpr):
    """ROWS whole rows per program, held in registers: one read and one write of each element."""
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    # Rows past the end re-load the last row (always valid) and are masked on the store, so no
    # lane ever reduces an all -inf row.
    rows = tl.minimum(rows, M - 1).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols[None, :] < N
    x = tl.load(
        x_ptr + rows[:, None] * stride_x + cols[None, :],
        mask=col_ok,
        other=float("-inf"),
        eviction_policy="evict_first",  # read once: do not keep it in L2
    ).to(tl.float32)
    row_max = tl.max(x, axis=1)
    e = tl.exp2((x - row_max[:, None]) * LOG2E)  # padding columns: exp2(-inf) = 0
    y = e * (1.0 / tl.sum(e, axis=1))[:, None]
    store_ok = ((pid * ROWS + tl.arange(0, ROWS))[:, None] < M) & col_ok
    tl.store(
        y_ptr + rows[:, None] * stride_y + cols[None, :],
        y.to(y_ptr.dtype.element_ty),
        mask=store_ok,
        eviction_policy="evict_first",
    )


@triton.jit
def softmax_chunk_stats_kernel(
    x_ptr, m_ptr, s_ptr, N, stride_x, S, CHUNK: tl.constexpr, BLOCK: tl.constexpr
):
    """(max, sum exp(x - max)) of one CHUNK of one row, in a single online pass.

    Each lane keeps its own running max and running sum, rescaling the sum when its max grows,
    so the loop needs no cross-warp reduction; the lanes are merged once at the end.
    """
    pid = tl.program_id(0)
    row = pid // S
    start = (pid % S) * CHUNK
    row_ptr = x_ptr + row.to(tl.int64) * stride_x
    offs = tl.arange(0, BLOCK)
    m_run = tl.full([BLOCK], float("-inf"), tl.float32)
    s_run = tl.zeros([BLOCK], tl.float32)
    for k in range(0, CHUNK, BLOCK):
        cols = start + k + offs
        # Default eviction: the normalize kernel re-reads this, and L2 keeps the latest 60 MB.
        x = tl.load(row_ptr + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m_run, x)
        seen = m_new > float("-inf")  # a lane that has only seen padding has nothing to rescale
        alpha = tl.where(seen, tl.exp2((m_run - m_new) * LOG2E), 0.0)
        p = tl.where(seen, tl.exp2((x - m_new) * LOG2E), 0.0)
        s_run = s_run * alpha + p
        m_run = m_new
    m = tl.max(m_run, axis=0)  # every chunk holds at least one real element, so m is finite
    s = tl.sum(s_run * tl.exp2((m_run - m) * LOG2E), axis=0)
    tl.store(m_ptr + pid, m)
    tl.store(s_ptr + pid, s)


@triton.jit
def softmax_chunk_normalize_kernel(
    x_ptr, y_ptr, m_ptr, s_ptr, N, stride_x, stride_y, S,
    S_POW2: tl.constexpr, CHUNK: tl.constexpr, BLOCK: tl.constexpr,
):
    """Merge the row's S partial (max, sum) pairs by log-sum-exp, then normalize one chunk."""
    # Reverse order: the first programs re-read the chunks the stats kernel read last (in L2).
    pid = tl.num_programs(0) - 1 - tl.program_id(0)
    row = pid // S
    start = (pid % S) * CHUNK
    parts = tl.arange(0, S_POW2)
    part_ok = parts < S
    ms = tl.load(m_ptr + row * S + parts, mask=part_ok, other=float("-inf"))
    ss = tl.load(s_ptr + row * S + parts, mask=part_ok, other=0.0)
    m = tl.max(ms, axis=0)
    total = tl.sum(ss * tl.exp2((ms - m) * LOG2E), axis=0)
    inv_total = 1.0 / total
    m_log2 = m * LOG2E
    x_row = x_ptr + row.to(tl.int64) * stride_x
    y_row = y_ptr + row.to(tl.int64) * stride_y
    offs = tl.arange(0, BLOCK)
    for k in range(0, CHUNK, BLOCK):
        cols = start + k + offs
        ok = cols < N
        x = tl.load(x_row + cols, mask=ok, other=0.0, eviction_policy="evict_first").to(tl.float32)
        y = tl.exp2(x * LOG2E - m_log2) * inv_total
        # Stream the output so it does not evict x lines that later programs re-read from L2.
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=ok, eviction_policy="evict_first")


def _softmax_on_chip(x: torch.Tensor, y: torch.Tensor) -> None:
    M, N = x.shape
    block_n = triton.next_power_of_2(N)
    rows = max(1, MIN_TILE // block_n)
    grid = (triton.cdiv(M, rows),)
    softmax_rows_kernel[grid](x, y, M, N, x.stride(0), y.stride(0), BLOCK_N=block_n, ROWS=rows)


def _softmax_split_rows(x: torch.Tensor, y: torch.Tensor) -> None:
    M, N = x.shape
    splits = triton.cdiv(N, SPLIT_CHUNK)
    m_part = torch.empty((M, splits), device=x.device, dtype=torch.float32)
    s_part = torch.empty((M, splits), device=x.device, dtype=torch.float32)
    grid = (M * splits,)
    softmax_chunk_stats_kernel[grid](
        x, m_part, s_part, N, x.stride(0), splits, CHUNK=SPLIT_CHUNK, BLOCK=SPLIT_BLOCK, num_warps=SPLIT_WARPS
    )
    softmax_chunk_normalize_kernel[grid](
        x, y, m_part, s_part, N, x.stride(0), y.stride(0), splits,
        S_POW2=triton.next_power_of_2(splits), CHUNK=SPLIT_CHUNK, BLOCK=SPLIT_BLOCK, num_warps=SPLIT_WARPS,
    )


# ---- long rows in shared memory (softmax_smem_rows.cu) --------------------------------------

_BIND = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

extern "C" int softmax_smem_rows_launch(const void* x, void* y, int is_bf16, int M, int N, int threads, int split,
                                        int bulk, cudaStream_t stream);

at::Tensor smem_rows_softmax(const at::Tensor& x, int64_t threads, int64_t split) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.is_contiguous(), "x: contiguous 2-D CUDA tensor");
  TORCH_CHECK(x.scalar_type() == at::kBFloat16 || x.scalar_type() == at::kFloat, "x: bfloat16 or float32");
  const at::cuda::CUDAGuard guard(x.device());
  auto y = at::empty_like(x);
  // One bulk copy and 16-byte stores need 16-byte aligned rows; otherwise the threads copy.
  const bool bulk = x.size(1) * x.element_size() % 16 == 0 && reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 == 0;
  TORCH_CHECK(bulk || split == 1, "a row split over a cluster needs 16-byte aligned slices");
  const int err = softmax_smem_rows_launch(x.data_ptr(), y.data_ptr(), x.scalar_type() == at::kBFloat16, x.size(0),
                                           x.size(1), threads, split, bulk, at::cuda::getCurrentCUDAStream());
  TORCH_CHECK(err == 0, "softmax_smem_rows_launch: ", cudaGetErrorString(static_cast<cudaError_t>(err)));
  return y;
}
"""
_ext = None

# A row (or row slice) one CTA holds in shared memory: 64 KB lets three CTAs share an SM's 227 KB.
# Rows shorter than this stay on the Triton path, which measured as fast or faster there.
SLICE_BYTES = 64 * 1024
MAX_SPLIT = 16  # the H200 schedules clusters of up to 16 CTAs (non-portable above 8)
SMEM_THREADS = 256  # per CTA: 256 and 512 measured within 0.3 % of each other, 128 and 1024 slower


def smem_split(n: int, elem_bytes: int) -> int | None:
    """CTAs per row for the shared-memory kernel (a power of two up to 16, each holding at most
    SLICE_BYTES), or None where the Triton kernels take the row: shorter than one slice, longer
    than 16 slices, or a split that would leave a slice unaligned."""
    row = n * elem_bytes
    if row < SLICE_BYTES:
        return None
    split = 1
    while row > split * SLICE_BYTES:
        split *= 2
    if split > MAX_SPLIT or (split > 1 and n % (split * (16 // elem_bytes))):
        return None
    return split


def _smem_module():
    global _ext
    if _ext is None:
        from torch.utils.cpp_extension import load_inline

        source = Path(__file__).resolve().parent / "softmax_smem_rows.cu"
        _ext = load_inline(name="softmax_smem_rows_expert", cpp_sources=_BIND, cuda_sources=source.read_text(),
                           functions=["smem_rows_softmax"], extra_cuda_cflags=["-O3", "-std=c++17"])
    return _ext


def smem_rows_softmax(x: torch.Tensor, split: int, threads: int = SMEM_THREADS) -> torch.Tensor:
    """Softmax of a contiguous CUDA bf16/fp32 matrix by the shared-memory kernel: one CTA per row
    slice, `split` CTAs (a cluster) per row."""
    return _smem_module().smem_rows_softmax(x, threads, split)


def _on_hopper(x: torch.Tensor) -> bool:
    return torch.cuda.get_device_capability(x.device) >= (9, 0)


def run(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of a contiguous 2-D bf16/fp32 tensor."""
    assert x.dim() == 2, "expects [M, N]"
    x = x.contiguous()
    if x.numel() == 0:
        return torch.empty_like(x)
    split = smem_split(x.shape[1], x.element_size()) if x.dtype in (torch.bfloat16, torch.float32) else None
    if split is not None and x.is_cuda and _on_hopper(x):
        return smem_rows_softmax(x, split)
    y = torch.empty_like(x)
    if x.shape[1] <= MAX_ROW_ON_CHIP:
        _softmax_on_chip(x, y)
    else:
        _softmax_split_rows(x, y)
    return y
