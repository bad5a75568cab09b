import torch
import triton
import triton.language as tl


@triton.jit
def ce_row_kernel(logits_ptr, targets_ptr, loss_ptr, n_cols, stride, inv_n, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    row_ptr = logits_ptr + row * stride
    mx = -float("inf")
    for off in range(0, n_cols, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        vals = tl.load(row_ptr + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        mx = tl.maximum(mx, tl.max(vals, axis=0))
    total = 0.0
    for off in range(0, n_cols, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        vals = tl.load(row_ptr + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        total += tl.sum(tl.exp(vals - mx), axis=0)
    target = tl.load(targets_ptr + row)
    target_logit = tl.load(row_ptr + target).to(tl.float32)
    loss = tl.log(total) + mx - target_logit
    tl.atomic_add(loss_ptr, loss * inv_n)


def run(logits, targets):
    n_rows, n_cols = logits.shape
    loss = torch.zeros((), device=logits.device, dtype=torch.float32)
    BLOCK_SIZE = 1024
    ce_row_kernel[(n_rows,)](logits, targets, loss, n_cols, logits.stride(0), 1.0 / n_rows, BLOCK_SIZE=BLOCK_SIZE)
    return loss
