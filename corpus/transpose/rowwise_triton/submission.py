import torch
import triton
import triton.language as tl


@triton.jit
def transpose_row_kernel(inp, out, n_rows, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.program_id(1) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_cols
    vals = tl.load(inp + row * n_cols + offs, mask=mask)
    tl.store(out + offs * n_rows + row, vals, mask=mask)


def run(x):
    n_rows, n_cols = x.shape
    out = torch.empty((n_cols, n_rows), device=x.device, dtype=x.dtype)
    BLOCK_SIZE = 1024
    transpose_row_kernel[(n_rows, triton.cdiv(n_cols, BLOCK_SIZE))](x, out, n_rows, n_cols, BLOCK_SIZE=BLOCK_SIZE)
    return out
