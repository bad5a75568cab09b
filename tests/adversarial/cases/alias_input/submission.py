"""Cheat: writes the (correct) result into the input and returns the input itself."""
import torch

def _softmax(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def run(x):
    x.copy_(_softmax(x))
    return x
