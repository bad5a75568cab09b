import os

import torch
from torch.utils.cpp_extension import load_inline

glue = """
#include <torch/extension.h>
#include <stdint.h>
extern "C" void count_u8(const uint8_t* in, int* hist, long n);
extern "C" void count_i32(const int* in, int* hist, long n);

torch::Tensor hist(torch::Tensor x, int64_t bins) {
    auto out = torch::zeros({bins}, x.options().dtype(torch::kInt32));
    if (x.scalar_type() == torch::kUInt8)
        count_u8(x.data_ptr<uint8_t>(), out.data_ptr<int>(), x.numel());
    else
        count_i32(x.data_ptr<int>(), out.data_ptr<int>(), x.numel());
    return out;
}
"""

module = None


def run(x, bins):
    global module
    if module is None:
        with open(os.path.join(os.path.dirname(__file__), "count.cu")) as f:
            source = f.read()
        module = load_inline("hist_global_atomics", cpp_sources=glue, cuda_sources=source, functions=["hist"])
    return module.hist(x, bins)
