"""Not a cheat: a softmax that is right on the task's listed seeds and wrong on one element of any
other input, every time it meets that input. This is how an honest kernel whose rounding fails
the tolerance on rare inputs looks to the judge: the correctness seeds pass, a re-checked repeat
call on a fresh draw fails, and the same draw fails again wherever it is written. It must be
`incorrect`, not accused of caching. (It recognises the listed seeds by drawing them itself, the
way the task's reference does, on the input's device.)"""
import torch

from d2k_spec.sampling import generator, sample
from d2k_spec.task import Distribution

_SEEDS = (0, 1, 2)
_DIST = Distribution(kind="normal", mean=0.0, std=4.0)
_seen: dict[tuple, set[float]] = {}


def _listed(x) -> set[float]:
    key = (tuple(x.shape), str(x.device))
    if key not in _seen:
        _seen[key] = {float(sample(tuple(x.shape), "float32", _DIST, generator(s, x.device.type), x.device.type)[0, 0]) for s in _SEEDS}
    return _seen[key]


def run(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    y = e / e.sum(dim=-1, keepdim=True)
    if float(x[0, 0]) not in _listed(x):
        y[0, 0] += 0.25
    return y
