"""PyTorch reference for the `swiglu` task: out = silu(x[:, :D]) * x[:, D:].

The reference is the unfused PyTorch of a gated MLP: ``F.silu`` of the gate half (one kernel, a
[M, D] intermediate in bf16), then a multiply by the up half (a second kernel).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from d2k_spec.sampling import generator, sample, torch_dtype
from d2k_spec.task import Workload

# Per output element: the sigmoid (negate, exp, add, reciprocal: 4 counting exp as one), the
# multiply by the gate value and the multiply by the up value.
FLOPS_PER_ELEMENT = 6


def reference(x: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1] // 2
    return F.silu(x[:, :d]) * x[:, d:]


def make_inputs(workload: Workload, seed: int, device: str | torch.device) -> tuple[torch.Tensor]:
    """One contiguous [M, 2D] tensor: gate columns first, then up columns."""
    p = workload.params
    x = sample((int(p["M"]), int(p["N"])), str(p["dtype"]), workload.distribution, generator(seed, device), device)
    return (x,)


def flops(params: dict) -> float:
    return float(FLOPS_PER_ELEMENT * int(params["M"]) * int(params["D"]))


def bytes_moved(params: dict) -> float:
    """Fewest DRAM bytes: x ([M, 2D]) read once, out ([M, D]) written once."""
    size = torch.empty((), dtype=torch_dtype(str(params["dtype"]))).element_size()
    return float(3 * int(params["M"]) * int(params["D"]) * size)
