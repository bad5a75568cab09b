"""PyTorch reference for the `reduce_sum` task: the sum of a vector, accumulated in fp32.

``torch.sum(x, dtype=torch.float32)``: one read of x, a 0-dim fp32 result. The inputs have a
per-seed mean (``make_inputs``), so the true sum moves between seeds by far more than the
tolerance and no hard-coded value passes (the scalar constant null of d2k_profile/nulls.py).
"""

from __future__ import annotations

import torch

from d2k_spec.sampling import generator, sample, torch_dtype
from d2k_spec.task import Workload

# The per-seed mean: |mean| uniform in [MEAN_LO, MEAN_HI] (in units of the distribution's std),
# with a random sign. |sum| is then at least a quarter of sum |x| for a unit normal, so the
# relative rounding error of an fp32 sum stays bounded, and two seeds' sums differ by tens of
# percent.
MEAN_LO, MEAN_HI = 0.25, 1.0


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.sum(x, dtype=torch.float32)


def seed_mean(seed: int, std: float) -> float:
    """The mean added to every element for ``seed`` (drawn from its own generator on the CPU,
    so it is the same on every device)."""
    g = torch.Generator().manual_seed(seed * 7919 + 17)
    u, s = torch.rand(2, generator=g, dtype=torch.float64).tolist()
    return (MEAN_LO + (MEAN_HI - MEAN_LO) * u) * std * (1.0 if s < 0.5 else -1.0)


def spread(dist) -> float:
    """The distribution's scale: the std of a normal (or powerlaw), half the width of a uniform."""
    return (dist.high - dist.low) / 2 if dist.kind == "uniform" else dist.std


def make_inputs(workload: Workload, seed: int, device: str | torch.device) -> tuple[torch.Tensor]:
    """One contiguous vector [N]: the workload's distribution (drawn in fp32) plus the seed's mean,
    then rounded to the workload's dtype."""
    p, dist = workload.params, workload.distribution
    x = sample((int(p["N"]),), "float32", dist, generator(seed, device), device)
    if x.device.type != "meta":
        x.add_(seed_mean(seed, spread(dist)))
    return (x.to(torch_dtype(str(p["dtype"]))),)


def flops(params: dict) -> float:
    """One addition per element."""
    return float(int(params["N"]))


def bytes_moved(params: dict) -> float:
    """Fewest DRAM bytes: x read once; the 4-byte result is written once."""
    size = torch.empty((), dtype=torch_dtype(str(params["dtype"]))).element_size()
    return float(int(params["N"]) * size + 4)
