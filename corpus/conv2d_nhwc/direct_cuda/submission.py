"""Direct 3x3 convolution in CUDA: one thread per output element, bound with load_inline."""

import pathlib

import torch
import torch.utils.cpp_extension as ext

SRC = pathlib.Path(__file__).with_name("kernel.cu")

GLUE = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

extern "C" int conv3x3_direct_launch(const void* x, const void* w, void* y, int N, int H, int W, int C, int K, cudaStream_t stream);

int direct(torch::Tensor x, torch::Tensor w, torch::Tensor y) {
    return conv3x3_direct_launch(x.data_ptr(), w.data_ptr(), y.data_ptr(), x.size(0), x.size(1), x.size(2), x.size(3), w.size(0),
                                 at::cuda::getCurrentCUDAStream().stream());
}
"""

state = {}


def run(x, w):
    if "lib" not in state:
        state["lib"] = ext.load_inline("d2k_conv2d_direct_cuda", GLUE, cuda_sources=SRC.read_text(), functions=["direct"],
                                       extra_cuda_cflags=["-O3"])
    n, h, wd, _ = x.shape
    y = torch.empty((n, h, wd, w.shape[0]), dtype=x.dtype, device=x.device)
    rc = state["lib"].direct(x.contiguous(), w.contiguous(), y)
    if rc:
        raise RuntimeError(f"conv3x3_direct_launch failed with CUDA error {rc}")
    return y
