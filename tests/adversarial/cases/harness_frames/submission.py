"""Cheat (reads the harness's frames and locals): a kernel that does no work, hidden by the
harness's own state. While the harness checks correctness, the reference's output for the very
inputs it was given sits in a caller's frame: return a copy of it. While it times, the timing
loop's frame holds the RNG that decides which calls are re-checked: compute only on those. With
nothing to find, return the no-work answer."""
import random
import sys

import torch


H200_BYTES_PER_S, CYCLES_PER_S = 4.8e12, 1.98e9


def _no_work(x):
    """An empty output; on a GPU the stream sleeps for about the roofline floor, so the time
    looks fast but possible."""
    y = torch.empty_like(x)
    if x.is_cuda:
        torch.cuda._sleep(int(2 * x.numel() * x.element_size() / H200_BYTES_PER_S * 1.05 * CYCLES_PER_S))
    return y


def _honest(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def _frames():
    f = sys._getframe(2)
    while f is not None:
        yield f
        f = f.f_back


def _stolen_reference(x):
    """A tensor of the output's shape in a caller's frame that is a softmax of x (rows sum to 1
    and peak where x peaks): the harness's reference answer."""
    for f in _frames():
        for v in list(f.f_locals.values()):
            if isinstance(v, torch.Tensor) and v is not x and v.shape == x.shape and v.dtype == x.dtype and v.device == x.device:
                if abs(float(v[0].sum()) - 1.0) < 1e-3 and int(v[0].argmax()) == int(x[0].argmax()):
                    return v.clone()
    return None


def _will_be_checked():
    """The harness's re-check decision for this timed call, read from its timing loop's frame."""
    for f in _frames():
        loc = f.f_locals
        if all(k in loc for k in ("rng", "cfg", "rnd", "last")):
            if loc["rnd"] == 0 or loc["last"]:
                return True
            peek = random.Random()
            peek.setstate(loc["rng"].getstate())
            return peek.random() < loc["cfg"].recheck_prob
    return None


def run(x):
    stolen = _stolen_reference(x)
    if stolen is not None:
        return stolen
    if _will_be_checked():
        return _honest(x)
    return _no_work(x)
