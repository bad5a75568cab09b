"""Cheat: calls the library op the task forbids (torch.softmax under another spelling)."""
import torch


def run(x):
    return torch.ops.aten._softmax(x, -1, False)
