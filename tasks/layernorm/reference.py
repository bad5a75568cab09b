"""PyTorch reference for the `layernorm` task: y = (x - mean) / sqrt(var + eps) * weight + bias.

The reference is the baseline that speedups are measured against, so it is the library call a user
would write: ``F.layer_norm`` over the last dimension, which on CUDA computes its statistics in fp32
and rounds the output to the input dtype once.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from d2k_spec.sampling import generator, sample, torch_dtype
from d2k_spec.task import Distribution, Workload

EPS = 1e-5  # fixed by the task statement; not an input, so every submission uses the same value

# Affine parameters are drawn independently of the workload's x distribution: a non-trivial weight
# and bias make an input-passthrough or "normalize only" output fail the tolerance.
WEIGHT_DIST = Distribution(kind="normal", mean=1.0, std=0.5)
BIAS_DIST = Distribution(kind="normal", mean=0.0, std=0.5)


def reference(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """LayerNorm of each row of ``x`` [M, N] with per-column ``weight`` and ``bias`` [N]."""
    return F.layer_norm(x, (x.shape[-1],), weight, bias, EPS)


def make_inputs(workload: Workload, seed: int, device: str | torch.device) -> tuple[torch.Tensor, ...]:
    """(x, weight, bias) for one workload and seed; x follows the workload's distribution."""
    m, n = int(workload.params["M"]), int(workload.params["N"])
    dtype = torch_dtype(str(workload.params["dtype"]))
    gen = generator(seed, device)
    x = sample((m, n), dtype, workload.distribution, gen, device)
    weight = sample((n,), dtype, WEIGHT_DIST, gen, device)
    bias = sample((n,), dtype, BIAS_DIST, gen, device)
    return x, weight, bias


def flops(params: dict) -> float:
    """8 floating-point operations per element: sum (1), centre (1), square-accumulate (2),
    scale by rstd (1), then weight and bias (2), plus the centring reused by the output (1).
    Per-row work (divide, rsqrt) is negligible."""
    return 8.0 * params["M"] * params["N"]


def bytes_moved(params: dict) -> float:
    """Fewest DRAM bytes: x read once, weight and bias read once, y written once."""
    m, n = params["M"], params["N"]
    size = torch.empty((), dtype=torch_dtype(str(params["dtype"]))).element_size()
    return float((2 * m * n + 2 * n) * size)
