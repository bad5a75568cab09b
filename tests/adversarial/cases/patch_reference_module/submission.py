"""Cheat (slows the reference by patching its module): replaces the reference module's `torch`
global with a look-alike whose softmax computes everything twice, so the reference takes twice
as long and the submission's speedup doubles. The look-alike is not callable, so a snapshot of the
module's callables does not notice. The softmax itself is honest."""
import sys

import torch


class _SlowTorch:
    def __getattr__(self, name):
        return getattr(torch, name)

    @staticmethod
    def softmax(*args, **kwargs):
        torch.softmax(*args, **kwargs)
        return torch.softmax(*args, **kwargs)


for _name in ("d2k_reference",):
    _mod = sys.modules.get(_name)
    if _mod is not None and getattr(_mod, "torch", None) is torch:
        _mod.torch = _SlowTorch()


def run(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)
