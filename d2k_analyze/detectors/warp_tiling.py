"""warp_tiling: an explicit warp level in the tile hierarchy.

## What it means
The block tile is divided into warp tiles assigned from the warp index (``warp / (BN / WN)``,
``warp % (BN / WN)``), each warp iterating over its sub-tile with thread tiles or MMA fragments.

## How it is detected
In a GEMM-like kernel, operand or fragment reads feeding the multiply-accumulate / MMA have
offsets that depend on the warp index (``threadIdx.x / 32`` however it is computed), split into
two coordinates (a quotient and a remainder of it) or owned by several warps.

## Not to be confused with
Warp indices used for reductions, roles, or one warp per row.
"""

from ..facts import poly as P
from ..facts.expr import Op
from ._base import Rule, absent, present
from ._queries import is_gemm

RULE = Rule("warp_tiling")


def _warp_split(acc) -> bool:
    """The offset depends on the warp index (``tid.x / 32`` however computed), directly or
    through a quotient / remainder of it (warp row and warp column)."""
    if "warp" in P.terms(acc.poly):
        return True
    for k in P.terms(acc.poly):
        sub = P.opaque_expr(k) if k.startswith("~") else None
        if isinstance(sub, Op) and sub.op in ("/", "//", "%", "&", ">>") and "warp" in P.terms(P.poly(sub.args[0])):
            return True
    return False


@RULE.cuda
def cuda(f):
    if not is_gemm(f):
        return absent("not a GEMM-like kernel")
    reads = [a for a in f.accesses if a.kind == "load" and a.space in ("shared", "global") and a.loops and _warp_split(a)]
    if len({a.obj for a in reads}) >= 2 or (reads and any(a.space == "shared" for a in reads)):
        return present(reads, "operand reads indexed by warp sub-tile coordinates")
    return absent("no warp level in the tiling")
