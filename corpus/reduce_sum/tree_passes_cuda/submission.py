from pathlib import Path

import torch
from torch.utils.cpp_extension import load_inline

CPP = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

extern "C" int sum_passes(const void* x, int bf16, float* tmp_a, float* tmp_b, float* result, long long n,
                          cudaStream_t stream);

torch::Tensor reduce(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.dim() == 1);
  const long long n = x.numel();
  const long long first = (n + 255) / 256;
  auto opts = x.options().dtype(torch::kFloat32);
  auto a = torch::empty({first}, opts);
  auto b = torch::empty({(first + 255) / 256 + 1}, opts);
  auto out = torch::empty({}, opts);
  int rc = sum_passes(x.data_ptr(), x.scalar_type() == torch::kBFloat16, a.data_ptr<float>(), b.data_ptr<float>(),
                      out.data_ptr<float>(), n, at::cuda::getCurrentCUDAStream());
  TORCH_CHECK(rc == 0, "sum_passes failed");
  return out;
}
"""

ext = None


def run(x):
    global ext
    if ext is None:
        ext = load_inline("tree_passes_sum", cpp_sources=CPP,
                          cuda_sources=(Path(__file__).parent / "kernel.cu").read_text(), functions=["reduce"])
    return ext.reduce(x)
