"""SwiGLU forward with a hand-written CUDA kernel (kernel.cu), bound through load_inline."""

from __future__ import annotations

from pathlib import Path

import torch

_SRC = Path(__file__).resolve().parent / "kernel.cu"
_BIND = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

extern "C" int swiglu_forward(const void* x, void* y, int rows, int d, cudaStream_t stream);

at::Tensor swiglu(const at::Tensor& x) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.is_contiguous(), "x: contiguous 2-D CUDA tensor");
  TORCH_CHECK(x.scalar_type() == at::kBFloat16, "x: bfloat16");
  TORCH_CHECK(x.size(1) % 2 == 0, "x: even number of columns");
  TORCH_CHECK(x.size(0) <= 65535, "rows beyond the grid's y limit");
  const at::cuda::CUDAGuard guard(x.device());
  auto y = at::empty({x.size(0), x.size(1) / 2}, x.options());
  const int err = swiglu_forward(x.data_ptr(), y.data_ptr(), (int)x.size(0), (int)(x.size(1) / 2),
                                 at::cuda::getCurrentCUDAStream());
  TORCH_CHECK(err == 0, "swiglu kernel: ", cudaGetErrorString(static_cast<cudaError_t>(err)));
  return y;
}
"""
_ext = None


def run(x: torch.Tensor) -> torch.Tensor:
    global _ext
    if _ext is None:
        from torch.utils.cpp_extension import load_inline

        _ext = load_inline(name="swiglu_vec_cuda", cpp_sources=_BIND, cuda_sources=_SRC.read_text(),
                           functions=["swiglu"], extra_cuda_cflags=["-O3"])
    return _ext.swiglu(x)
