"""PyTorch reference for the `rmsnorm_residual` task: h = x + residual; y = rmsnorm(h) * weight.

The reference is the unfused PyTorch a model would run: one elementwise add that materialises h in
bf16, then ``F.rms_norm`` over h (fp32 statistics, one rounding to bf16). Both tensors are returned
as ``(y, h)``: h is the updated residual stream that the next block adds to.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from d2k_spec.sampling import generator, sample, torch_dtype
from d2k_spec.task import Distribution, Workload

EPS = 1e-6  # fixed by the task statement (the usual RMSNorm epsilon of LLaMA-style models)

# The residual stream is wider than the block output it receives, and the weight is not all ones:
# with these, (x, x) passthrough, zeros and constants all miss by a relative L2 error of ~0.5 or more.
RESIDUAL_DIST = Distribution(kind="normal", mean=0.0, std=3.0)
WEIGHT_DIST = Distribution(kind="normal", mean=1.0, std=0.5)


def reference(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(y, h) for x, residual [M, N] and weight [N]."""
    h = x + residual
    y = F.rms_norm(h, (h.shape[-1],), weight, EPS)
    return y, h


def make_inputs(workload: Workload, seed: int, device: str | torch.device) -> tuple[torch.Tensor, ...]:
    """(x, residual, weight); x follows the workload's distribution, the other two fixed ones."""
    m, n = int(workload.params["M"]), int(workload.params["N"])
    dtype = torch_dtype(str(workload.params["dtype"]))
    gen = generator(seed, device)
    x = sample((m, n), dtype, workload.distribution, gen, device)
    residual = sample((m, n), dtype, RESIDUAL_DIST, gen, device)
    weight = sample((n,), dtype, WEIGHT_DIST, gen, device)
    return x, residual, weight


def flops(params: dict) -> float:
    """5 per element: the residual add, square and accumulate (2), scale by 1/rms, times weight.
    The per-row mean, epsilon and rsqrt are negligible."""
    return 5.0 * params["M"] * params["N"]


def bytes_moved(params: dict) -> float:
    """Fewest DRAM bytes: x and residual read once, weight once, y and h written once."""
    m, n = params["M"], params["N"]
    size = torch.empty((), dtype=torch_dtype(str(params["dtype"]))).element_size()
    return float((4 * m * n + n) * size)
