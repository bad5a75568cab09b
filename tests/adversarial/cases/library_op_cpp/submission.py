"""Cheat (calls the forbidden library op where a Python-level recorder cannot see it): a C++
extension (host code only, so it builds on a CPU too) that calls ATen's softmax directly."""
import torch
from torch.utils.cpp_extension import load_inline

CPP = r"""
#include <torch/extension.h>
torch::Tensor softmax_rows(torch::Tensor x) { return at::_softmax(x, -1, false); }
"""

_ext = load_inline("adv_library_op_cpp", cpp_sources=CPP, functions=["softmax_rows"], verbose=False)


def run(x):
    return _ext.softmax_rows(x)
