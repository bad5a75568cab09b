import torch
import triton
import triton.language as tl


@triton.jit
def rope_head_kernel(x_ptr, pos_ptr, cos_ptr, sin_ptr, n_heads, head_dim, half, BLOCK: tl.constexpr):
    token = tl.program_id(0)
    head = tl.program_id(1)
    p = tl.load(pos_ptr + token)
    i = tl.arange(0, BLOCK)
    m = i < half
    cos = tl.load(cos_ptr + p * half + i, mask=m)
    sin = tl.load(sin_ptr + p * half + i, mask=m)
    row = x_ptr + (token * n_heads + head) * head_dim
    a = tl.load(row + i, mask=m).to(tl.float32)
    b = tl.load(row + half + i, mask=m).to(tl.float32)
    tl.store(row + i, (a * cos - b * sin).to(tl.bfloat16), mask=m)
    tl.store(row + half + i, (b * cos + a * sin).to(tl.bfloat16), mask=m)


def apply_rope(x, positions, cos_cache, sin_cache):
    T, H, D = x.shape
    half = D // 2
    rope_head_kernel[(T, H)](x, positions, cos_cache, sin_cache, H, D, half, BLOCK=triton.next_power_of_2(half))


def run(positions, q, k, cos_cache, sin_cache):
    apply_rope(q, positions, cos_cache, sin_cache)
    apply_rope(k, positions, cos_cache, sin_cache)
    return q, k
