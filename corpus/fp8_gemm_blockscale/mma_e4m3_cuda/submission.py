"""mma.sync m16n8k32 e4m3 tensor-core GEMM with the block scales applied to each 128-K partial."""

from __future__ import annotations

from pathlib import Path

import torch

_CPP = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

extern "C" int blockscaled_mma_launch(const void*, const void*, const void*, const void*, void*, int, int, int, cudaStream_t);

torch::Tensor fp8_bs(torch::Tensor a, torch::Tensor sa, torch::Tensor b, torch::Tensor sb) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda() && sa.is_cuda() && sb.is_cuda(), "CUDA tensors expected");
    TORCH_CHECK(a.is_contiguous() && b.is_contiguous() && sa.is_contiguous() && sb.is_contiguous(), "contiguous tensors expected");
    const int M = a.size(0), K = a.size(1), N = b.size(0);
    auto c = torch::empty({M, N}, a.options().dtype(at::kBFloat16));
    int err = blockscaled_mma_launch(a.data_ptr(), sa.data_ptr(), b.data_ptr(), sb.data_ptr(), c.data_ptr(), M, N, K,
                                  at::cuda::getCurrentCUDAStream(a.device().index()).stream());
    TORCH_CHECK(err == 0, "launch failed: ", cudaGetErrorString(static_cast<cudaError_t>(err)));
    return c;
}
"""

_mod = None


def _ext():
    global _mod
    if _mod is None:
        from torch.utils.cpp_extension import load_inline

        _mod = load_inline(name="d2k_fp8_bs_mma_e4m3_cuda", cpp_sources=_CPP,
                           cuda_sources=(Path(__file__).parent / "kernel.cu").read_text(),
                           functions=["fp8_bs"], extra_cuda_cflags=["-O3", "-arch=sm_90"])
    return _mod


def run(a, a_scale, b, b_scale):
    return _ext().fp8_bs(a, a_scale, b, b_scale)
