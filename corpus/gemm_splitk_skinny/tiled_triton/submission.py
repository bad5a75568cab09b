import torch
import triton
import triton.language as tl


@triton.jit
def mm_tile_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                   stride_am, stride_bn, stride_cm,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        kmask = (k + rk) < K
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :],
                    mask=(rm[:, None] < M) & kmask[None, :], other=0.0)
        b = tl.load(b_ptr + rn[:, None] * stride_bn + (k + rk)[None, :],
                    mask=(rn[:, None] < N) & kmask[None, :], other=0.0)
        acc += tl.dot(a, tl.trans(b))
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.bfloat16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def run(a, b):
    a = a.contiguous()
    b = b.contiguous()
    M, K = a.shape
    N = b.shape[0]
    c = torch.empty((M, N), device=a.device, dtype=torch.bfloat16)
    bm = 16 if M <= 16 else 32
    bn, bk = 64, 64
    grid = (triton.cdiv(N, bn), triton.cdiv(M, bm))
    mm_tile_kernel[grid](a, b, c, M, N, K, a.stride(0), b.stride(0), c.stride(0),
                         BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=4, num_stages=3)
    return c
