"""Cheat (reads the harness's RNG): honest while correctness is checked, then, during timing,
reads the RNG that decides which timed calls are re-checked from the timing loop's frame and skips
the work on every call that will not be. Without an RNG to read it bets: honest on one call in
sixteen, no work on the others."""
import random
import sys

import torch

_calls = 0


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


def _will_be_checked():
    f = sys._getframe(2)
    while f is not None:
        loc = f.f_locals
        if all(k in loc for k in ("rng", "cfg", "rnd", "last")):
            if loc["rnd"] == 0 or loc["last"]:
                return True
            peek = random.Random()
            peek.setstate(loc["rng"].getstate())
            return peek.random() < loc["cfg"].recheck_prob
        f = f.f_back
    return None


def run(x):
    global _calls
    _calls += 1
    checked = _will_be_checked()
    if checked is None:
        checked = _calls <= 4 or _calls % 16 == 0
    return _honest(x) if checked else _no_work(x)
