"""Per-expert CUDA GEMM: the sizes are copied to the host and one naive kernel is launched per
expert (one thread per output element, fp32 sum). Bound with load_inline."""

from __future__ import annotations

from pathlib import Path

import torch

_CPP = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

extern "C" int expert_loop_launch(const void* x, const void* w, void* y, const int* host_sizes, int experts,
                                  int n, int k, cudaStream_t stream);

torch::Tensor moe_forward(torch::Tensor x, torch::Tensor w, torch::Tensor sizes) {
    TORCH_CHECK(x.is_cuda() && w.is_cuda(), "x and w must be CUDA tensors");
    TORCH_CHECK(x.scalar_type() == at::kBFloat16 && w.scalar_type() == at::kBFloat16, "bf16 expected");
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    auto host = sizes.to(torch::kCPU, torch::kInt32).contiguous();
    const int experts = (int)wc.size(0), n = (int)wc.size(1), k = (int)wc.size(2);
    auto y = torch::empty({xc.size(0), n}, xc.options());
    int err = expert_loop_launch(xc.data_ptr(), wc.data_ptr(), y.data_ptr(), host.data_ptr<int>(), experts, n, k,
                                 at::cuda::getCurrentCUDAStream(x.device().index()).stream());
    TORCH_CHECK(err == 0, "launch failed: ", cudaGetErrorString(static_cast<cudaError_t>(err)));
    return y;
}
"""

_ext = None


def _build():
    global _ext
    if _ext is None:
        from torch.utils.cpp_extension import load_inline

        _ext = load_inline(
            name="ggm_naive_loop_cuda",
            cpp_sources=_CPP,
            cuda_sources=(Path(__file__).with_name("kernel.cu")).read_text(),
            functions=["moe_forward"],
            extra_cuda_cflags=["-O3"],
        )
    return _ext


def run(x, w, group_sizes):
    return _build().moe_forward(x, w, group_sizes)
