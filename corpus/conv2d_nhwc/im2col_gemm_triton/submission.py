"""Two-pass 3x3 convolution: unfold the input into a [N*H*W, 9*C] patch matrix, then a tl.dot GEMM
against the [K, 9*C] filter."""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def unfold3x3(x_ptr, col_ptr, H, W, C, P, TILE_P: tl.constexpr, TILE_C: tl.constexpr):
    pix = tl.program_id(0) * TILE_P + tl.arange(0, TILE_P)
    tap = tl.program_id(1)
    ch = tl.program_id(2) * TILE_C + tl.arange(0, TILE_C)
    dy = tap // 3 - 1
    dx = tap % 3 - 1
    ox = pix % W
    oy = (pix // W) % H
    nb = pix // (H * W)
    iy = oy + dy
    ix = ox + dx
    inside = (pix < P) & (iy >= 0) & (iy < H) & (ix >= 0) & (ix < W)
    src = x_ptr + (((nb * H + iy) * W + ix) * C)[:, None] + ch[None, :]
    v = tl.load(src, mask=inside[:, None] & (ch[None, :] < C), other=0.0)
    dst = col_ptr + (pix * (9 * C) + tap * C)[:, None] + ch[None, :]
    tl.store(dst, v, mask=(pix[:, None] < P) & (ch[None, :] < C))


@triton.jit
def patch_gemm(a_ptr, b_ptr, c_ptr, M, N, KK, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, KK, BK):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * KK + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < KK), other=0.0)
        b = tl.load(b_ptr + rn[None, :] * KK + kk[:, None], mask=(rn[None, :] < N) & (kk[:, None] < KK), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def run(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    n, h, wd, c = x.shape
    k = w.shape[0]
    p = n * h * wd
    cols = torch.empty((p, 9 * c), device=x.device, dtype=x.dtype)
    tp, tc = 64, 64
    unfold3x3[(triton.cdiv(p, tp), 9, triton.cdiv(c, tc))](x, cols, h, wd, c, p, TILE_P=tp, TILE_C=tc)
    y = torch.empty((n, h, wd, k), device=x.device, dtype=x.dtype)
    bm, bn, bk = 64, 64, 32
    patch_gemm[(triton.cdiv(p, bm), triton.cdiv(k, bn))](cols, w, y, p, k, 9 * c, BM=bm, BN=bn, BK=bk)
    return y
