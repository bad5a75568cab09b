"""PyTorch reference for the `transpose` task: out = x.t().contiguous().

The reference is what a model does: a strided view of x materialised by ATen's copy kernel.
"""

from __future__ import annotations

import torch

from d2k_spec.sampling import generator, sample, torch_dtype
from d2k_spec.task import Workload


def reference(x: torch.Tensor) -> torch.Tensor:
    return x.t().contiguous()


def make_inputs(workload: Workload, seed: int, device: str | torch.device) -> tuple[torch.Tensor]:
    """One contiguous [M, N] tensor of the workload's dtype."""
    p = workload.params
    x = sample((int(p["M"]), int(p["N"])), str(p["dtype"]), workload.distribution, generator(seed, device), device)
    return (x,)


def flops(params: dict) -> float:
    """A transpose computes nothing."""
    return 0.0


def bytes_moved(params: dict) -> float:
    """Fewest DRAM bytes: x read once, out (as many elements) written once."""
    size = torch.empty((), dtype=torch_dtype(str(params["dtype"]))).element_size()
    return float(2 * int(params["M"]) * int(params["N"]) * size)
