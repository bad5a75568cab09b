"""Fault: a CUDA kernel that writes through a wild pointer (illegal memory access). On a CPU-only
machine it is skipped (CUDA C++)."""
import torch
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void wild(float* y) { y[threadIdx.x + (1ull << 40)] = 1.0f; }
torch::Tensor bad(torch::Tensor x) {
    auto y = torch::empty_like(x);
    wild<<<1, 32, 0, at::cuda::getCurrentCUDAStream()>>>(y.data_ptr<float>());
    return y;
}
"""
_ext = load_inline("adv_illegal_access", cpp_sources="torch::Tensor bad(torch::Tensor x);", cuda_sources=CUDA, functions=["bad"])


def run(x):
    return _ext.bad(x)
