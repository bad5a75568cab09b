import pathlib

import torch
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>
extern "C" void scan_int(const int* x, int* y, int* sums, int n);
extern "C" void scan_float(const float* x, float* y, float* sums, int n);

torch::Tensor scan(torch::Tensor x) {
    int n = x.numel();
    auto y = torch::empty_like(x);
    auto sums = torch::empty({(n + 1023) / 1024}, x.options());
    if (x.scalar_type() == torch::kInt)
        scan_int(x.data_ptr<int>(), y.data_ptr<int>(), sums.data_ptr<int>(), n);
    else
        scan_float(x.data_ptr<float>(), y.data_ptr<float>(), sums.data_ptr<float>(), n);
    return y;
}
"""

_mod = None


def run(x):
    global _mod
    if _mod is None:
        cuda_src = pathlib.Path(__file__).with_name("scan.cu").read_text()
        _mod = load_inline("prefix_scan_ladder", cpp_sources=cpp_src, cuda_sources=cuda_src, functions=["scan"],
                           extra_cuda_cflags=["-O3"])
    return _mod.scan(x)
