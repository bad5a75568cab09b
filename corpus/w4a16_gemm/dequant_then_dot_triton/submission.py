import torch
import triton
import triton.language as tl


@triton.jit
def dequant_weights(qw_ptr, s_ptr, z_ptr, w_ptr, N, K, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    col = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    inb = col < K
    packed = tl.load(qw_ptr + row * (K // 8) + col // 8, mask=inb, other=0)
    nib = (packed >> ((col % 8) * 4)) & 0xF
    sc = tl.load(s_ptr + row * (K // 128) + col // 128, mask=inb, other=0.0)
    zp = tl.load(z_ptr + row * (K // 128) + col // 128, mask=inb, other=0.0)
    tl.store(w_ptr + row * K + col, (nib.to(tl.float16) - zp) * sc, mask=inb)


@triton.jit
def gemm_nt(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rn[None, :] * K + (k + rk)[:, None], mask=(rn[None, :] < N) & ((k + rk)[:, None] < K), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def run(x, qweight, scales, zeros):
    M, K = x.shape
    N = qweight.shape[0]
    w = torch.empty((N, K), dtype=torch.float16, device=x.device)
    dequant_weights[(N, triton.cdiv(K, 256))](qweight, scales, zeros, w, N, K, BLOCK=256)
    y = torch.empty((M, N), dtype=torch.float16, device=x.device)
    gemm_nt[(triton.cdiv(M, 32), triton.cdiv(N, 64))](x, w, y, M, N, K, BM=32, BN=64, BK=32)
    return y
