"""Expert LayerNorm forward in Triton: rows held in registers, Welford/Chan statistics in fp32.

Design (see tasks/layernorm/task.toml for the reasoning behind each point):
- One program owns BLOCK_M whole rows (BLOCK_M = 1 except for short rows) and loads them once into
  registers: x is read once and y written once, the minimum DRAM traffic of a memory-bound op.
- The row is viewed as [NCHUNK, CHUNK] with CHUNK = 8 contiguous elements (one 16-byte bf16
  vector per thread), so each chunk's partial (count, mean, M2) is computed inside one thread. The
  partials are merged with Chan's formula, M2 = sum(M2_c) + sum(n_c * (mean_c - mean)^2): stable
  even when |mean| >> std, at the cost of one extra cross-thread reduction like a two-pass.
- Statistics and the affine epilogue run in fp32; rstd uses the hardware rsqrt.
- A small autotune over (BLOCK_M, num_warps) keyed on N, pruned to configs that give each thread
  4..64 elements, picks the CTA size per row length.
"""

from __future__ import annotations

import os
import time

import torch
import triton
import triton.language as tl

EPS = 1e-5
CHUNK = 8  # elements per Welford partial: 16 bytes of bf16, one vector load per thread


def _configs() -> list[triton.Config]:
    """Few configs: wide CTAs for long rows, several rows per program for short ones."""
    shapes = [(1, 4), (1, 8), (1, 16), (1, 32), (2, 4), (4, 8)]
    return [triton.Config({"BLOCK_M": bm}, num_warps=w, num_stages=1) for bm, w in shapes]


def _prune(configs: list[triton.Config], named_args: dict, **kwargs) -> list[triton.Config]:
    """Keep configs where each thread holds 4..64 row elements (fewer: idle threads; more: spills),
    and pack several rows per program only when rows are short (<= 2048 elements)."""
    block_n = kwargs["BLOCK_N"]
    kept = []
    for cfg in configs:
        bm = cfg.kwargs["BLOCK_M"]
        per_thread = bm * block_n // (32 * cfg.num_warps)
        if 4 <= per_thread <= 64 and (bm == 1 or block_n <= 2048):
            kept.append(cfg)
    # Tiny rows (N < 128) give every config < 4 elements per thread; the smallest CTA is best then.
    return kept or [min(configs, key=lambda c: (c.num_warps, c.kwargs["BLOCK_M"]))]


def _cpu_bench(kernel_call, quantiles):
    """Wall-clock timing for Triton's CPU interpreter, which has no GPU driver for the default
    benchmarker; every pruned config still runs once, so the smoke check exercises all of them."""
    start = time.perf_counter()
    kernel_call()
    elapsed = (time.perf_counter() - start) * 1e3
    return [elapsed for _ in quantiles]


_INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"


@triton.autotune(
    configs=_configs(),
    key=["N"],
    prune_configs_by={"early_config_prune": _prune},
    do_bench=_cpu_bench if _INTERPRETED else None,
)
@triton.jit
def _layernorm_fwd(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, N, eps,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CHUNK: tl.constexpr,
):
    NCHUNK: tl.constexpr = BLOCK_N // CHUNK
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)            # [BM]
    chunk = tl.arange(0, NCHUNK)                                          # [NC]
    cols = chunk[:, None] * CHUNK + tl.arange(0, CHUNK)[None, :]          # [NC, C] contiguous
    col_ok = cols < N
    mask = (rows < M)[:, None, None] & col_ok[None, :, :]                  # [BM, NC, C]
    offs = rows.to(tl.int64)[:, None, None] * N + cols[None, :, :]

    # The only read of x: the rows stay in registers (as fp32) until the store.
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)

    # Per-chunk partials (count, mean, M2); a chunk lives in one thread, so these are register math.
    count = tl.minimum(tl.maximum(N - chunk * CHUNK, 0), CHUNK).to(tl.float32)   # [NC]
    chunk_sum = tl.sum(x, axis=2)                                                # [BM, NC]
    chunk_mean = chunk_sum / tl.maximum(count, 1.0)[None, :]
    dev = tl.where(mask, x - chunk_mean[:, :, None], 0.0)
    chunk_m2 = tl.sum(dev * dev, axis=2)                                         # [BM, NC]

    # Chan merge of all partials of a row: mean of the means (count-weighted), then
    # M2 = sum M2_c + sum n_c * (mean_c - mean)^2.
    mean = tl.sum(chunk_sum, axis=1) / N                                         # [BM]
    shift = chunk_mean - mean[:, None]
    m2 = tl.sum(chunk_m2 + count[None, :] * shift * shift, axis=1)               # [BM]
    rstd = tl.math.rsqrt(m2 / N + eps)

    w = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)            # [NC, C]
    b = tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    y = (x - mean[:, None, None]) * rstd[:, None, None] * w[None, :, :] + b[None, :, :]
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def run(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """LayerNorm over the last dimension of contiguous x [M, N] with weight and bias [N]."""
    assert x.dim() == 2 and x.is_contiguous() and weight.is_contiguous() and bias.is_contiguous()
    m, n = x.shape
    y = torch.empty_like(x)
    block_n = max(triton.next_power_of_2(n), CHUNK)
    grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]),)  # noqa: E731
    _layernorm_fwd[grid](x, weight, bias, y, m, n, EPS, BLOCK_N=block_n, CHUNK=CHUNK)
    return y
