import torch
import triton
import triton.language as tl

GPU_TILES = (128, 128, 4)  # columns, K step, K slices


@triton.jit
def wx_partial(w_ptr, x_ptr, acc_ptr, M, N, K, chunk,
               TILE_N: tl.constexpr, TILE_M: tl.constexpr, TILE_K: tl.constexpr):
    tn = tl.program_id(0)
    ts = tl.program_id(1)
    n_idx = tn * TILE_N + tl.arange(0, TILE_N)
    m_idx = tl.arange(0, TILE_M)
    k_idx = tl.arange(0, TILE_K)
    k_first = ts * chunk
    k_last = tl.minimum(K, k_first + chunk)
    part = tl.zeros((TILE_N, TILE_M), dtype=tl.float32)
    for k in tl.range(k_first, k_last, TILE_K, num_stages=3):
        kk = k + k_idx
        wt = tl.load(w_ptr + n_idx[:, None] * K + kk[None, :],
                     mask=(n_idx[:, None] < N) & (kk[None, :] < k_last), other=0.0)
        xt = tl.load(x_ptr + m_idx[:, None] * K + kk[None, :],
                     mask=(m_idx[:, None] < M) & (kk[None, :] < k_last), other=0.0)
        part = tl.dot(wt, tl.trans(xt), part)
    tl.atomic_add(acc_ptr + m_idx[None, :] * N + n_idx[:, None], part,
                  mask=(m_idx[None, :] < M) & (n_idx[:, None] < N))


@triton.jit
def to_bf16(src, dst, count, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + i, tl.load(src + i, mask=i < count).to(tl.bfloat16), mask=i < count)


def run(a, b):
    a, b = a.contiguous(), b.contiguous()
    M, K = a.shape
    N = b.shape[0]
    out = torch.empty((M, N), device=a.device, dtype=torch.bfloat16)
    tn, tk, splits = GPU_TILES
    if a.device.type == "cpu":
        tn, tk, splits = 64, 64, 3
    tm = 16 if M <= 16 else 32
    chunk = triton.cdiv(triton.cdiv(K, tk), splits) * tk
    for m0 in range(0, M, tm):
        rows = min(tm, M - m0)
        acc = torch.zeros((rows, N), device=a.device, dtype=torch.float32)
        grid = (triton.cdiv(N, tn), triton.cdiv(K, chunk))
        wx_partial[grid](b, a[m0:m0 + rows], acc, rows, N, K, chunk, TILE_N=tn, TILE_M=tm, TILE_K=tk, num_warps=4)
        to_bf16[(triton.cdiv(rows * N, 1024),)](acc, out[m0:m0 + rows], rows * N, BLOCK=1024)
    return out
