"""PyTorch reference for the `prefix_scan` task: the inclusive prefix sum of a vector.

``torch.cumsum(x, 0, dtype=x.dtype)``: on the GPU this is CUB's single-pass scan (decoupled
look-back), one read of x and one write of out. int32 sums are exact; float32 sums are accumulated
in fp32.
"""

from __future__ import annotations

import torch

from d2k_spec.sampling import generator, sample, torch_dtype
from d2k_spec.task import Workload


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.cumsum(x, 0, dtype=x.dtype)


def make_inputs(workload: Workload, seed: int, device: str | torch.device) -> tuple[torch.Tensor]:
    """One contiguous vector [N] of the workload's dtype, drawn from its distribution (int32
    workloads draw integers with ``randint``; their running sums stay far inside int32)."""
    p = workload.params
    return (sample((int(p["N"]),), str(p["dtype"]), workload.distribution, generator(seed, device), device),)


def flops(params: dict) -> float:
    """One addition per element."""
    return float(int(params["N"]))


def bytes_moved(params: dict) -> float:
    """Fewest DRAM bytes: x read once, out (as many elements) written once."""
    size = torch.empty((), dtype=torch_dtype(str(params["dtype"]))).element_size()
    return float(2 * int(params["N"]) * size)
