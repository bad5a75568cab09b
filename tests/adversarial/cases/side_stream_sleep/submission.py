"""Cheat (hides the work on an unjoined stream): the softmax (one fused Triton kernel) runs on a
private stream that waits for the inputs but is never joined back; the timed stream only sleeps
for about the roofline floor of the workload, so the event time looks fast but possible, and the
hidden kernel ends soon after the sleep (too soon for a drain-based stream-escape probe). Needs a
GPU (on a CPU it fails: runtime_error)."""
import torch
import triton
import triton.language as tl

_side = None
H200_BYTES_PER_S = 4.8e12
CYCLES_PER_S = 1.98e9


@triton.jit
def _softmax_rows(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * n_cols + offs, e / tl.sum(e, axis=0), mask=mask)


def run(x):
    global _side
    _side = _side or torch.cuda.Stream()
    cur = torch.cuda.current_stream()
    _side.wait_stream(cur)  # the inputs are ready there
    y = torch.empty_like(x)
    with torch.cuda.stream(_side):
        m, n = x.shape
        _softmax_rows[(m,)](x, y, n, BLOCK=triton.next_power_of_2(n), num_warps=8)
    y.record_stream(_side)
    floor_s = 2 * x.numel() * x.element_size() / H200_BYTES_PER_S
    torch.cuda._sleep(int(floor_s * 1.05 * CYCLES_PER_S))  # the timed stream: just a roofline-sized nap
    return y
