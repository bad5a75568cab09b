"""Mean cross-entropy: persistent CUDA kernels from kernel.cu, compiled once with load_inline."""

from pathlib import Path

import torch
from torch.utils.cpp_extension import load_inline

_DIR = Path(__file__).resolve().parent
_GLUE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

extern "C" int xent_mean(const void* logits, const int64_t* target, float* loss, int rows, int cols,
                            cudaStream_t stream);

at::Tensor mean_loss(const at::Tensor& logits, const at::Tensor& target) {
  TORCH_CHECK(logits.is_cuda() && logits.dim() == 2 && logits.is_contiguous(), "logits: contiguous 2-D CUDA tensor");
  TORCH_CHECK(logits.scalar_type() == torch::kBFloat16, "logits: bfloat16");
  TORCH_CHECK(target.scalar_type() == torch::kInt64 && target.is_contiguous(), "target: contiguous int64");
  const c10::cuda::CUDAGuard guard(logits.device());
  auto loss = torch::empty({}, logits.options().dtype(torch::kFloat32));
  int rc = xent_mean(logits.data_ptr(), target.data_ptr<int64_t>(), loss.data_ptr<float>(), (int)logits.size(0),
                        (int)logits.size(1), at::cuda::getCurrentCUDAStream());
  TORCH_CHECK(rc == 0, "xent kernel: ", cudaGetErrorString(static_cast<cudaError_t>(rc)));
  return loss;
}
"""
_lib = None


def run(logits, target):
    global _lib
    if _lib is None:
        _lib = load_inline(name="xent_vec_persistent", cpp_sources=_GLUE, cuda_sources=(_DIR / "kernel.cu").read_text(),
                           functions=["mean_loss"], extra_cuda_cflags=["-O3"])
    return _lib.mean_loss(logits, target)
