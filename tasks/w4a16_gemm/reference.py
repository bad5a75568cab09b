"""PyTorch reference for ``w4a16_gemm``: y = x @ w^T with int4 group-quantised weights.

Packing (the task statement repeats it):
  - ``qweight`` int32 [N, K/8], row-major: element (n, k) of the 4-bit weight matrix is the
    unsigned nibble ``(qweight[n, k // 8] >> (4 * (k % 8))) & 0xF`` (nibble 0, for k % 8 == 0, is
    in the least significant bits; the top nibble makes the int32 negative when >= 8, so shift
    and mask, or reinterpret as uint32).
  - ``scales`` and ``zeros`` fp16 [N, K/128]: one scale and one (fractional, fp16) zero point per
    128 consecutive k of each output row n.
  - w[n, k] = (q[n, k] - zeros[n, k // 128]) * scales[n, k // 128].

The reference materialises w as an fp16 [N, K] tensor with PyTorch ops and multiplies with
``torch.matmul`` (cuBLAS, fp32 accumulation): that is the baseline "dequantise + matmul".
"""

from __future__ import annotations

import math

import torch

from d2k_spec.sampling import generator, sample
from d2k_spec.task import Workload

GROUP = 128
PACK = 8  # nibbles per int32
SCALE_SIGMA = 0.35  # log-normal spread of the group scales
ZERO_STD = 1.5  # spread of the zero points around 8
# E[(q - z)^2] for q uniform on 0..15 and z ~ N(8, ZERO_STD^2): var(q) + (7.5 - 8)^2 + ZERO_STD^2
_SECOND_MOMENT = (256 - 1) / 12 + 0.25 + ZERO_STD**2


def unpack(qweight: torch.Tensor) -> torch.Tensor:
    """int32 [N, K/8] -> int32 [N, K] nibbles in 0..15, in the statement's order."""
    n, kp = qweight.shape
    shifts = torch.arange(0, 32, 4, device=qweight.device, dtype=torch.int32)
    q = (qweight.unsqueeze(-1) >> shifts) & 0xF  # [N, K/8, 8]: [..., j] is k % 8 == j
    return q.reshape(n, kp * PACK)


def pack(q: torch.Tensor) -> torch.Tensor:
    """int [N, K] nibbles in 0..15 -> int32 [N, K/8] (the inverse of :func:`unpack`)."""
    n, k = q.shape
    q = q.to(torch.int64).reshape(n, k // PACK, PACK)
    shifts = torch.arange(0, 32, 4, device=q.device, dtype=torch.int64)
    words = (q << shifts).sum(-1)  # < 2^32, disjoint bits
    words = torch.where(words >= 2**31, words - 2**32, words)
    return words.to(torch.int32)


def dequantize(qweight: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor) -> torch.Tensor:
    """fp16 [N, K]: (q - zero) * scale, computed in fp16 (q is exact in fp16)."""
    q = unpack(qweight).to(torch.float16)
    z = zeros.repeat_interleave(GROUP, dim=1)
    s = scales.repeat_interleave(GROUP, dim=1)
    return (q - z) * s


def reference(x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor) -> torch.Tensor:
    return torch.matmul(x, dequantize(qweight, scales, zeros).t())


def make_inputs(workload: Workload, seed: int, device: str | torch.device):
    """x fp16 [M, K] ~ N(0, 1); qweight int32 [N, K/8] of uniform nibbles 0..15; scales fp16
    [N, K/128] log-normal (sigma 0.35) around 1/sqrt(K * E[(q - z)^2]) so that y has unit scale;
    zeros fp16 [N, K/128] ~ N(8, 1.5^2) clamped to [2, 14] (fractional)."""
    p = workload.params
    m, n, k = int(p["M"]), int(p["N"]), int(p["K"])
    gen = generator(seed, device)
    x = sample((m, k), "float16", workload.distribution, gen, device)
    if gen is None:
        meta = dict(device="meta")
        return (x, torch.empty((n, k // PACK), dtype=torch.int32, **meta),
                torch.empty((n, k // GROUP), dtype=torch.float16, **meta),
                torch.empty((n, k // GROUP), dtype=torch.float16, **meta))
    q = torch.randint(0, 16, (n, k), generator=gen, device=device, dtype=torch.int32)
    qweight = pack(q)
    base = 1.0 / math.sqrt(k * _SECOND_MOMENT)
    ln = torch.randn((n, k // GROUP), generator=gen, device=device, dtype=torch.float32)
    scales = (base * torch.exp(SCALE_SIGMA * ln - SCALE_SIGMA**2)).to(torch.float16)
    zr = torch.randn((n, k // GROUP), generator=gen, device=device, dtype=torch.float32)
    zeros = (8.0 + ZERO_STD * zr).clamp_(2.0, 14.0).to(torch.float16)
    return x, qweight, scales, zeros


def flops(params: dict) -> float:
    """One multiply and one add per (m, n, k); the dequantisation is not counted."""
    return 2.0 * params["M"] * params["N"] * params["K"]


def bytes_moved(params: dict) -> float:
    """Fewest DRAM bytes: x (fp16), the packed weights (half a byte each), scales and zeros
    (fp16, one each per 128 weights) read once, y (fp16) written once."""
    m, n, k = params["M"], params["N"], params["K"]
    return float(2 * m * k + n * k // 2 + 2 * 2 * n * (k // GROUP) + 2 * m * n)
