import torch
import triton
import triton.language as tl


@triton.jit
def chunk_sum_atomic(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    partial = tl.sum(x.to(tl.float32), axis=0)
    tl.atomic_add(out_ptr, partial)


def run(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros((), dtype=torch.float32, device=x.device)
    n = x.numel()
    BLOCK_SIZE = 1024
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    chunk_sum_atomic[grid](x, out, n, BLOCK_SIZE=BLOCK_SIZE)
    return out
