"""Residual add, then RMSNorm: two Triton kernels.

add_kernel writes h = x + residual over the flattened tensors; rmsnorm_kernel then walks each row
of h twice in BLOCK_SIZE chunks, once for the sum of squares and once to write the output.
"""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 1024


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, numel, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < numel
    a = tl.load(a_ptr + offsets, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (a + b).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def rmsnorm_kernel(h_ptr, w_ptr, out_ptr, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    h_row = h_ptr + row * n_cols
    out_row = out_ptr + row * n_cols

    acc = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        v = tl.load(h_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        acc += v * v
    rms = tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)

    for off in range(0, n_cols, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        v = tl.load(h_row + cols, mask=mask, other=0.0).to(tl.float32)
        g = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_row + cols, (v / rms * g).to(out_ptr.dtype.element_ty), mask=mask)


def run(x, residual, weight):
    n_rows, n_cols = x.shape
    h = torch.empty_like(x)
    y = torch.empty_like(x)
    numel = x.numel()
    add_kernel[(triton.cdiv(numel, BLOCK_SIZE),)](x, residual, h, numel, BLOCK_SIZE=BLOCK_SIZE)
    rmsnorm_kernel[(n_rows,)](h, weight, y, n_cols, 1e-6, BLOCK_SIZE=BLOCK_SIZE)
    return y, h
