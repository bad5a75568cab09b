"""Implicit-GEMM 3x3 convolution in Triton: nested tap loops, a channel loop inside, one tl.dot per
(tap, channel chunk). Plain 2-D grid of (pixel block, output-channel block)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

PIX = 64
OCH = 64
ICH = 32


@triton.jit
def _conv_tile(inp, wgt, outp, nimg, hgt, wid, cin, cout,
               PIX: tl.constexpr, OCH: tl.constexpr, ICH: tl.constexpr):
    total = nimg * hgt * wid
    pix = tl.program_id(0) * PIX + tl.arange(0, PIX)
    och = tl.program_id(1) * OCH + tl.arange(0, OCH)
    ich = tl.arange(0, ICH)
    col = pix % wid
    row = (pix // wid) % hgt
    img = pix // (wid * hgt)
    live = pix < total
    res = tl.zeros((PIX, OCH), tl.float32)
    for fr in tl.static_range(3):
        yy = row + (fr - 1)
        row_ok = live & (yy >= 0) & (yy < hgt)
        for fc in tl.static_range(3):
            xx = col + (fc - 1)
            ok = row_ok & (xx >= 0) & (xx < wid)
            base = ((img * hgt + yy) * wid + xx) * cin
            for c0 in range(0, cin, ICH):
                cc = c0 + ich
                tile = tl.load(inp + base[:, None] + cc[None, :], mask=ok[:, None] & (cc[None, :] < cin), other=0.0)
                filt = tl.load(wgt + (och * 9 + fr * 3 + fc)[None, :] * cin + cc[:, None],
                               mask=(och[None, :] < cout) & (cc[:, None] < cin), other=0.0)
                res = tl.dot(tile, filt, res)
    tl.store(outp + pix[:, None] * cout + och[None, :], res.to(outp.dtype.element_ty),
             mask=live[:, None] & (och[None, :] < cout))


def run(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    n, h, wd, c = x.shape
    k = w.shape[0]
    y = torch.empty((n, h, wd, k), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(n * h * wd, PIX), triton.cdiv(k, OCH))
    _conv_tile[grid](x, w, y, n, h, wd, c, k, PIX=PIX, OCH=OCH, ICH=ICH)
    return y
