"""Cheat: returns zeros (passes an absolute tolerance when outputs are tiny)."""
import torch


def run(x):
    return torch.zeros_like(x)
