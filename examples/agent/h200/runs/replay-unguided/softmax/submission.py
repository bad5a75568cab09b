"""Naive Triton softmax: one program per row, three passes over global memory.

Pass 1 finds the row max, pass 2 sums exp(x - max), pass 3 re-reads x and writes the output;
each pass loops over BLOCK-wide column chunks so any N works. Correct but it reads x three times.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def softmax_three_pass_kernel(x_ptr, y_ptr, N, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    offs = tl.arange(0, BLOCK)

    # Pass 1: row maximum.
    row_max = float("-inf")
    for start in range(0, N, BLOCK):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        row_max = tl.maximum(row_max, tl.max(x, axis=0))

    # Pass 2: sum of exponentials.
    total = 0.0
    for start in range(0, N, BLOCK):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        total += tl.sum(tl.exp(x - row_max), axis=0)

    # Pass 3: normalize and write.
    for start in range(0, N, BLOCK):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - row_max) / total
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def run(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    M, N = x.shape
    y = torch.empty_like(x)
    if x.numel():
        softmax_three_pass_kernel[(M,)](x, y, N, x.stride(0), y.stride(0), BLOCK=BLOCK, num_warps=4)
    return y
