"""work_skipping: loop bounds that exclude fully masked tiles (causal, sliding window, sparse).

## What it means
A KV / reduction loop whose range depends on the tile's own position (``hi = (start_m + 1) *
BLOCK_M``), so tiles above the diagonal are never loaded or computed.

## How it is detected
A loop that performs a reduction (a dot / MMA / multiply-accumulate or exponentials) whose bound
or start depends arithmetically on the block/program index (not only through a length loaded
from memory), in a kernel that does not slice K across the grid.

## Not to be confused with
Elementwise masks over the full range; ragged-edge guards; per-sequence lengths.
"""

from ..facts.expr import Load, atoms, walk
from ._base import Rule, absent, present
from ._queries import exps_in, gemm_loops

RULE = Rule("work_skipping")


def _grid_arith(e) -> bool:
    if e is None:
        return False
    if any(isinstance(n, Load) for n in walk(e)):
        return False
    return any(k.startswith(("bid.", "pid.")) for k in atoms(e))


@RULE.both
def detect(f):
    reducing = set(gemm_loops(f))
    for c in f.calls:
        if exps_in(c.call):
            reducing |= set(c.loops)
    hits = [f.loops[i] for i in sorted(reducing) if _grid_arith(f.loops[i].bound) and f.loops[i].iterator != "tl.static_range"]
    if hits and any(exps_in(c.call) for c in f.calls):
        return present(hits, "reduction loop bounded by the tile's position")
    return absent("loops cover the full range")
