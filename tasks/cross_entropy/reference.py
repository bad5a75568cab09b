"""PyTorch reference for the `cross_entropy` task: the mean cross-entropy loss of bf16 logits.

``F.cross_entropy(logits.float(), target)``: log-softmax of every row in fp32, the negative
log-probability of each row's target, averaged over the rows; a 0-dim fp32 result.

The logits are drawn so that the loss is far from ln(V) (what uniform logits give, and what a lazy
kernel might hard-code) and differs clearly between seeds (``make_inputs``): each seed has its own
temperature (the spread of the logits), its own share of rows whose target logit is boosted (a
confident prediction, with a small loss) and its own boost, "hot" on even seeds and "confident"
on odd ones; every row also has a random offset of up to +-30 (which only a max-subtracted
exponent survives) and a jittered scale.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from d2k_spec.sampling import generator, sample, torch_dtype
from d2k_spec.task import Workload

# Per logit: subtract the max, scale, exponentiate, accumulate (4, counting exp as one); the
# log, the target gather and the mean are per row.
FLOPS_PER_LOGIT = 4
ROW_SHIFT = 30.0


def reference(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.float(), target)


def seed_params(seed: int) -> tuple[float, float, float]:
    """(temperature, share of confident rows, boost in units of the temperature) for ``seed``,
    drawn on the CPU so every device gets the same. Even seeds are "hot" (wide logits, few
    confident rows: the loss lies well above ln V), odd seeds "confident" (narrow logits, many
    rows with a strongly boosted target: well below ln V)."""
    g = torch.Generator().manual_seed(seed * 104729 + 3)
    a, b, c = torch.rand(3, generator=g, dtype=torch.float64).tolist()
    if seed % 2 == 0:
        return 1.6 + 0.9 * a, 0.05 + 0.1 * b, 2.0 + 2.0 * c
    return 0.4 + 0.4 * a, 0.4 + 0.4 * b, 8.0 + 6.0 * c


def make_inputs(workload: Workload, seed: int, device: str | torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """logits [B, V] (the workload's dtype, contiguous) and target [B] (int64, in [0, V))."""
    p = workload.params
    b, v = int(p["B"]), int(p["V"])
    gen = generator(seed, device)
    z = sample((b, v), "float32", workload.distribution, gen, device)
    if gen is None:
        return z.to(torch_dtype(str(p["dtype"]))), torch.empty((b,), dtype=torch.int64, device="meta")
    temp, share, boost = seed_params(seed)
    scale = temp * (0.75 + 0.5 * torch.rand((b, 1), generator=gen, device=device))
    shift = ROW_SHIFT * (2 * torch.rand((b, 1), generator=gen, device=device) - 1)
    target = torch.randint(0, v, (b,), generator=gen, device=device)
    confident = torch.rand((b,), generator=gen, device=device) < share
    z.mul_(scale)
    rows = torch.arange(b, device=device)
    z[rows, target] += confident.float() * boost * scale[:, 0]
    z.add_(shift)
    return z.to(torch_dtype(str(p["dtype"]))), target


def flops(params: dict) -> float:
    return float(FLOPS_PER_LOGIT * int(params["B"]) * int(params["V"]))


def bytes_moved(params: dict) -> float:
    """Fewest DRAM bytes: the logits and the targets read once, the 4-byte loss written once."""
    size = torch.empty((), dtype=torch_dtype(str(params["dtype"]))).element_size()
    return float(int(params["B"]) * int(params["V"]) * size + 8 * int(params["B"]) + 4)
