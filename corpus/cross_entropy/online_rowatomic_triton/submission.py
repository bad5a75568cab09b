import torch
import triton
import triton.language as tl


@triton.jit
def _row_lse_loss(x, y, out, V, sx, B, CHUNK: tl.constexpr):
    r = tl.program_id(0)
    t = tl.load(y + r)
    ptr = x + r.to(tl.int64) * sx
    run_max = tl.full([CHUNK], -1e30, tl.float32)
    run_sum = tl.zeros([CHUNK], tl.float32)
    hit = tl.zeros([CHUNK], tl.float32)
    for c0 in range(0, V, CHUNK):
        c = c0 + tl.arange(0, CHUNK)
        ok = c < V
        v = tl.load(ptr + c, mask=ok, other=0.0).to(tl.float32)
        hit += tl.where(c == t, v, 0.0)
        v = tl.where(ok, v, -float("inf"))
        new_max = tl.maximum(run_max, v)
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.exp(v - new_max)
        run_max = new_max
    top = tl.max(run_max, axis=0)
    lse = top + tl.log(tl.sum(run_sum * tl.exp(run_max - top), axis=0))
    tl.atomic_add(out, (lse - tl.sum(hit, axis=0)) / B)


def run(logits, target):
    B, V = logits.shape
    out = torch.zeros((), dtype=torch.float32, device=logits.device)
    _row_lse_loss[(B,)](logits, target, out, V, logits.stride(0), B, CHUNK=2048, num_warps=8)
    return out
