"""Warp per output column: 128-bit packed-weight loads, dequantised in registers, warp-shuffle sum."""

from __future__ import annotations

from pathlib import Path

import torch

_CPP = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

extern "C" int q4_col_warp_launch(const void*, const void*, const void*, const void*, void*, int, int, int, cudaStream_t);

torch::Tensor q4_gemv(torch::Tensor x, torch::Tensor qw, torch::Tensor s, torch::Tensor z) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && qw.is_contiguous(), "contiguous CUDA tensors expected");
    const int M = x.size(0), K = x.size(1), N = qw.size(0);
    auto y = torch::empty({M, N}, x.options());
    int err = q4_col_warp_launch(x.data_ptr(), qw.data_ptr(), s.data_ptr(), z.data_ptr(), y.data_ptr(), M, N, K,
                              at::cuda::getCurrentCUDAStream(x.device().index()).stream());
    TORCH_CHECK(err == 0, "launch failed: ", cudaGetErrorString(static_cast<cudaError_t>(err)));
    return y;
}
"""

_mod = None


def _get():
    global _mod
    if _mod is None:
        from torch.utils.cpp_extension import load_inline

        _mod = load_inline(name="d2k_w4a16_warp_gemv_cuda", cpp_sources=_CPP,
                           cuda_sources=(Path(__file__).parent / "kernel.cu").read_text(),
                           functions=["q4_gemv"], extra_cuda_cflags=["-O3"])
    return _mod


def run(x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor) -> torch.Tensor:
    return _get().q4_gemv(x, qweight, scales, zeros)
