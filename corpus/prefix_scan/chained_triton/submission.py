import torch
import triton
import triton.language as tl


@triton.jit
def chained_scan(src, dst, ready, carry, counter, N, TILE: tl.constexpr):
    t = tl.atomic_add(counter, 1)
    offs = t.to(tl.int64) * TILE + tl.arange(0, TILE)
    m = offs < N
    a = tl.load(src + offs, mask=m, other=0)
    s = tl.cumsum(a, 0)
    total = tl.sum(a, 0)
    before = total * 0
    if t > 0:
        spins = 0
        while tl.atomic_add(ready + t - 1, 0, sem="acquire") == 0:
            spins += 1
        before = tl.load(carry + t - 1, volatile=True)
    tl.store(carry + t, before + total)
    tl.atomic_xchg(ready + t, 1, sem="release")
    tl.store(dst + offs, s + before, mask=m)


def run(x):
    n = x.numel()
    TILE = 2048
    tiles = triton.cdiv(n, TILE)
    out = torch.empty_like(x)
    ready = torch.zeros(tiles + 1, dtype=torch.int32, device=x.device)
    carry = torch.empty(tiles, dtype=x.dtype, device=x.device)
    chained_scan[(tiles,)](x, out, ready, carry, ready[tiles:], n, TILE=TILE, num_warps=4)
    return out
