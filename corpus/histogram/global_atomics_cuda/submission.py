import torch
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>

template <typename T>
__global__ void count_each(const T* in, int* hist, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&hist[(int)in[i]], 1);
}

torch::Tensor hist(torch::Tensor x, int64_t bins) {
    auto out = torch::zeros({bins}, x.options().dtype(torch::kInt32));
    long n = x.numel();
    int threads = 256;
    long blocks = (n + threads - 1) / threads;
    if (x.scalar_type() == torch::kUInt8)
        count_each<uint8_t><<<blocks, threads>>>(x.data_ptr<uint8_t>(), out.data_ptr<int>(), n);
    else
        count_each<int><<<blocks, threads>>>(x.data_ptr<int>(), out.data_ptr<int>(), n);
    return out;
}
"""

module = None


def run(x, bins):
    global module
    if module is None:
        module = load_inline("hist_global_atomics", cpp_sources="torch::Tensor hist(torch::Tensor x, int64_t bins);",
                             cuda_sources=source, functions=["hist"])
    return module.hist(x, bins)
