"""Single-launch grouped GEMM in CUDA: persistent blocks (4 per SM) walk the global tile index and
find each tile's expert from the sizes in device memory; wmma bf16 tensor cores, fp32 accumulators."""

from __future__ import annotations

from pathlib import Path

import torch

_WRAP = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

extern "C" int grouped_wmma_launch(const void* x, const void* w, void* y, const int* sizes, int experts, int n,
                                   int k, cudaStream_t stream);

torch::Tensor grouped(torch::Tensor x, torch::Tensor w, torch::Tensor sizes) {
    TORCH_CHECK(x.is_cuda() && w.is_cuda() && sizes.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(x.scalar_type() == at::kBFloat16 && w.scalar_type() == at::kBFloat16, "bf16 expected");
    TORCH_CHECK(sizes.scalar_type() == at::kInt, "int32 sizes expected");
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    auto sc = sizes.contiguous();
    auto y = torch::empty({xc.size(0), wc.size(1)}, xc.options());
    int rc = grouped_wmma_launch(xc.data_ptr(), wc.data_ptr(), y.data_ptr(), sc.data_ptr<int>(), (int)wc.size(0),
                                 (int)wc.size(1), (int)wc.size(2), at::cuda::getCurrentCUDAStream(x.device().index()).stream());
    TORCH_CHECK(rc == 0, "grouped_wmma_launch: ", cudaGetErrorString(static_cast<cudaError_t>(rc)));
    return y;
}
"""

_mod = None


def run(x, w, group_sizes):
    global _mod
    if _mod is None:
        from torch.utils.cpp_extension import load_inline

        _mod = load_inline(name="ggm_persistent_wmma", cpp_sources=_WRAP,
                           cuda_sources=(Path(__file__).parent / "kernel.cu").read_text(),
                           functions=["grouped"], extra_cuda_cflags=["-O3"])
    return _mod.grouped(x, w, group_sizes)
