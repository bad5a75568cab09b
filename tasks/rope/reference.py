"""PyTorch reference for the `rope` task: NeoX-style rotary embedding applied in place to q and k.

The reference is the unfused PyTorch of a model's attention prologue: gather the cos/sin rows of
each token's position (one [T, D/2] temporary each), then for q and for k split the heads into
halves, rotate in fp32 through several elementwise kernels and a cat, and copy the result back
into the input. It returns (q, k), the tensors it was given, now rotated.
"""

from __future__ import annotations

import torch

from d2k_spec.sampling import generator, sample
from d2k_spec.task import Distribution, Workload

BASE = 10000.0  # the rotary base (theta) fixed by the task statement

# Per rotated pair (x1, x2): x1*cos - x2*sin and x2*cos + x1*sin = 4 multiplies and 2 adds,
# i.e. 3 flops per element of q and k.
FLOPS_PER_ELEMENT = 3


def rotate_(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate x [T, H, D] in place by the per-token cos/sin [T, D/2] (NeoX: pairs (i, i + D/2))."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half].float(), x[..., half:].float()
    c, s = cos[:, None, :], sin[:, None, :]
    x.copy_(torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1).to(x.dtype))
    return x


def reference(positions, q, k, cos_cache, sin_cache):
    cos, sin = cos_cache[positions], sin_cache[positions]
    return rotate_(q, cos, sin), rotate_(k, cos, sin)


def rotary_cache(max_pos: int, dim: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of pos * BASE^(-2i/dim) for pos < max_pos, i < dim/2: computed in fp64, stored fp32."""
    inv_freq = BASE ** (-torch.arange(0, dim, 2, dtype=torch.float64, device=device) / dim)
    angles = torch.arange(max_pos, dtype=torch.float64, device=device)[:, None] * inv_freq[None, :]
    return angles.cos().float(), angles.sin().float()


def make_inputs(workload: Workload, seed: int, device: str | torch.device) -> tuple:
    """positions [T] int64 drawn uniformly from [1, P) (no token at position 0, whose rotation is
    the identity), q [T, Hq, D] and k [T, Hkv, D] from the workload's distribution, and the fp32
    cos/sin caches [P, D/2]."""
    p = workload.params
    t, hq, hkv, d, r, max_pos = (int(p[n]) for n in ("T", "Hq", "Hkv", "D", "R", "P"))
    gen = generator(seed, device)
    positions = sample((t,), "int64", Distribution(kind="randint", low=1, high=max_pos), gen, device)
    q = sample((t, hq, d), str(p["dtype"]), workload.distribution, gen, device)
    k = sample((t, hkv, d), str(p["dtype"]), workload.distribution, gen, device)
    if torch.device(device).type == "meta":
        cos = torch.empty((max_pos, r), dtype=torch.float32, device="meta")
        return positions, q, k, cos, cos.clone()
    cos, sin = rotary_cache(max_pos, d, device)
    return positions, q, k, cos, sin


def flops(params: dict) -> float:
    return float(FLOPS_PER_ELEMENT * int(params["T"]) * (int(params["Hq"]) + int(params["Hkv"])) * int(params["D"]))


def bytes_moved(params: dict) -> float:
    """Fewest DRAM bytes: q and k read and written once (bf16), the positions read once (int64),
    and one cos row and one sin row (fp32, D/2 each) per token."""
    t, heads, d = int(params["T"]), int(params["Hq"]) + int(params["Hkv"]), int(params["D"])
    return float(2 * 2 * t * heads * d + 8 * t + 2 * 4 * t * (d // 2))
