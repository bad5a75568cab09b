"""Shared-memory tiled CUDA GEMM (32x32 tiles, one output per thread), bound with load_inline.

The kernel is plain CUDA in kernel.cu; the few lines of C++ below take tensors, check them,
allocate C and call the extern "C" launcher on the current stream. Compiled on first use.
"""

from __future__ import annotations

from pathlib import Path

import torch

_NAME = "d2k_gemm_bf16_smem_cuda"
_LAUNCHER = "d2k_gemm_smem_launch"

_CPP = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

extern "C" int LAUNCHER(const void* a, const void* b, void* c, int M, int N, int K, int dtype, cudaStream_t stream);

torch::Tensor gemm(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda(), "a and b must be CUDA tensors");
    TORCH_CHECK(a.device() == b.device(), "a and b must be on the same device");
    TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(1), "expected a [M, K] and b [N, K]");
    TORCH_CHECK(a.scalar_type() == b.scalar_type(), "a and b must have the same dtype");
    TORCH_CHECK(a.is_contiguous() && b.is_contiguous(), "a and b must be contiguous");
    int dtype;
    if (a.scalar_type() == at::kBFloat16) dtype = 0;
    else if (a.scalar_type() == at::kHalf) dtype = 1;
    else TORCH_CHECK(false, "unsupported dtype ", a.scalar_type());
    const int64_t M = a.size(0), K = a.size(1), N = b.size(0);
    TORCH_CHECK(M < (1LL << 31) && N < (1LL << 31) && K < (1LL << 31), "sizes must fit in int32");
    auto c = torch::empty({M, N}, a.options());
    const int err = LAUNCHER(a.data_ptr(), b.data_ptr(), c.data_ptr(), (int)M, (int)N, (int)K, dtype,
                             at::cuda::getCurrentCUDAStream(a.device().index()).stream());
    TORCH_CHECK(err == 0, "kernel launch failed: ", cudaGetErrorString(static_cast<cudaError_t>(err)));
    return c;
}
""".replace("LAUNCHER", _LAUNCHER)

_module = None


def _load():
    """Compile kernel.cu + the wrapper once per process (torch caches the build on disk)."""
    global _module
    if _module is None:
        from torch.utils.cpp_extension import load_inline

        _module = load_inline(
            name=_NAME,
            cpp_sources=_CPP,
            cuda_sources=(Path(__file__).parent / "kernel.cu").read_text(),
            functions=["gemm"],
            extra_cuda_cflags=["-O3"],
        )
    return _module


def run(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """C = A @ B^T (bf16 or fp16, fp32 accumulation)."""
    return _load().gemm(a, b)
