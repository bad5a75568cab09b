"""stream_k: MAC-loop iterations divided evenly among a persistent grid, partial tiles fixed up.

## What it means
A CTA processes a contiguous range of (tile, k) iterations that may start or end inside a tile;
tiles shared by several CTAs are completed by a fix-up (workspace + flag, or atomics).

## How it is detected
A GEMM-like loop (or a loop around it) whose bounds depend on the block index and on the grid
size: ``gridDim`` / ``num_programs``, an SM count, or a parameter the launch sets from the SM
count. Bounds are followed through the locals they read (``k_first = it % per_tile`` with
``it = blockIdx.x * share`` and ``share = ceil(total / gridDim.x)``). The kernel also has a
fix-up: atomics, or a loop waiting on a flag in global memory.

## Not to be confused with
A fixed split-K factor; a persistent loop over whole tiles (its K loop runs over the whole K).
"""

from ..facts.expr import atoms
from ._base import Rule, absent, present
from ._queries import expand, gemm_loops, with_enclosing
from .persistent_kernel import sm_sized

RULE = Rule("stream_k")


def _bound_keys(f, lp) -> set[str]:
    keys: set[str] = set()
    for e in (lp.init, lp.bound):
        if e is not None:
            for v in expand(f, e, 3):
                keys |= atoms(v)
    return keys


def _grid_sized(f, keys: set[str]) -> bool:
    if any(k.startswith(("gdim.", "nprog.", "sm_count")) for k in keys):
        return True
    for k in keys:  # a parameter that every launch sets from the SM count
        if k.startswith(("param#", "cexpr#")):
            i = int(k.split("#")[1].split("@")[0].split(".")[0])
            if f.launches and all(i < len(lf.bound) and lf.bound[i] is not None and sm_sized(lf.bound[i]) for lf in f.launches):
                return True
    return False


@RULE.both
def detect(f):
    for lid in with_enclosing(f, gemm_loops(f)):
        lp = f.loops[lid]
        keys = _bound_keys(f, lp)
        if any(k.startswith(("bid.", "pid.")) for k in keys) and _grid_sized(f, keys):
            fixup = [a for a in f.accesses if a.kind == "atomic"] + [lp2 for lp2 in f.loops.values() if lp2.kind in ("while", "do") and any(a.space == "global" and a.kind == "load" and lp2.id in a.loops for a in f.accesses)]
            if fixup:
                return present([lp] + fixup[:1], "iteration ranges split across a persistent grid with tile fix-up")
    return absent("no stream-K schedule")
