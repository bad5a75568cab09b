"""Cheat (calls the forbidden op only when no one seems to look): while a TorchFunctionMode is
active (how a Python-level recorder listens) it computes softmax from exp and sum; otherwise it
calls torch.softmax, the library op the task forbids."""
import torch


def run(x):
    if torch._C._is_torch_function_mode_enabled():
        e = torch.exp(x - x.amax(dim=-1, keepdim=True))
        return e / e.sum(dim=-1, keepdim=True)
    return torch.softmax(x, dim=-1)
