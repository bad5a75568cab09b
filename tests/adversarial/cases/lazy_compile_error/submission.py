"""Fault: builds its CUDA extension lazily, at the first call, and the source does not compile.
Importing works, so the error shows only when the kernel is first called; it must be recorded as
``compile_error`` (not a runtime error, and not once per workload with a fresh worker each time).
On a CPU-only machine it is skipped (CUDA C++)."""
import torch
from torch.utils.cpp_extension import load_inline

CUDA = r"""
#include <torch/extension.h>
__global__ void broken(float* y) { y[threadIdx.x] = undeclared_name; }
torch::Tensor bad(torch::Tensor x) { return x; }
"""
_ext = None


def run(x: torch.Tensor) -> torch.Tensor:
    global _ext
    if _ext is None:
        _ext = load_inline("adv_lazy_compile_error", cpp_sources="torch::Tensor bad(torch::Tensor x);", cuda_sources=CUDA, functions=["bad"])
    return _ext.bad(x)
