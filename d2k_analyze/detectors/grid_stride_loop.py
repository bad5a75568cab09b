"""grid_stride_loop: a loop whose stride is the size of the whole grid.

## What it means
Per-element loops stepping by ``gridDim.x * blockDim.x``, or per-tile / per-row loops stepping by
the number of blocks/programs (``gridDim.x``, ``tl.num_programs``, or a parameter equal to the
launch grid), starting at this block's or thread's global index.

## How it is detected
A loop whose start depends on the block/program index and whose step carries the grid-size atom
(``gdim``, ``nprog``) or a parameter the launch binds to the grid size.

## Not to be confused with
Block-stride loops (step ``blockDim.x``), loops over K or over a tile's columns.
"""

from ..facts.expr import atoms
from ._base import Rule, absent, present

RULE = Rule("grid_stride_loop")


@RULE.both
def detect(f):
    hits = []
    for lp in f.loops.values():
        start = atoms(lp.init) if lp.init is not None else frozenset()
        step = atoms(lp.step) if lp.step is not None else frozenset()
        if not any(k.startswith(("bid.", "pid.")) for k in start):
            continue
        if any(k.startswith(("gdim.", "nprog.")) for k in step):
            hits.append(lp)
            continue
        for k in step:
            if k.startswith(("param#", "cexpr#")):
                i = int(k.split("#")[1])
                if any(i < len(lf.bound) and lf.bound[i] is not None and any(g == lf.bound[i] or atoms(lf.bound[i]) & atoms(g) - {'meta'} for g in lf.grid) for lf in f.launches):
                    hits.append(lp)
    return present(hits, "loop stepping by the grid size") if hits else absent("no grid-stride loop")
