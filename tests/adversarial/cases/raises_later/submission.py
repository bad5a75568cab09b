"""Fault: correct at first, then raises during timing (here: from the fifth call on)."""
import torch

def _softmax(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)

_calls = 0


def run(x):
    global _calls
    _calls += 1
    if _calls > 4:
        raise RuntimeError("boom during timing")
    return _softmax(x)
