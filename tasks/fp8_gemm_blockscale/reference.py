"""PyTorch reference for ``fp8_gemm_blockscale``: FP8 e4m3 GEMM with DeepSeek-V3 block scales.

C[m, n] = sum_k (A[m, k] * sa[k // 128, m]) * (B[n, k] * sb[n // 128, k // 128]), bf16 out.

Layouts (see task.toml): ``a`` fp8 e4m3 [M, K]; ``a_scale`` fp32 [K/128, M] contiguous
(K-block-major: one scale per row of A per 128-wide K block); ``b`` fp8 e4m3 [N, K] (Linear weight
layout); ``b_scale`` fp32 [ceil(N/128), K/128] contiguous (one scale per 128x128 block of B).
K must be a multiple of 128; M and N need not be multiples of 128.

On CUDA the reference is cuBLAS's block-scaled fp8 GEMM through ``torch.nn.functional.scaled_mm``
(1x128 recipe for A, 128x128 for B), fed zero-copy transposed views of the two scale tensors
(``a_scale.t()`` is [M, K/128] with strides (1, M), ``b_scale.t()`` is [K/128, N/128] with
strides (1, K/128): the layouts cuBLAS accepts). Where that path is not available (CPU, N not a
multiple of 128, an older torch), it dequantises both operands to fp32 and multiplies in fp32.

Inputs are realistic fp8 quantisations: fp32 data whose magnitude varies log-normally per row and
per block (so every scale matters), quantised per 1x128 block of A and per 128x128 block of B to
e4m3 with scale = amax / 448.
"""

from __future__ import annotations

import math

import torch

from d2k_spec.sampling import generator, sample
from d2k_spec.task import Workload

BLOCK = 128
FP8_MAX = 448.0
# log-normal spreads (natural log) of the magnitudes: per row of A, per (row, K block) of A, per
# 128x128 block of B, per row of B inside its block. exp(s*g - s^2) has mean square 1.
SIGMA_A_ROW = 0.5
SIGMA_A_BLOCK = 0.75
SIGMA_B_BLOCK = 0.75
SIGMA_B_ROW = 0.25


def _cublas(a, a_scale, b, b_scale):
    import torch.nn.functional as F

    return F.scaled_mm(a, b.t(), a_scale.t(), F.ScalingType.BlockWise1x128, b_scale.t(), F.ScalingType.BlockWise128x128,
                       output_dtype=torch.bfloat16)


def dequantized(a, a_scale, b, b_scale) -> tuple[torch.Tensor, torch.Tensor]:
    """The fp32 operands the fp8 values and their scales stand for: A [M, K], B [N, K]."""
    m, k = a.shape
    n = b.shape[0]
    sa = a_scale.t().repeat_interleave(BLOCK, dim=1)[:, :k]
    sb = b_scale.repeat_interleave(BLOCK, dim=0)[:n].repeat_interleave(BLOCK, dim=1)[:, :k]
    return a.float() * sa, b.float() * sb


def reference(a: torch.Tensor, a_scale: torch.Tensor, b: torch.Tensor, b_scale: torch.Tensor) -> torch.Tensor:
    if a.is_cuda and b.shape[0] % BLOCK == 0 and hasattr(torch.nn.functional, "scaled_mm"):
        try:
            return _cublas(a, a_scale, b, b_scale)
        except (RuntimeError, AttributeError, TypeError):
            pass
    da, db = dequantized(a, a_scale, b, b_scale)
    return torch.matmul(da, db.t()).to(torch.bfloat16)


def _lognormal(shape, sigma, gen, device):
    g = torch.randn(shape, generator=gen, device=device, dtype=torch.float32)
    return torch.exp(sigma * g - sigma * sigma)


def quantize_rows(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per 1x128 block: (e4m3 [M, K], scales [K/128, M] contiguous)."""
    m, k = x.shape
    blocks = x.view(m, k // BLOCK, BLOCK)
    scale = blocks.abs().amax(dim=2).clamp_min(1e-12) / FP8_MAX
    q = (blocks / scale[:, :, None]).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn).view(m, k)
    return q, scale.t().contiguous()


def quantize_blocks(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per 128x128 block (the last row block may be partial): (e4m3 [N, K], scales [ceil(N/128), K/128])."""
    n, k = x.shape
    nb = -(-n // BLOCK)
    pad = torch.zeros((nb * BLOCK, k), dtype=x.dtype, device=x.device)
    pad[:n] = x
    blocks = pad.view(nb, BLOCK, k // BLOCK, BLOCK)
    scale = blocks.abs().amax(dim=(1, 3)).clamp_min(1e-12) / FP8_MAX
    q = (blocks / scale[:, None, :, None]).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn).view(nb * BLOCK, k)[:n]
    return q.contiguous(), scale.contiguous()


def make_inputs(workload: Workload, seed: int, device: str | torch.device):
    """(a, a_scale, b, b_scale): fp32 data N(0, std^2) times log-normal magnitudes, quantised.

    std is K^(-1/4) (task.toml), so |C| has about unit scale; the magnitudes spread rows of C by
    ~e^(+-1) and make neighbouring K blocks of one row differ by ~2x, so a kernel that uses one
    scale per row, per tensor, or only the first K block's scale is far off."""
    p = workload.params
    m, n, k = int(p["M"]), int(p["N"]), int(p["K"])
    if k % BLOCK:
        raise ValueError(f"K must be a multiple of {BLOCK}, got {k}")
    gen = generator(seed, device)
    nb, kb = -(-n // BLOCK), k // BLOCK
    if gen is None:
        e = lambda *s, dt=torch.float8_e4m3fn: torch.empty(s, dtype=dt, device="meta")  # noqa: E731
        return e(m, k), e(kb, m, dt=torch.float32), e(n, k), e(nb, kb, dt=torch.float32)
    xa = sample((m, k), "float32", workload.distribution, gen, device)
    xb = sample((n, k), "float32", workload.distribution, gen, device)
    xa = xa.view(m, kb, BLOCK) * _lognormal((m, 1, 1), SIGMA_A_ROW, gen, device) * _lognormal((m, kb, 1), SIGMA_A_BLOCK, gen, device)
    mag_b = _lognormal((nb, 1, kb, 1), SIGMA_B_BLOCK, gen, device).expand(nb, BLOCK, kb, 1).reshape(nb * BLOCK, kb, 1)[:n]
    xb = xb.view(n, kb, BLOCK) * mag_b * _lognormal((n, 1, 1), SIGMA_B_ROW, gen, device)
    a, a_scale = quantize_rows(xa.view(m, k))
    b, b_scale = quantize_blocks(xb.view(n, k))
    return a, a_scale, b, b_scale


def flops(params: dict) -> float:
    """One multiply and one add per (m, n, k); the scale products are O(M N K / 128) and not counted."""
    return 2.0 * params["M"] * params["N"] * params["K"]


def bytes_moved(params: dict) -> float:
    """Fewest DRAM bytes: fp8 A and B once, both fp32 scale tensors once, bf16 C written once."""
    m, n, k = params["M"], params["N"], params["K"]
    kb, nb = k // BLOCK, math.ceil(n / BLOCK)
    return float(m * k + n * k + 4 * (kb * m + nb * kb) + 2 * m * n)
