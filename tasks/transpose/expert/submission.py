"""Expert transpose in Triton: square tiles, read along rows of x, written along rows of out.

Design (tasks/transpose/task.toml gives the reasoning):
- A program owns a BLOCK x BLOCK tile of x. It loads the tile with the column index fastest (each
  warp reads whole 128-byte row segments of x), transposes it with tl.trans and stores it with the
  row index of x fastest (whole row segments of out). Between the two layouts the compiler stages
  the tile through shared memory (a ttg.convert_layout), so both global sides are coalesced.
- 64 x 64 tiles with 4 warps: 32 elements per thread each way, 16 KB (fp32) in flight per program.
- Edge tiles are masked on both sides: 4097 x 16383 has a partial tile row and column.
- 64-bit row offsets (16384 x 4096 and 8192 x 8192 pass 2^31 bytes); evict_first everywhere,
  since every byte is touched once.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _transpose_tile(x_ptr, out_ptr, M, N, x_stride, out_stride, BLOCK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK + tl.arange(0, BLOCK)
    cols = pid_n * BLOCK + tl.arange(0, BLOCK)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    src = x_ptr + rows[:, None].to(tl.int64) * x_stride + cols[None, :]
    tile = tl.load(src, mask=inside, other=0.0, eviction_policy="evict_first")
    flipped = tl.trans(tile)
    dst = out_ptr + cols[:, None].to(tl.int64) * out_stride + rows[None, :]
    tl.store(dst, flipped, mask=tl.trans(inside), eviction_policy="evict_first")


def run(x: torch.Tensor) -> torch.Tensor:
    """x.t().contiguous() for a contiguous 2-D x [M, N]: a new [N, M] tensor."""
    assert x.dim() == 2 and x.is_contiguous()
    m, n = x.shape
    out = torch.empty((n, m), dtype=x.dtype, device=x.device)
    if m and n:
        block = 64
        grid = (triton.cdiv(m, block), triton.cdiv(n, block))
        _transpose_tile[grid](x, out, m, n, x.stride(0), out.stride(0), BLOCK=block, num_warps=4, num_stages=1)
    return out
