"""Naive Triton LayerNorm: one program per row and three passes over the row in global memory.

Pass 1 sums the row chunk by chunk for the mean, pass 2 re-reads it for the variance around that
mean, pass 3 re-reads it a third time to normalize and store. Chunking makes any N work with a
fixed block, at the price of reading x three times.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

EPS = 1e-5
MAX_BLOCK = 1024  # columns per chunk


@triton.jit
def _layernorm_naive(x_ptr, w_ptr, b_ptr, y_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * N
    y_row = y_ptr + row * N

    # Pass 1: mean.
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N

    # Pass 2: variance around the mean (masked lanes would otherwise add mean^2).
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        d = tl.where(cols < N, x - mean, 0.0)
        acc += d * d
    var = tl.sum(acc, axis=0) / N
    rstd = 1.0 / tl.sqrt_rn(var + eps)

    # Pass 3: normalize and apply the affine step.
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def run(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    assert x.dim() == 2 and x.is_contiguous() and weight.is_contiguous() and bias.is_contiguous()
    m, n = x.shape
    y = torch.empty_like(x)
    block = min(MAX_BLOCK, triton.next_power_of_2(n))
    _layernorm_naive[(m,)](x, weight, bias, y, n, EPS, BLOCK=block)
    return y
