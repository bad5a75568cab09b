"""Expert NeoX RoPE in Triton: one program per token rotates every q and k head in place.

Design (tasks/rope/task.toml gives the reasoning):
- Grid (T,): the program loads its token's position and the cos/sin rows once (fp32, D/2 each)
  and keeps them in registers for all Hq + Hkv heads: one launch for q and k, no gathered
  temporaries, every element of q and k read once and written once, in place.
- Heads go in groups of HEADS_PER_STEP through a statically unrolled loop, each group a
  [heads, D/2] tile of the two halves, so several groups' loads are in flight at once.
- Contiguous columns within a head row (D = 64-128 bf16: 128-256 contiguous bytes per head);
  rotation in fp32, one rounding to the input dtype on the store.
- q and k are streamed (evict_first); the cos/sin rows are kept (evict_last): positions repeat
  across the batch and the rows are reused by every head.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _rotate_group(base, heads, H, cols, R: tl.constexpr, D: tl.constexpr, c, s):
    inside = (heads[:, None] < H) & (cols[None, :] < R)
    lo = base + heads[:, None] * D + cols[None, :]
    x1 = tl.load(lo, mask=inside, other=0.0, eviction_policy="evict_first").to(tl.float32)
    x2 = tl.load(lo + R, mask=inside, other=0.0, eviction_policy="evict_first").to(tl.float32)
    tl.store(lo, (x1 * c - x2 * s).to(base.dtype.element_ty), mask=inside, eviction_policy="evict_first")
    tl.store(lo + R, (x2 * c + x1 * s).to(base.dtype.element_ty), mask=inside, eviction_policy="evict_first")


@triton.jit
def _rope_token(pos_ptr, q_ptr, k_ptr, cos_ptr, sin_ptr, q_token_stride, k_token_stride,
                HQ: tl.constexpr, HKV: tl.constexpr, D: tl.constexpr, R: tl.constexpr,
                R_BLOCK: tl.constexpr, HEADS_PER_STEP: tl.constexpr):
    tok = tl.program_id(0).to(tl.int64)
    pos = tl.load(pos_ptr + tok)
    cols = tl.arange(0, R_BLOCK)
    c = tl.load(cos_ptr + pos * R + cols, mask=cols < R, other=1.0, eviction_policy="evict_last")[None, :]
    s = tl.load(sin_ptr + pos * R + cols, mask=cols < R, other=0.0, eviction_policy="evict_last")[None, :]
    step = tl.arange(0, HEADS_PER_STEP)
    q_base = q_ptr + tok * q_token_stride
    for h0 in tl.static_range(0, HQ, HEADS_PER_STEP):
        _rotate_group(q_base, h0 + step, HQ, cols, R, D, c, s)
    k_base = k_ptr + tok * k_token_stride
    for h0 in tl.static_range(0, HKV, HEADS_PER_STEP):
        _rotate_group(k_base, h0 + step, HKV, cols, R, D, c, s)


def run(positions: torch.Tensor, q: torch.Tensor, k: torch.Tensor, cos_cache: torch.Tensor, sin_cache: torch.Tensor):
    """Rotate q [T, Hq, D] and k [T, Hkv, D] in place (NeoX pairs (i, i + D/2)); returns (q, k)."""
    assert q.is_contiguous() and k.is_contiguous() and cos_cache.is_contiguous() and sin_cache.is_contiguous()
    t, hq, d = q.shape
    hkv, r = k.shape[1], d // 2
    if t:
        r_block = triton.next_power_of_2(r)
        heads_per_step = min(8, triton.next_power_of_2(min(hq, hkv)))
        _rope_token[(t,)](positions, q, k, cos_cache, sin_cache, q.stride(0), k.stride(0),
                          HQ=hq, HKV=hkv, D=d, R=r, R_BLOCK=r_block, HEADS_PER_STEP=heads_per_step,
                          num_warps=4, num_stages=1)
    return q, k
