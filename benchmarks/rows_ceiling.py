"""Two minimal row kernels that bound what a one-pass softmax / layernorm can reach on a shape.

A one-pass row kernel (softmax, layernorm) must hold the whole row before it writes any of it:
every output needs the row's max / sum / mean. These kernels keep exactly that structure and
drop the arithmetic, so their time is the price of the structure alone on the given shape:

* ``row_copy``: one program per row loads the row into registers and stores it back (y = x).
  Same grid, same bytes in flight per program as the experts, no reduction.
* ``row_center``: the same, but the store waits for a reduction over the row (y = x - mean(x)):
  the read-everything-then-write-everything dependency of softmax and layernorm, with one
  cross-warp reduction instead of two and no exp / rsqrt.

If ``row_center`` is no faster than an expert on a shape, the expert's gap to a device copy is
the cost of the dependency on that shape, not of its arithmetic. Used by
``benchmarks/family1_tune.py --only rowdep``; needs a CUDA GPU.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _row_copy(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    keep = cols < n_cols
    v = tl.load(x_ptr + row * n_cols + cols, mask=keep)
    tl.store(y_ptr + row * n_cols + cols, v, mask=keep)


@triton.jit
def _row_center(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    keep = cols < n_cols
    v = tl.load(x_ptr + row * n_cols + cols, mask=keep, other=0.0).to(tl.float32)
    centred = v - tl.sum(v, axis=0) / n_cols
    tl.store(y_ptr + row * n_cols + cols, centred.to(y_ptr.dtype.element_ty), mask=keep)


def run(kind: str, x: torch.Tensor, y: torch.Tensor, warps: int) -> torch.Tensor:
    """One launch of ``row_copy`` or ``row_center`` over the rows of the contiguous 2-D ``x``."""
    kernel = {"row_copy": _row_copy, "row_center": _row_center}[kind]
    kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]), num_warps=warps)
    return y
