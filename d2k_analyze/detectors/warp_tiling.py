"""warp_tiling: an explicit warp level in the tile hierarchy.

## What it means
The block tile is divided into warp tiles assigned from the warp index (``warp / (BN / WN)``,
``warp % (BN / WN)``), each warp iterating over its sub-tile with thread tiles or MMA fragments.

## How it is detected
In a GEMM-like kernel, operand or fragment reads feeding the multiply-accumulate / MMA have
offsets that depend on the warp index (``threadIdx.x / 32`` however it is computed, or
``threadIdx.y`` when blocks are 32 threads wide), split into two coordinates (a quotient and a
remainder of it) or owned by several warps; a K loop whose bounds depend on the warp index (the
MMA's own loop or one around it, with no global store inside) is an intra-block split-K instead,
and one that starts at the lane (or thread) index is a dot product per warp, a work mapping.

## Not to be confused with
Warp indices used for reductions, roles, or one warp per row; warps splitting the K range.
"""

from ..facts import poly as P
from ..facts.expr import Op, num
from ._base import Rule, absent, present
from ._queries import gemm_loops, is_gemm, with_enclosing

RULE = Rule("warp_tiling")


def warp_keys(f) -> set[str]:
    """Atoms that are the warp index: ``tid.x / 32`` however computed, and ``threadIdx.y`` when
    every launch makes blocks 32 threads wide (each row of the block is one warp)."""
    keys = {"warp"}
    if f.launches and all(lf.block and num(lf.block[0]) == 32 for lf in f.launches):
        keys.add("tid.y")
    return keys


def _warp_split(acc, keys: set[str]) -> bool:
    """The offset depends on the warp index, directly or through a quotient / remainder of it
    (warp row and warp column)."""
    if "warp" in keys & P.terms(acc.poly):
        return True  # (``threadIdx.y`` used directly is a row per warp, one thread-tile row, not a warp tile)
    for k in P.terms(acc.poly):
        sub = P.opaque_expr(k) if k.startswith("~") else None
        if isinstance(sub, Op) and sub.op in ("/", "//", "%", "&", ">>") and keys & P.terms(P.poly(sub.args[0])):
            return True
    return False


def _stores_in(f, lid: int) -> bool:
    """Loop ``lid`` writes results to global memory: a loop over output tiles, which a warp may
    start at its own number (warps dealt tiles), whereas a K loop only accumulates."""
    return any(lid in a.loops and a.space == "global" and a.kind in ("store", "atomic") for a in f.accesses)


@RULE.cuda
def cuda(f):
    if not is_gemm(f):
        return absent("not a GEMM-like kernel")
    keys = warp_keys(f)
    for lid in with_enclosing(f, gemm_loops(f)):
        lp = f.loops[lid]
        if _stores_in(f, lid):
            continue
        if any(e is not None and any(P.mentions(P.poly(e), k) for k in keys) for e in (lp.init, lp.bound)):
            return absent("warps split the K range (an intra-block split-K), not the output tile", [lp])
        if lp.init is not None and any(P.mentions(P.poly(lp.init), k) for k in ("lane", "tid.x")):
            return absent("the threads of a warp split the reduction (a warp per output), not a warp tile", [lp])
    reads = [a for a in f.accesses if a.kind == "load" and a.space in ("shared", "global") and a.loops and _warp_split(a, keys)]
    if len({a.obj for a in reads}) >= 2 or (reads and any(a.space == "shared" for a in reads)):
        return present(reads, "operand reads indexed by warp sub-tile coordinates")
    return absent("no warp level in the tiling")
