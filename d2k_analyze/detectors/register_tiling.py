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
    asm_tiles = _mma_outputs(f)
    if asm_tiles:
        return present(asm_tiles, "MMA instructions accumulating into a per-thread register array")
    library = [c for c in mma_calls(f) if hasattr(c, "call")]
    tiles = sorted(n for n in f.lib_names if n.split(".")[-1] in REGISTER_TILE_TYPES or n.split(".")[-1] in FRAGMENT_MAKERS)
    tiles += sorted(c.short for c in f.calls if c.short in FRAGMENT_MAKERS)
    if library and tiles:
        return present(library[:1], f"library MMA accumulating into register fragments ({tiles[0]})")
    return absent("no per-thread register tile (one output per thread)")


REGISTER_TILE_TYPES = {"rt_fl", "rt_bf", "rt_hf", "rt", "crt_fl", "rt_base"}
FRAGMENT_MAKERS = {"make_fragment_C", "partition_fragment_C", "make_fragment_like", "make_tensor_like", "make_rmem_ptr", "partition_fragment_A", "partition_fragment_B"}


def _mma_outputs(f) -> list:
    """Local arrays written by inline MMA instructions at several elements (accumulator tiles)."""
    mma_lines = {(a.loc.file, a.loc.line) for a in f.asm if "mma" in a.text}
    written: dict[int, set] = {}
    hits = []
    for acc in f.accesses:
        if acc.space == "local" and acc.via == "asm" and acc.kind == "store" and (acc.loc.file, acc.loc.line) in mma_lines:
            written.setdefault(acc.obj, set()).add(repr(acc.poly))
            hits.append(acc)
    return hits[:2] if any(len(v) >= 2 for v in written.values()) else []


@RULE.triton
def triton(f):
    if dots(f):
        return not_applicable("tl.dot: the compiler assigns accumulator layouts")
    return absent("Triton source without tl.dot: no register tiles")
