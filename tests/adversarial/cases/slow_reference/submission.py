"""Cheat (slows the reference during its timed window): after its own (honest) softmax, each call
starts a memory "hog" on a private stream: a Triton kernel that streams through 256 MB for a few
milliseconds, or until a device flag, which the next call of the submission raises first thing.
The calls of the reference and the expert that follow run beside the hog, slower; the
submission's own calls never do. (It skips the hog inside the old harness's stream-escape probe,
found by name on the stack.) Needs a GPU."""
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def _hog(flag_ptr, buf_ptr, sink_ptr, n_blocks, iters, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    i = 0
    stop = tl.load(flag_ptr, volatile=True)
    while (stop == 0) & (i < iters):
        blk = (pid + i * tl.num_programs(0)) % n_blocks
        acc += tl.load(buf_ptr + blk * BLOCK + offs, volatile=True)
        i += 1
        stop = tl.load(flag_ptr, volatile=True)
    tl.store(sink_ptr + pid * BLOCK + offs, acc)


_state = {}
BLOCK = 4096


def _softmax(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def _in_escape_probe():
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_name == "probe_stream_escape":
            return True
        f = f.f_back
    return False


def run(x):
    if not _state:
        _state["side"] = torch.cuda.Stream()
        _state["flag"] = torch.zeros(1, dtype=torch.int32, device="cuda")
        _state["buf"] = torch.ones(64 << 20, dtype=torch.float32, device="cuda")  # 256 MB
        _state["sink"] = torch.empty(264 * BLOCK, dtype=torch.float32, device="cuda")
    flag, side = _state["flag"], _state["side"]
    flag.fill_(1)  # stop a hog still running from the last call
    y = _softmax(x)
    if not _in_escape_probe():
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            flag.zero_()
            n_blocks = _state["buf"].numel() // BLOCK
            _hog[(264,)](flag, _state["buf"], _state["sink"], n_blocks, 6000, BLOCK=BLOCK, num_warps=8)
    return y
