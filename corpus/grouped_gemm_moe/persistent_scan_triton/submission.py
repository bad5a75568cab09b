import torch
import triton
import triton.language as tl

TILE = (128, 128, 64)
WARPS = 8
STAGES = 3
WAVES = 1
MAX_GROUPS = 128


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def moe_persistent(xp, wp, yp, cp, G, N, K, sx, sw, sy,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GB: tl.constexpr,
                   STAGES: tl.constexpr, NPROG: tl.constexpr):
    slot = tl.arange(0, GB)
    cnt = tl.load(cp + slot, mask=slot < G, other=0)
    ncol = tl.cdiv(N, BN)
    mt = tl.cdiv(cnt, BM)
    stop = tl.associative_scan(mt * ncol, 0, _add)
    rstop = tl.associative_scan(cnt, 0, _add)
    work = tl.sum(mt * ncol, 0)
    for t in range(tl.program_id(0), work, NPROG):
        gi = tl.sum(tl.where(stop <= t, 1, 0), 0)
        sel = slot == gi
        t0 = tl.sum(tl.where(sel, stop - mt * ncol, 0), 0)
        mrows = tl.sum(tl.where(sel, mt, 0), 0)
        lo = tl.sum(tl.where(sel, rstop - cnt, 0), 0)
        hi = tl.sum(tl.where(sel, rstop, 0), 0)
        u = t - t0
        r = lo + (u % mrows) * BM + tl.arange(0, BM)
        c = (u // mrows) * BN + tl.arange(0, BN)
        r_ok = r < hi
        c_ok = c < N
        a_ptr = xp + r[:, None].to(tl.int64) * sx + tl.arange(0, BK)[None, :]
        b_ptr = wp + gi.to(tl.int64) * N * sw + c[None, :] * sw + tl.arange(0, BK)[:, None]
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in tl.range(0, K, BK, num_stages=STAGES):
            kin = k0 + tl.arange(0, BK) < K
            a = tl.load(a_ptr, mask=r_ok[:, None] & kin[None, :], other=0.0)
            b = tl.load(b_ptr, mask=c_ok[None, :] & kin[:, None], other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptr += BK
            b_ptr += BK
        tl.store(yp + r[:, None].to(tl.int64) * sy + c[None, :], acc.to(tl.bfloat16), mask=r_ok[:, None] & c_ok[None, :])


def run(x, w, group_sizes):
    T, K = x.shape
    E, N, _ = w.shape
    y = torch.empty((T, N), dtype=x.dtype, device=x.device)
    if x.is_cuda:
        nprog = WAVES * torch.cuda.get_device_properties(x.device).multi_processor_count
        bm, bn, bk = TILE
    else:
        nprog, bm, bn, bk = 2, 16, 16, 32
    moe_persistent[(nprog,)](x, w, y, group_sizes, E, N, K, x.stride(0), w.stride(1), y.stride(0),
                             BM=bm, BN=bn, BK=bk, GB=max(MAX_GROUPS, triton.next_power_of_2(E)),
                             STAGES=STAGES, NPROG=nprog, num_warps=WARPS)
    return y
