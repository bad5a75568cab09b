"""RoPE with a one-thread-per-pair CUDA kernel (kernel.cu), launched once for q and once for k."""

from __future__ import annotations

from pathlib import Path

import torch

_SRC = Path(__file__).resolve().parent / "kernel.cu"
_BIND = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

extern "C" int rope_pairs_launch(void* x, const void* pos, const void* cos_tab, const void* sin_tab,
                                 int64_t tokens, int heads, int half, cudaStream_t stream);

void rope_inplace(at::Tensor x, const at::Tensor& positions, const at::Tensor& cos_cache, const at::Tensor& sin_cache) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 3 && x.is_contiguous() && x.scalar_type() == at::kBFloat16, "x: contiguous bf16 [T, H, D]");
  TORCH_CHECK(positions.scalar_type() == at::kLong && cos_cache.scalar_type() == at::kFloat, "positions int64, caches fp32");
  const at::cuda::CUDAGuard guard(x.device());
  const int err = rope_pairs_launch(x.data_ptr(), positions.data_ptr(), cos_cache.data_ptr(), sin_cache.data_ptr(),
                                    x.size(0), (int)x.size(1), (int)(x.size(2) / 2), at::cuda::getCurrentCUDAStream());
  TORCH_CHECK(err == 0, "rope kernel: ", cudaGetErrorString(static_cast<cudaError_t>(err)));
}
"""
_ext = None


def run(positions, q, k, cos_cache, sin_cache):
    global _ext
    if _ext is None:
        from torch.utils.cpp_extension import load_inline

        _ext = load_inline(name="rope_elem_cuda", cpp_sources=_BIND, cuda_sources=_SRC.read_text(),
                           functions=["rope_inplace"], extra_cuda_cflags=["-O3"])
    _ext.rope_inplace(q, positions, cos_cache, sin_cache)
    _ext.rope_inplace(k, positions, cos_cache, sin_cache)
    return q, k
