import torch
import triton
import triton.language as tl

TILE_M = 32
TILE_N = 32


@triton.jit
def _tile_copy_t(src_ptr, dst_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    i = tl.program_id(1) * BM + tl.arange(0, BM)
    j = tl.program_id(0) * BN + tl.arange(0, BN)
    msk = (i[:, None] < M) & (j[None, :] < N)
    block = tl.load(src_ptr + i[:, None].to(tl.int64) * N + j[None, :], mask=msk)
    tl.store(dst_ptr + j[None, :].to(tl.int64) * M + i[:, None], block, mask=msk)


def run(x: torch.Tensor) -> torch.Tensor:
    M, N = x.shape
    y = x.new_empty((N, M))
    grid = (triton.cdiv(N, TILE_N), triton.cdiv(M, TILE_M))
    _tile_copy_t[grid](x, y, M, N, BM=TILE_M, BN=TILE_N)
    return y
