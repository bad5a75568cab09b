import torch
import triton
import triton.language as tl

@triton.jit
def _tile_totals(src, totals, length, TILE_LEN: tl.constexpr):
    t = tl.program_id(0)
    idx = t * TILE_LEN + tl.arange(0, TILE_LEN)
    vals = tl.load(src + idx, mask=idx < length, other=0.0).to(tl.float32)
    tl.store(totals + t, tl.sum(vals, axis=0))


@triton.jit
def _fold(totals, dst, count, WIDTH: tl.constexpr):
    running = tl.zeros([WIDTH], dtype=tl.float32)
    for base in range(0, count, WIDTH):
        j = base + tl.arange(0, WIDTH)
        running += tl.load(totals + j, mask=j < count, other=0.0)
    tl.store(dst, tl.sum(running, axis=0))


def run(x, tile=8192, fold_width=2048):
    n = x.numel()
    tiles = triton.cdiv(n, tile)
    totals = torch.empty(tiles, dtype=torch.float32, device=x.device)
    dst = torch.empty((), dtype=torch.float32, device=x.device)
    _tile_totals[(tiles,)](x, totals, n, TILE_LEN=tile, num_warps=8)
    _fold[(1,)](totals, dst, tiles, WIDTH=fold_width, num_warps=8)
    return dst
