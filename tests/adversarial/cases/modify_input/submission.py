"""Cheat: returns a correct result but uses the input as scratch space (clobbers it)."""
import torch

def _softmax(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def run(x):
    y = _softmax(x)
    x.mul_(0.5)
    return y
