import torch
import triton
import triton.language as tl

BLOCK = 2048
SPAN = 1024


@triton.jit
def block_totals(x_ptr, totals_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    cols = i * BLOCK + tl.arange(0, BLOCK)
    vals = tl.load(x_ptr + cols, mask=cols < n, other=0)
    tl.store(totals_ptr + i, tl.sum(vals, axis=0))


@triton.jit
def exclusive_offsets(totals_ptr, offsets_ptr, count, SPAN: tl.constexpr):
    lanes = tl.arange(0, SPAN)
    acc = tl.sum(tl.load(totals_ptr + lanes, mask=lanes < 0, other=0), axis=0)
    for start in tl.range(0, count, SPAN):
        idx = start + tl.arange(0, SPAN)
        t = tl.load(totals_ptr + idx, mask=idx < count, other=0)
        incl = tl.cumsum(t, axis=0)
        tl.store(offsets_ptr + idx, acc + incl - t, mask=idx < count)
        acc += tl.sum(t, axis=0)


@triton.jit
def rescan(x_ptr, offsets_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    cols = i * BLOCK + tl.arange(0, BLOCK)
    vals = tl.load(x_ptr + cols, mask=cols < n, other=0)
    base = tl.load(offsets_ptr + i)
    tl.store(y_ptr + cols, tl.cumsum(vals, axis=0) + base, mask=cols < n)


def run(x):
    n = x.numel()
    grid = (triton.cdiv(n, BLOCK),)
    totals = torch.empty(grid[0], dtype=x.dtype, device=x.device)
    offsets = torch.empty_like(totals)
    y = torch.empty_like(x)
    block_totals[grid](x, totals, n, BLOCK=BLOCK)
    exclusive_offsets[(1,)](totals, offsets, grid[0], SPAN=SPAN)
    rescan[grid](x, offsets, y, n, BLOCK=BLOCK)
    return y
