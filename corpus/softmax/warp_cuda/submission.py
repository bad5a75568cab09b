"""Softmax submission: binds kernel.cu (plain CUDA, see its header comment) with load_inline.

The extension is built on the first run() call, so importing this module needs no GPU.
"""

from __future__ import annotations

from pathlib import Path

import torch

_CPP = r'''
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>
#include <climits>

extern "C" int softmax_warp_launch(const void* x, void* y, int M, int N, int dtype, cudaStream_t stream);

torch::Tensor softmax_fwd(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
  TORCH_CHECK(x.dim() == 2, "x must be 2-D [M, N]");
  TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
  TORCH_CHECK(x.size(0) <= INT_MAX && x.size(1) <= INT_MAX, "dimensions must fit in int");
  int dtype;
  if (x.scalar_type() == at::kFloat) {
    dtype = 0;
  } else if (x.scalar_type() == at::kBFloat16) {
    dtype = 1;
  } else {
    TORCH_CHECK(false, "unsupported dtype ", x.scalar_type(), " (float32 or bfloat16)");
  }
  const at::cuda::OptionalCUDAGuard guard(x.device());
  auto y = torch::empty_like(x);
  const int err = softmax_warp_launch(x.data_ptr(), y.data_ptr(), static_cast<int>(x.size(0)),
                                      static_cast<int>(x.size(1)), dtype, at::cuda::getCurrentCUDAStream());
  TORCH_CHECK(err == 0, "softmax kernel launch failed: ", cudaGetErrorString(static_cast<cudaError_t>(err)));
  return y;
}
'''

_module = None


def _extension():
    global _module
    if _module is None:
        from torch.utils.cpp_extension import load_inline

        _module = load_inline(
            name="d2k_softmax_warp_cuda",
            cpp_sources=_CPP,
            cuda_sources=(Path(__file__).parent / "kernel.cu").read_text(),
            functions=["softmax_fwd"],
            extra_cuda_cflags=["-O3"],
        )
    return _module


def run(x: torch.Tensor) -> torch.Tensor:
    return _extension().softmax_fwd(x.contiguous())
