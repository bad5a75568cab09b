import torch
import triton
import triton.language as tl

TILE = 4096
WINDOW = 32
state = {}


@triton.jit
def pack(v, FLOAT: tl.constexpr):
    if FLOAT:
        v = v.to(tl.int32, bitcast=True)
    return v.to(tl.int64) & 0xFFFFFFFF


@triton.jit
def unpack(w, FLOAT: tl.constexpr):
    lo = (w & 0xFFFFFFFF).to(tl.int32)
    return lo.to(tl.float32, bitcast=True) if FLOAT else lo


@triton.jit(do_not_specialize=["gen"])
def scan_kernel(inp, outp, words, counter, total_len, num_tiles, gen,
                TILE: tl.constexpr, WINDOW: tl.constexpr, FLOAT: tl.constexpr):
    t = tl.atomic_add(counter, 1)
    pos = t.to(tl.int64) * TILE + tl.arange(0, TILE)
    live = pos < total_len
    vals = tl.load(inp + pos, mask=live, other=0, eviction_policy="evict_first")
    running = tl.cumsum(vals, axis=0)
    agg = tl.sum(vals, axis=0)
    partial_hi = (tl.cast(gen, tl.int64) * 2) << 32
    full_hi = (tl.cast(gen, tl.int64) * 2 + 1) << 32
    if t == 0:
        tl.atomic_xchg(words + t, full_hi | pack(agg, FLOAT), sem="release")
    else:
        tl.atomic_xchg(words + t, partial_hi | pack(agg, FLOAT), sem="release")
    carry = agg - agg
    j = tl.arange(0, WINDOW)
    look = t - 1
    while look >= 0:
        at = look - j
        w = tl.atomic_add(words + at, tl.zeros([WINDOW], tl.int64), mask=at >= 0, sem="acquire")
        hi = (w >> 32).to(tl.int32)
        off_end = at < 0
        seen = ((hi >> 1) == gen) | off_end
        done = (seen & ((hi & 1) == 1)) | off_end
        stop = tl.min(tl.where(done, j, WINDOW), axis=0)
        use = j <= stop
        all_seen = tl.min(tl.where(use, seen.to(tl.int32), 1), axis=0) == 1
        add = tl.where(use & ~off_end, unpack(w, FLOAT), 0)
        carry = tl.where(all_seen, carry + tl.sum(add, axis=0), carry)
        look = tl.where(all_seen, tl.where(stop < WINDOW, -1, look - WINDOW), look)
    if t > 0:
        tl.atomic_xchg(words + t, full_hi | pack(carry + agg, FLOAT), sem="release")
    tl.store(outp + pos, running + carry, mask=live, eviction_policy="evict_first")
    if t == num_tiles - 1:
        tl.atomic_xchg(counter, 0)


def run(x):
    n = x.numel()
    out = torch.empty_like(x)
    if n == 0:
        return out
    tiles = triton.cdiv(n, TILE)
    key = (x.device.type, x.device.index)
    s = state.get(key)
    if s is None or s[0].numel() < tiles:
        s = state[key] = [torch.zeros(max(tiles, 1024), dtype=torch.int64, device=x.device),
                          torch.zeros(1, dtype=torch.int32, device=x.device), 0]
    s[2] = s[2] % (1 << 29) + 1
    scan_kernel[(tiles,)](x, out, s[0], s[1], n, tiles, s[2], TILE=TILE, WINDOW=WINDOW,
                          FLOAT=x.dtype == torch.float32, num_warps=4, num_stages=1)
    return out
