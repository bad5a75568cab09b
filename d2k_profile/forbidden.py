"""The kernels of a task's forbidden library op, as the judge sees them on a workload.

The reference is usually the forbidden op itself (``torch.softmax``, ``F.layer_norm``, cuBLAS
through ``torch.matmul``). The judge calls it once on the workload's inputs under
``torch.profiler`` in its own (trusted) process and collects the GPU kernels launched inside the
ATen ops whose names match a forbidden op, children included. A submission whose timed calls run
any of those kernels calls the op, whether through Python, from C++ (``at::_softmax``) or only
when it believes no one is looking. Generic kernels (elementwise, fills, copies, reductions) are
left out: an honest submission may launch them too.
"""

from __future__ import annotations

import re
from typing import Callable

from . import anticheat

GENERIC = re.compile(r"elementwise_kernel|FillFunctor|fill_kernel|CatArrayBatchedCopy|copy_kernel|reduce_kernel|distribution_|"
                     r"index_elementwise|Memcpy|Memset|\[memcpy\]|\[memset\]", re.I)


def _matches(name: str, forbidden: list[str]) -> bool:
    short = name.split("::")[-1]
    return any(short in anticheat.op_aliases(f) for f in forbidden)


def _kernels_below(event) -> set[str]:
    found = {k.name for k in getattr(event, "kernels", [])}
    for child in getattr(event, "cpu_children", []):
        found |= _kernels_below(child)
    return found


def forbidden_kernels(call: Callable[[], object], forbidden: list[str], sync: Callable[[], None]) -> tuple[set[str], str]:
    """(kernel names, note): the kernels the forbidden ops launch when ``call`` runs (the
    reference on a workload's inputs)."""
    if not forbidden:
        return set(), ""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        call()
        sync()
    names: set[str] = set()
    matched = False
    for e in prof.events():
        if _matches(e.name, forbidden):
            matched = True
            names |= _kernels_below(e)
    names = {n for n in names if not GENERIC.search(n)}
    if not matched:
        return set(), "the reference calls none of the forbidden ops: no kernel-name check"
    if not names:
        return set(), "the forbidden op launched only generic kernels here: no kernel-name check"
    return names, ""
