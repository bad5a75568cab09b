"""Expert LayerNorm forward: rows staged in shared memory on Hopper (CUDA), rows held in registers
elsewhere (Triton); Welford/Chan statistics in fp32 either way.

Design (see tasks/layernorm/task.toml for the reasoning behind each point):
- x is read once and y written once, the minimum DRAM traffic of a memory-bound op.
- On sm_90 with 16-byte aligned bf16 rows of 16384 columns or more (32 KB), layernorm_smem_rows.cu
  (bound through load_inline): a CTA stages `rows` whole rows in shared memory with one bulk copy each, folds each thread's 16-byte
  vectors into (count, mean, M2) by Chan's merge, merges across lanes by shuffles and across warps
  through shared memory, and normalises from shared memory, loading weight and bias once per CTA
  for all its rows. Held in shared memory rather than registers, a row leaves room for several
  CTAs per SM, so one CTA's copy overlaps another's arithmetic. Settings per row length: 128
  threads up to 2048 columns, 256 up to 16384, 512 above; 16384 // N rows per CTA, 1 to 4. On an
  H100 it beat the Triton kernel on 1024 x 32768 in four sweeps (0.56-0.57 of 4.3 TB/s against
  0.54); on shorter rows the Triton kernel at its best autotuned setting was as fast or faster
  (0.65 against 0.52 at N = 1024, 0.68 against 0.64 at N = 8192), so they stay there.
- Elsewhere (shorter rows, other GPUs, other dtypes, ragged or unaligned rows, the CPU
  interpreter) the Triton kernel: one program owns BLOCK_M whole rows (BLOCK_M = 1 except for short rows) in registers,
  viewed as [NCHUNK, CHUNK] with CHUNK = 8 contiguous elements (one 16-byte bf16 vector per
  thread), so each chunk's partial (count, mean, M2) is computed inside one thread; the partials
  are merged with Chan's formula, M2 = sum(M2_c) + sum(n_c * (mean_c - mean)^2). A small autotune
  over (BLOCK_M, num_warps) keyed on N, pruned to configs that give each thread 4..64 elements,
  picks the CTA size per row length.
- Statistics and the affine epilogue run in fp32; rstd uses the hardware rsqrt.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

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


# ---- rows in shared memory (layernorm_smem_rows.cu) ------------------------------------------

_BIND = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

extern "C" int layernorm_smem_rows_launch(const void* x, const void* w, const void* b, void* y, int M, int N,
                                          int threads, int rows, int two_pass, float eps, cudaStream_t stream);

at::Tensor smem_rows_layernorm(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, int64_t threads,
                               int64_t rows, int64_t two_pass, double eps) {
  const at::cuda::CUDAGuard guard(x.device());
  auto y = at::empty_like(x);
  const int err = layernorm_smem_rows_launch(x.data_ptr(), w.data_ptr(), b.data_ptr(), y.data_ptr(), x.size(0),
                                             x.size(1), threads, rows, two_pass, static_cast<float>(eps),
                                             at::cuda::getCurrentCUDAStream());
  TORCH_CHECK(err == 0, "layernorm_smem_rows_launch: ", cudaGetErrorString(static_cast<cudaError_t>(err)));
  return y;
}
"""
_ext = None
SMEM_MIN_N = 16384  # shorter rows: the Triton register kernel measured as fast or faster (H100)
SMEM_MAX_ROW_BYTES = 200 * 1024  # one row must fit a CTA's shared memory (227 KB at most on sm_90)
TWO_PASS = 0  # statistics: 0 = one pass with Chan's merge, 1 = the sum, then squared deviations


def smem_setting(n: int) -> tuple[int, int, int]:
    """(threads, rows per CTA, two_pass) for rows of ``n`` bf16 elements (measured on an H100 on every
    workload of the task: benchmarks/layernorm_smem_rows.py)."""
    threads = 128 if n <= 2048 else (256 if n <= 16384 else 512)
    return threads, max(1, min(4, 16384 // n)), TWO_PASS


def _smem_ok(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> bool:
    """The shared-memory kernel's preconditions: bf16 on a Hopper GPU, 16-byte rows and pointers."""
    tensors = (x, weight, bias)
    return (x.is_cuda and torch.cuda.get_device_capability(x.device) >= (9, 0)
            and SMEM_MIN_N <= x.shape[1] <= SMEM_MAX_ROW_BYTES // 2
            and x.shape[1] % 8 == 0 and all(t.dtype == torch.bfloat16 for t in tensors)
            and all(t.data_ptr() % 16 == 0 for t in tensors))


def _smem_module():
    global _ext
    if _ext is None:
        from torch.utils.cpp_extension import load_inline

        source = Path(__file__).resolve().parent / "layernorm_smem_rows.cu"
        _ext = load_inline(name="layernorm_smem_rows_expert", cpp_sources=_BIND, cuda_sources=source.read_text(),
                           functions=["smem_rows_layernorm"], extra_cuda_cflags=["-O3", "-std=c++17"])
    return _ext


def run(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """LayerNorm over the last dimension of contiguous x [M, N] with weight and bias [N]."""
    assert x.dim() == 2 and x.is_contiguous() and weight.is_contiguous() and bias.is_contiguous()
    if x.numel() and _smem_ok(x, weight, bias):
        threads, rows, two_pass = smem_setting(x.shape[1])
        return _smem_module().smem_rows_layernorm(x, weight, bias, threads, rows, two_pass, EPS)
    return triton_run(x, weight, bias)


def triton_run(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """The Triton register kernel alone (every device; the only path off Hopper)."""
    m, n = x.shape
    y = torch.empty_like(x)
    block_n = max(triton.next_power_of_2(n), CHUNK)
    grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]),)  # noqa: E731
    _layernorm_fwd[grid](x, weight, bias, y, m, n, EPS, BLOCK_N=block_n, CHUNK=CHUNK)
    return y
