"""smem_transpose: a tile changes layout on chip, through shared memory, between coalesced global sides.

## What it means
A block loads a tile from global memory with adjacent threads on adjacent addresses, writes it
into shared memory, and after a barrier reads it back with the roles of the thread indices
swapped (the thread index that walked along a shared row on the way in walks down a shared
column on the way out), then stores what it read to global memory, again with adjacent threads
on adjacent addresses. The transpose (or any 2-D layout change) happens in shared memory, so
neither the global reads nor the global writes are strided.

## How it is detected
CUDA: a shared object with a store whose value was loaded from global memory and a load whose
value is stored to global memory (not through a multiply-accumulate), where the lane's element stride in shared memory differs
between the two: 1 on one side and a row pitch (two or more elements, or a symbolic pitch) on the
other. The global load and store themselves must have a lane stride of one (both sides
coalesced). Triton: source has no shared memory, so a kernel that reorders a 2-D tile
(``tl.trans`` / ``tl.permute`` of loaded data, or a load and a store whose unit-stride axes
differ) is undecided and everything else is 0; the compiled layer reads TTGIR: a
``ttg.convert_layout`` between blocked layouts of different ``order`` with shared-memory
instructions in the PTX is the staging.

## Not to be confused with
Operand tiles read by a multiply-accumulate (``smem_tiling``); a row cached and read back at the
same index pattern; a reduction's scratch; a 1-D reversal or shift (stride -1 or 1 both ways);
a tile staged but read back at the same pattern, leaving the global store strided.
"""

import re

from ..compiled.ttgir import Reading, TritonIR
from ..facts import poly as P
from ._base import Rule, Signature, absent, not_applicable, present
from ._queries import loads_in, mac_sources, sources

_CONVERT = re.compile(r"ttg\.convert_layout [^\n]*: tensor<\d+x\d+x\w+, (#[\w.]+)> -> tensor<\d+x\d+x\w+, (#[\w.]+)>")


def _compiled(ir: TritonIR) -> Reading:
    """Triton: a 2-D ``ttg.convert_layout`` between blocked layouts whose fastest dimension
    differs, lowered through shared memory (``st.shared`` / ``ld.shared`` in the PTX)."""
    flips = []
    for line in ir.ttgir.splitlines():
        m = _CONVERT.search(line)
        if not m:
            continue
        a, b = ir.layouts.get(m.group(1)), ir.layouts.get(m.group(2))
        if a and b and a.order and b.order and a.order[0] != b.order[0]:
            flips.append(line.strip()[:160])
    if not flips:
        return Reading(False, (), "no layout change between differently ordered tiles")
    smem = ir.lines(r"\b(?:st|ld|stmatrix|ldmatrix)\.shared", "ptx", 2)
    if smem:
        return Reading(True, tuple(flips[:1]) + smem[:1], "tile re-laid out through shared memory")
    return Reading(None, tuple(flips[:1]), "layout change without visible shared-memory traffic")


RULE = Rule("smem_transpose", Signature(triton=_compiled))


def _stride(acc):
    c = acc.thread_stride()
    return P.constant_of(c) if c else 0, c


def _pitch_vs_unit(a, b) -> bool:
    """One side walks shared memory with unit lane stride, the other with a row pitch."""
    (ca, pa), (cb, pb) = _stride(a), _stride(b)
    if ca is None and cb is None:
        return False
    if ca == 1 or cb == 1:
        other, poly = (cb, pb) if ca == 1 else (ca, pa)
        if other is None:
            return bool(poly) and P.show(poly) != "1"  # a symbolic pitch (TILE + 1 unbound)
        return abs(other) >= 2
    return False


@RULE.cuda
def cuda(f):
    shared = sorted({a.obj for a in f.accesses if a.space == "shared"})
    if not shared:
        return absent("no shared memory")
    gstores = [a for a in f.accesses if a.space == "global" and a.kind == "store" and a.value is not None]
    macs = {x.id for x in mac_sources(f)}
    for obj in shared:
        fills = [a for a in f.accesses if a.obj == obj and a.kind == "store" and a.value is not None
                 and any(x.space == "global" and x.kind == "load" for x in loads_in(f, a.value))]
        if not fills:
            continue
        # reads that feed a multiply-accumulate are operands (smem_tiling), not moved data
        reads = {a.id: a for a in f.accesses if a.obj == obj and a.kind == "load" and a.id not in macs}
        for st in gstores:
            back = [reads[x.id] for x in sources(f, st.value) if x.id in reads]
            for r in back:
                for w in fills:
                    if not _pitch_vs_unit(w, r):
                        continue
                    src = [x for x in loads_in(f, w.value) if x.space == "global"]
                    if _stride(st)[0] == 1 and any(_stride(x)[0] == 1 for x in src):
                        return present(src[:1] + [w, r, st], "tile written to shared memory along rows and read back along columns, both global sides unit-stride")
    return absent("shared memory is not used to change the layout between coalesced global sides")


@RULE.triton
def triton(f):
    loads = {a.id: a for a in f.accesses if a.space == "global" and a.kind == "load"}
    reorders = [c for c in f.calls if c.short in ("trans", "permute") and c.fn.startswith("tl.")
                and any(x.id in loads for x in sources(f, c.call))]
    if reorders:
        return not_applicable("the compiler decides whether the tl.trans / tl.permute layout change goes through shared memory")
    for st in (a for a in f.accesses if a.space == "global" and a.kind == "store" and a.value is not None):
        unit_st = {k for k in P.terms(st.poly) if k.startswith("arange") and P.constant_of(P.coeff(st.poly, k)) == 1}
        for ld in (x for x in sources(f, st.value) if x.id in loads):
            unit_ld = {k for k in P.terms(ld.poly) if k.startswith("arange") and P.constant_of(P.coeff(ld.poly, k)) == 1}
            if unit_st and unit_ld and not unit_st & unit_ld:
                return not_applicable("a 2-D tile stored along another axis than it was loaded: the compiler decides the staging")
    return absent("no 2-D tile changes layout between its load and its store")
