"""Control: an honest, correct submission (must be ok)."""
import torch

def _softmax(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def run(x):
    return _softmax(x)
