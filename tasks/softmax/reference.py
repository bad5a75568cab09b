"""Row softmax: the PyTorch reference, workload inputs, and the FLOP/byte model.

The reference is what speedups are measured against (``torch.softmax``, which accumulates in fp32
for bf16 input), so it is kept to the one library call.
"""

from __future__ import annotations

import torch

from d2k_spec.sampling import generator, sample
from d2k_spec.task import Workload

# Per element: a max compare, a subtraction, an exponential, an add into the sum and the final
# scale. Counting exp as one operation keeps the number comparable across implementations.
FLOPS_PER_ELEMENT = 5


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


def make_inputs(workload: Workload, seed: int, device: str | torch.device) -> tuple[torch.Tensor]:
    """One contiguous [M, N] tensor drawn from the workload's distribution, on ``device``."""
    p = workload.params
    x = sample((int(p["M"]), int(p["N"])), str(p["dtype"]), workload.distribution, generator(seed, device), device)
    return (x,)


def _itemsize(params: dict) -> int:
    return torch.empty((), dtype=getattr(torch, str(params["dtype"]))).element_size()


def flops(params: dict) -> float:
    return float(FLOPS_PER_ELEMENT * int(params["M"]) * int(params["N"]))


def bytes_moved(params: dict) -> float:
    """Fewest DRAM bytes: x read once, y written once."""
    return float(2 * int(params["M"]) * int(params["N"]) * _itemsize(params))
