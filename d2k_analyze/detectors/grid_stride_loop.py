"""grid_stride_loop: a loop whose stride is the size of the whole grid.

## What it means
Per-element loops stepping by ``gridDim.x * blockDim.x``, or per-tile / per-row loops stepping by
the number of blocks/programs (``gridDim.x``, ``tl.num_programs``, or a parameter equal to the
launch grid), starting at this block's or thread's global index.

## How it is detected
A loop whose start depends on the block/program index and whose step carries the grid-size atom
(``gdim``, ``nprog``) or a parameter the launch binds to the grid size; or a counted loop
(``for i in range(iters)``) over an access whose offset depends on the block/program index and
advances per iteration by a multiple of the grid size (``(pid + i * nprog) * BLOCK``).

## Not to be confused with
Block-stride loops (step ``blockDim.x``), loops over K or over a tile's columns.
"""

from ..facts.expr import atoms
from ._queries import block_indexed, counted_grid_stride, grid_sized
from ._base import Rule, absent, present

RULE = Rule("grid_stride_loop")


@RULE.both
def detect(f):
    hits = []
    for lp in f.loops.values():
        start = atoms(lp.init) if lp.init is not None else frozenset()
        step = atoms(lp.step) if lp.step is not None else frozenset()
        if block_indexed(start) and grid_sized(step, f) or counted_grid_stride(f, lp):
            hits.append(lp)
    return present(hits, "loop stepping by the grid size") if hits else absent("no grid-stride loop")
