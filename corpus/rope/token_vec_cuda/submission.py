"""In-place NeoX RoPE on q and k in one CUDA launch per call (kernel.cu), bound through load_inline."""

from __future__ import annotations

from pathlib import Path

import torch

_KERNEL = Path(__file__).resolve().parent / "kernel.cu"
_CPP = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

extern "C" int rope_qk_inplace(void* q, void* k, const void* pos, const void* cos_tab, const void* sin_tab,
                               int64_t tokens, int hq, int hkv, int half, cudaStream_t stream);

void rope_qk(at::Tensor q, at::Tensor k, const at::Tensor& pos, const at::Tensor& cos_tab, const at::Tensor& sin_tab) {
  TORCH_CHECK(q.is_cuda() && q.is_contiguous() && k.is_contiguous() && q.dim() == 3 && k.dim() == 3, "q, k: contiguous [T, H, D]");
  TORCH_CHECK(q.scalar_type() == at::kBFloat16 && k.scalar_type() == at::kBFloat16, "q, k: bfloat16");
  TORCH_CHECK(cos_tab.is_contiguous() && sin_tab.is_contiguous() && cos_tab.scalar_type() == at::kFloat, "caches: contiguous fp32");
  const at::cuda::CUDAGuard guard(q.device());
  const int rc = rope_qk_inplace(q.data_ptr(), k.data_ptr(), pos.data_ptr(), cos_tab.data_ptr(), sin_tab.data_ptr(),
                                 q.size(0), (int)q.size(1), (int)k.size(1), (int)(q.size(2) / 2), at::cuda::getCurrentCUDAStream());
  TORCH_CHECK(rc == 0, "rope_qk_inplace: ", cudaGetErrorString(static_cast<cudaError_t>(rc)));
}
"""
_mod = None


def run(positions, q, k, cos_cache, sin_cache):
    global _mod
    if _mod is None:
        from torch.utils.cpp_extension import load_inline

        _mod = load_inline(name="rope_token_vec_cuda", cpp_sources=_CPP, cuda_sources=_KERNEL.read_text(),
                           functions=["rope_qk"], extra_cuda_cflags=["-O3"])
    _mod.rope_qk(q, k, positions, cos_cache, sin_cache)
    return q, k
