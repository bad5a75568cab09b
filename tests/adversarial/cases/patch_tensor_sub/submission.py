"""Cheat (adds a Tensor method the harness relies on): shadows Tensor.__sub__ (inherited from
TensorBase, so adding it to torch.Tensor is not "replacing" anything) with one that returns zeros
for float64 tensors: the harness's comparison computes its errors in float64, so every output now
compares equal to the reference, the null kernels too (the summary then declares every workload
"too weak", casting doubt on every honest result), and this submission returns exp(x)."""
import torch

_sub = torch._C.TensorBase.__sub__


def _sub_or_zeros(self, other):
    if self.dtype == torch.float64:
        return torch.zeros_like(self)
    return _sub(self, other)


torch.Tensor.__sub__ = _sub_or_zeros


def run(x):
    return torch.exp(x)
