import torch
import triton
import triton.language as tl

TM, TN, TK = 64, 64, 128


@triton.jit
def dq_matmul(a_p, sa_p, b_p, sb_p, c_p, M, N, K, nkb,
              TM: tl.constexpr, TN: tl.constexpr, TK: tl.constexpr):
    i = tl.program_id(0) * TM + tl.arange(0, TM)
    j = tl.program_id(1) * TN + tl.arange(0, TN)
    t = tl.arange(0, TK)
    im = i < M
    jm = j < N
    out = tl.zeros((TM, TN), dtype=tl.float32)
    for q in range(0, nkb):
        xa = tl.load(a_p + i[:, None] * K + q * TK + t[None, :], mask=im[:, None], other=0.0).to(tl.float32)
        xb = tl.load(b_p + j[:, None] * K + q * TK + t[None, :], mask=jm[:, None], other=0.0).to(tl.float32)
        ra = tl.load(sa_p + q * M + i, mask=im, other=0.0)
        rb = tl.load(sb_p + (j // 128) * nkb + q, mask=jm, other=0.0)
        xa = (xa * ra[:, None]).to(tl.float16)
        xb = (xb * rb[:, None]).to(tl.float16)
        out = tl.dot(xa, tl.trans(xb), out)
    tl.store(c_p + i[:, None] * N + j[None, :], out.to(tl.bfloat16), mask=im[:, None] & jm[None, :])


def run(a, a_scale, b, b_scale):
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty((M, N), dtype=torch.bfloat16, device=a.device)
    dq_matmul[(triton.cdiv(M, TM), triton.cdiv(N, TN))](a, a_scale, b, b_scale, c, M, N, K, K // TK, TM=TM, TN=TN, TK=TK)
    return c
