"""register_tiling: each thread accumulates a small tile of outputs in registers.

## What it means
A thread keeps TM×TN (or TM×1) accumulators in scalar registers (a local array with
compile-time extents, or several scalar accumulators) updated by multiply-accumulates inside the
reduction loop; an array of MMA accumulator fragments counts too.

## How it is detected
Multiply-accumulates whose target is a local array element indexed by a constant-trip inner loop
(or by constant indices), touching two or more elements; or two or more scalar accumulators
updated by products of different operands in the same loop; or MMA calls accumulating into
several elements of a local fragment array. Triton: not decidable with ``tl.dot``, else 0.

## Not to be confused with
One output per thread; elementwise bundles; a cached row (nothing accumulated in a reduction loop).
"""

from ..facts.expr import Load, walk
from ._base import Rule, absent, not_applicable, present
from ._queries import dots, mac_updates, mma_calls

RULE = Rule("register_tiling")


@RULE.cuda
def cuda(f):
    macs = mac_updates(f)
    local_targets = {}
    for m in macs:
        if m.access is not None:
            acc = f.accesses[m.access]
            if acc.space == "local":
                local_targets.setdefault(acc.obj, set()).add(repr(acc.poly))
    tiles = [obj for obj, offs in local_targets.items() if len(offs) >= 2 or any("iter#" in o for o in offs)]
    if tiles:
        hits = [m for m in macs if m.access is not None and f.accesses[m.access].obj in tiles]
        return present(hits, "per-thread accumulator tile updated in the reduction loop")
    by_loop: dict[int, set] = {}
    for m in macs:
        if m.cell is not None and m.loops:
            by_loop.setdefault(m.loops[-1], set()).add(m.cell)
    multi = [lid for lid, cells in by_loop.items() if len(cells) >= 2]
    if multi:
        return present([m for m in macs if m.loops and m.loops[-1] == multi[0]], "several scalar accumulators per thread")
    frag = {}
    for c in mma_calls(f):
        if hasattr(c, "call"):
            for n in walk(c.call):
                if isinstance(n, Load) and n.space == "local":
                    frag.setdefault(n.obj, set()).add(repr(f.accesses[n.access].poly))
    if any(len(v) >= 2 or any("iter#" in o for o in v) for v in frag.values()):
        return present([c for c in mma_calls(f) if hasattr(c, "call")][:2], "array of MMA accumulator fragments per warp")
    return absent("no per-thread register tile (one output per thread)")


@RULE.triton
def triton(f):
    if dots(f):
        return not_applicable("tl.dot: the compiler assigns accumulator layouts")
    return absent("Triton source without tl.dot: no register tiles")
