"""Expert histogram in CUDA C++ (histogram.cu), bound through load_inline.

CUDA rather than Triton: tl.histogram keeps no shared-memory histogram across a grid-stride loop,
and the 16-byte loads of 16 uint8 values are explicit here. The kernel keeps shared-memory
histograms per CTA (one per warp while 16 copies fit in 48 KB, so 256 bins; fewer for 4096),
walks x with a persistent grid-stride loop of 16-byte loads (two in flight per thread), counts
with plain shared atomics and merges each CTA's non-zero bins into the global counts with one
atomic each. Warp-aggregated increments (__match_any_sync) were measured and lose on the H200
(tasks/histogram/task.toml, design item warp_aggregation). 2 CTAs per SM and 16 copies were the
best of the measured settings (examples/h200/family1/tune_run2.txt).
"""

from __future__ import annotations

from pathlib import Path

import torch

_SRC = Path(__file__).resolve().parent / "histogram.cu"
_BIND = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

extern "C" int histogram_launch(const void* x, long long n, int is_u8, int bins, int* counts, int blocks_per_sm,
                                int copies, cudaStream_t stream);

at::Tensor histogram(const at::Tensor& x, int64_t bins, int64_t blocks_per_sm, int64_t copies) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 1 && x.is_contiguous(), "x: contiguous 1-D CUDA tensor");
  TORCH_CHECK(x.scalar_type() == at::kByte || x.scalar_type() == at::kInt, "x: uint8 or int32");
  TORCH_CHECK(bins >= 1 && bins <= 4096, "bins: 1..4096");
  const at::cuda::CUDAGuard guard(x.device());
  auto counts = at::empty({bins}, x.options().dtype(at::kInt));
  const int err = histogram_launch(x.data_ptr(), x.numel(), x.scalar_type() == at::kByte, static_cast<int>(bins),
                                   counts.data_ptr<int>(), static_cast<int>(blocks_per_sm), static_cast<int>(copies),
                                   at::cuda::getCurrentCUDAStream());
  TORCH_CHECK(err == 0, "histogram_launch: ", cudaGetErrorString(static_cast<cudaError_t>(err)));
  return counts;
}
"""
BLOCKS_PER_SM = 2
COPIES = 16
_ext = None


def _module():
    global _ext
    if _ext is None:
        from torch.utils.cpp_extension import load_inline

        _ext = load_inline(name="histogram_expert", cpp_sources=_BIND, cuda_sources=_SRC.read_text(),
                           functions=["histogram"], extra_cuda_cflags=["-O3", "-std=c++17"])
    return _ext


def run(x: torch.Tensor, bins: int) -> torch.Tensor:
    """int32 counts of each value of x (uint8 or int32, values in [0, bins))."""
    return _module().histogram(x, bins, BLOCKS_PER_SM, COPIES)
