"""Adversarial (rope, an in-place task): rotates q and k correctly but into new tensors, returns
those and leaves the q and k buffers untouched. The returned values match the reference; the
inputs the task says to rotate in place do not. Must be incorrect."""

import torch
import triton
import triton.language as tl


@triton.jit
def _rope_copy(src, dst, pos_ptr, cos_ptr, sin_ptr, H, D, HALF, BLOCK: tl.constexpr):
    t = tl.program_id(0)
    h = tl.program_id(1)
    p = tl.load(pos_ptr + t)
    i = tl.arange(0, BLOCK)
    m = i < HALF
    c = tl.load(cos_ptr + p * HALF + i, mask=m)
    s = tl.load(sin_ptr + p * HALF + i, mask=m)
    off = (t * H + h) * D
    a = tl.load(src + off + i, mask=m).to(tl.float32)
    b = tl.load(src + off + HALF + i, mask=m).to(tl.float32)
    tl.store(dst + off + i, (a * c - b * s).to(tl.bfloat16), mask=m)
    tl.store(dst + off + HALF + i, (b * c + a * s).to(tl.bfloat16), mask=m)


def _rotated(x, positions, cos_cache, sin_cache):
    out = torch.empty_like(x)
    t, h, d = x.shape
    _rope_copy[(t, h)](x, out, positions, cos_cache, sin_cache, h, d, d // 2, BLOCK=triton.next_power_of_2(d // 2))
    return out


def run(positions, q, k, cos_cache, sin_cache):
    return _rotated(q, positions, cos_cache, sin_cache), _rotated(k, positions, cos_cache, sin_cache)
