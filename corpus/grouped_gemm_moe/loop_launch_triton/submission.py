import torch
import triton
import triton.language as tl

BM, BN, BK = 64, 64, 32


@triton.jit
def expert_matmul(a, b, c, M, N, K, sam, sbn, scm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ka = k0 + rk
        ta = tl.load(a + rm[:, None] * sam + ka[None, :], mask=(rm[:, None] < M) & (ka[None, :] < K), other=0.0)
        tb = tl.load(b + rn[None, :] * sbn + ka[:, None], mask=(rn[None, :] < N) & (ka[:, None] < K), other=0.0)
        acc = tl.dot(ta, tb, acc)
    tl.store(c + rm[:, None] * scm + rn[None, :], acc.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def run(x, w, group_sizes):
    T, K = x.shape
    E, N, _ = w.shape
    y = torch.empty((T, N), dtype=x.dtype, device=x.device)
    row = 0
    for e, m in enumerate(group_sizes.tolist()):
        if m > 0:
            xs = x[row:row + m]
            ys = y[row:row + m]
            grid = (triton.cdiv(m, BM), triton.cdiv(N, BN))
            expert_matmul[grid](xs, w[e], ys, m, N, K, xs.stride(0), w.stride(1), ys.stride(0),
                                BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, num_warps=4, num_stages=3)
        row += m
    return y
