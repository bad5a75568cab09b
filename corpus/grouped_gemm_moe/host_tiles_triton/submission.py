import torch
import triton
import triton.language as tl

TILES = (64, 64, 32)


@triton.jit
def _scan_group(sizes, n_exp, tile, nt, TM: tl.constexpr):
    seen = tl.zeros((), dtype=tl.int32)
    before = tl.zeros((), dtype=tl.int32)
    grp = tl.zeros((), dtype=tl.int32)
    first = tl.zeros((), dtype=tl.int32)
    row0 = tl.zeros((), dtype=tl.int32)
    cnt = tl.zeros((), dtype=tl.int32)
    for e in range(n_exp):
        c = tl.load(sizes + e)
        span = ((c + TM - 1) // TM) * nt
        if (tile >= seen) & (tile < seen + span):
            grp = e
            first = seen
            row0 = before
            cnt = c
        seen += span
        before += c
    return grp, first, row0, cnt


@triton.jit
def moe_gemm_tiles(x, w, y, sizes, n_exp, N, K, TM: tl.constexpr, TN: tl.constexpr, TK: tl.constexpr):
    tile = tl.program_id(0)
    nt = tl.cdiv(N, TN)
    grp, first, row0, cnt = _scan_group(sizes, n_exp, tile, nt, TM)
    local = tile - first
    rows = row0 + (local // nt) * TM + tl.arange(0, TM)
    cols = (local % nt) * TN + tl.arange(0, TN)
    live = rows < row0 + cnt
    wbase = w + grp.to(tl.int64) * N * K
    acc = tl.zeros((TM, TN), dtype=tl.float32)
    for k0 in range(0, K, TK):
        ks = k0 + tl.arange(0, TK)
        xa = tl.load(x + rows[:, None] * K + ks[None, :], mask=live[:, None] & (ks[None, :] < K), other=0.0)
        wb = tl.load(wbase + cols[:, None] * K + ks[None, :], mask=(cols[:, None] < N) & (ks[None, :] < K), other=0.0)
        acc += tl.dot(xa, tl.trans(wb))
    tl.store(y + rows[:, None] * N + cols[None, :], acc.to(y.dtype.element_ty), mask=live[:, None] & (cols[None, :] < N))


def run(x, w, group_sizes):
    T, K = x.shape
    E, N, _ = w.shape
    y = torch.empty((T, N), dtype=x.dtype, device=x.device)
    tm, tn, tk = TILES
    nt = triton.cdiv(N, tn)
    tiles = sum(triton.cdiv(s, tm) * nt for s in group_sizes.tolist())
    if tiles:
        moe_gemm_tiles[(tiles,)](x, w, y, group_sizes, E, N, K, TM=tm, TN=tn, TK=tk, num_warps=4, num_stages=2)
    return y
