"""PyTorch reference for the `histogram` task: counts of each bin value in a vector.

``torch.bincount(x, minlength=bins)`` (ATen's shared-memory histogram kernel on the GPU), returned
as int32 counts. The skewed workload draws bins from a Zipf law (``make_inputs``), so a few bins
hold most of the counts and the atomics on them contend.
"""

from __future__ import annotations

import torch

from d2k_spec.sampling import generator, sample, torch_dtype
from d2k_spec.task import Workload


def reference(x: torch.Tensor, bins: int) -> torch.Tensor:
    return torch.bincount(x, minlength=bins).to(torch.int32)


def zipf_bins(n: int, bins: int, exponent: float, gen: torch.Generator, device) -> torch.Tensor:
    """``n`` bin indices in [0, bins): rank r (1-based) has probability ~ r^-exponent, and ranks
    are mapped to bins by a random permutation (so the hot bins differ from seed to seed)."""
    ranks = torch.arange(1, bins + 1, dtype=torch.float64, device=device)
    cdf = torch.cumsum(ranks.pow(-exponent), 0)
    cdf = (cdf / cdf[-1]).to(torch.float32)
    u = torch.rand(n, generator=gen, device=device, dtype=torch.float32)
    idx = torch.searchsorted(cdf, u).clamp_(max=bins - 1)
    perm = torch.randperm(bins, generator=gen, device=device)
    return perm[idx]


def make_inputs(workload: Workload, seed: int, device: str | torch.device) -> tuple[torch.Tensor, int]:
    """x [N] of the workload's dtype with values in [0, bins), and the bin count. Uniform workloads
    draw from their ``randint`` distribution; a workload with a ``zipf`` parameter draws Zipf bins."""
    p = workload.params
    n, bins, dtype = int(p["N"]), int(p["bins"]), str(p["dtype"])
    gen = generator(seed, device)
    if gen is None or "zipf" not in p:
        x = sample((n,), dtype, workload.distribution, gen, device)
    else:
        x = zipf_bins(n, bins, float(p["zipf"]), gen, device).to(torch_dtype(dtype))
    return x, bins


def flops(params: dict) -> float:
    """One count per element."""
    return float(int(params["N"]))


def bytes_moved(params: dict) -> float:
    """Fewest DRAM bytes: x read once; the int32 counts written once."""
    size = torch.empty((), dtype=torch_dtype(str(params["dtype"]))).element_size()
    return float(int(params["N"]) * size + 4 * int(params["bins"]))
