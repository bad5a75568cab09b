"""stream_k: MAC-loop iterations divided evenly among a persistent grid, partial tiles fixed up.

## What it means
A CTA processes a contiguous range of (tile, k) iterations that may start or end inside a tile;
tiles shared by several CTAs are completed by a fix-up (workspace + flag, or atomics).

## How it is detected
A GEMM-like loop whose bounds depend on the block index and on the grid size (or an SM-sized
parameter), with atomics or a wait on a flag in global memory for the fix-up.

## Not to be confused with
A fixed split-K factor; a persistent loop over whole tiles.
"""

from ..facts.expr import atoms
from ._base import Rule, absent, present
from ._queries import gemm_loops

RULE = Rule("stream_k")


@RULE.both
def detect(f):
    for lid in gemm_loops(f):
        lp = f.loops[lid]
        keys = (atoms(lp.init) if lp.init is not None else frozenset()) | (atoms(lp.bound) if lp.bound is not None else frozenset())
        if any(k.startswith(("bid.", "pid.")) for k in keys) and any(k.startswith(("gdim.", "nprog.", "sm_count")) for k in keys):
            fixup = [a for a in f.accesses if a.kind == "atomic"] + [lp2 for lp2 in f.loops.values() if lp2.kind == "while" and any(a.space == "global" and a.kind == "load" and lp2.id in a.loops for a in f.accesses)]
            if fixup:
                return present([lp] + fixup[:1], "iteration ranges split across a persistent grid with tile fix-up")
    return absent("no stream-K schedule")
