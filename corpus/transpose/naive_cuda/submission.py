import os

import torch
from torch.utils.cpp_extension import load_inline

WRAP = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

extern "C" int transpose_naive_launch(const void* src, void* dst, int m, int n, int elem_bytes, cudaStream_t stream);

torch::Tensor flip(torch::Tensor a, torch::Tensor b) {
    int rc = transpose_naive_launch(a.data_ptr(), b.data_ptr(), a.size(0), a.size(1), a.element_size(),
                                    at::cuda::getCurrentCUDAStream());
    TORCH_CHECK(rc == 0, "transpose_naive_launch failed: ", rc);
    return b;
}
"""

lib = None


def run(x):
    global lib
    if lib is None:
        src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel.cu")).read()
        lib = load_inline("transpose_naive_cuda", WRAP, cuda_sources=src, functions=["flip"], extra_cuda_cflags=["-O3"])
    assert x.is_contiguous() and x.dim() == 2 and (x.shape[0] + 7) // 8 <= 65535
    out = torch.empty((x.shape[1], x.shape[0]), dtype=x.dtype, device=x.device)
    if x.numel() == 0:
        return out
    return lib.flip(x, out)
