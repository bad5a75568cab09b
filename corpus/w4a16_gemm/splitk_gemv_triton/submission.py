import torch
import triton
import triton.language as tl

TILE_N = 64
TILE_K = 128
SLICES = 4


@triton.jit
def q4_gemv_splitk(x_ptr, qw_ptr, s_ptr, z_ptr, acc_ptr, N, K, slice_len,
                   TILE_N: tl.constexpr, TILE_K: tl.constexpr):
    nb = tl.program_id(0)
    row = tl.program_id(1)
    ks = tl.program_id(2)
    cols = nb * TILE_N + tl.arange(0, TILE_N)
    live = cols < N
    kk = tl.arange(0, TILE_K)
    part = tl.zeros((TILE_N,), dtype=tl.float32)
    start = ks * slice_len
    for k in range(start, start + slice_len, TILE_K):
        kidx = k + kk
        words = tl.load(qw_ptr + cols[:, None] * (K // 8) + (kidx // 8)[None, :], mask=live[:, None], other=0)
        q = ((words >> ((kidx % 8) * 4)[None, :]) & 0xF).to(tl.float32)
        grp = k // 128
        s = tl.load(s_ptr + cols * (K // 128) + grp, mask=live, other=0.0).to(tl.float32)
        z = tl.load(z_ptr + cols * (K // 128) + grp, mask=live, other=0.0).to(tl.float32)
        xv = tl.load(x_ptr + row * K + kidx).to(tl.float32)
        part += tl.sum((q - z[:, None]) * s[:, None] * xv[None, :], axis=1)
    tl.atomic_add(acc_ptr + row * N + cols, part, mask=live)


@triton.jit
def to_half(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + i, tl.load(src_ptr + i, mask=i < n).to(tl.float16), mask=i < n)


def run(x, qweight, scales, zeros):
    M, K = x.shape
    N = qweight.shape[0]
    slices = SLICES
    while (K // TILE_K) % slices:
        slices //= 2
    acc = torch.zeros((M, N), dtype=torch.float32, device=x.device)
    q4_gemv_splitk[(triton.cdiv(N, TILE_N), M, slices)](x, qweight, scales, zeros, acc, N, K, K // slices,
                                                       TILE_N=TILE_N, TILE_K=TILE_K)
    y = torch.empty((M, N), dtype=torch.float16, device=x.device)
    to_half[(triton.cdiv(M * N, 1024),)](acc, y, M * N, BLOCK=1024)
    return y
