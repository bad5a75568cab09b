"""grid_reduction: a reduction over the whole grid in two levels (per-CTA partials, then a combine).

## What it means
Every block/program reduces its share of one large reduction (a slice of a vector, a strip of a
grid-stride walk) to one partial value, and the partials are combined across the grid: atomically
into the result (``atomicAdd`` / ``tl.atomic_add`` of the block's reduced value), by the last block
to finish (partials stored per block, a ticket from an atomic counter, the last one reads them all
back), or by a second kernel launched over the stored partials.

## How it is detected
A global store or atomic whose offset is one location per block (it depends on no thread, lane,
warp, ``tl.arange`` or loop index) and whose value comes out of a reduction (a loop-carried
accumulator, a warp shuffle, a shared-memory tree, ``tl.sum`` / ``tl.max`` / ``tl.reduce``). It
counts when the value is combined atomically; a store to a slot indexed by the block/program id
counts when, after an atomic (the ticket), the same kernel reads that object back at many
offsets (the last block sums the partials) or when the data the block
reduced is a slice of one flat array spread over the grid: loads that stride by the grid size
(``gridDim`` / ``tl.num_programs``), or whose block/program coefficient is the block's own span
(a multiple of ``blockDim``; or ``C``, a constant or a parameter, beside a unit-stride
``threadIdx`` or ``tl.arange`` term, with a launch grid of ``cdiv(n, C)`` for that ``C``).

## Not to be confused with
One value per row stored at the row's block index (a row reduction: the block coefficient is the
row stride, not the block's span); per-element atomics into one accumulator (the value is a raw
load, not a block partial); a single-block reduction (its result's offset has no block index and
nothing is combined); split-K GEMM partials (stored per output element, with thread indices).
"""

from ..facts import poly as P
from ..facts.expr import Call, Op, atoms, walk
from ._base import Rule, absent, present
from ._queries import SHUFFLES, TL_REDUCTIONS, cell_of, constant, is_call

RULE = Rule("grid_reduction")

_PER_ELEMENT = ("tid.", "lane", "warp", "arange", "iter#", "ivar#", "carried#", "phi#", "load:")
_GRID = ("bid.", "pid.")


def _reduced(f, value) -> bool:
    """The value comes out of a reduction: a tl reduction, a shuffle, a shared-memory read (a
    tree's root or the warp partials), or a loop-carried accumulator."""
    keys = atoms(value)
    if "load:shared" in keys:
        return True
    for n in walk(value):
        if isinstance(n, Call) and ((n.fn.startswith("tl.") and is_call(n, TL_REDUCTIONS)) or is_call(n, SHUFFLES)):
            return True
        c = cell_of(n)
        if c is not None and any(c in lp.carried for lp in f.loops.values()):
            return True
    return False


def _one_per_block(a) -> bool:
    return not any(k.startswith(_PER_ELEMENT) for k in atoms(a.off))


def _grid_divides_by(f, coeff) -> bool:
    """Some launch sizes the grid as a data length divided by the block/program coefficient
    ``coeff`` (``cdiv(n, C)``, ``(n + C - 1) / C``): one block/program per ``C``-element chunk of a
    flat array. ``C`` is a constant, or a kernel parameter bound at that launch to the divisor."""
    c = P.constant_of(coeff)
    terms = P.terms(coeff)
    param = next(iter(terms)) if c is None and len(terms) == 1 and P.constant_of(P.coeff(coeff, next(iter(terms)))) == 1 else None
    if c is None and not (param and param.startswith(("param#", "cexpr#"))):
        return False
    for lf in f.launches:
        want = None
        if param is not None:
            i = int(param.split("#")[1])
            want = lf.bound[i] if i < len(lf.bound) else None
            if want is None:
                continue
        for g in lf.grid:
            for n in walk(g):
                if isinstance(n, Op) and n.op in ("cdiv", "/", "//") and len(n.args) == 2:
                    if (c is not None and constant(n.args[1]) == c) or (want is not None and n.args[1] == want):
                        return True
    return False


def _spread_over_grid(f, acc) -> bool:
    """The load reads a slice of one flat array that the whole grid shares out."""
    keys = atoms(acc.off)
    if any(k.startswith(("gdim.", "nprog.")) for k in keys):
        return True  # grid-stride walk
    poly = acc.poly
    for g in (k for k in P.terms(poly) if k.startswith(_GRID)):
        coeff = P.coeff(poly, g)
        if any(k.startswith("bdim.") for k in P.terms(coeff)):
            return True  # block b starts at b * (k * blockDim): a chunk as wide as the block's span
        unit = any(k.startswith(("arange", "tid.")) and P.constant_of(P.coeff(poly, k)) == 1 for k in P.terms(poly))
        if unit and _grid_divides_by(f, coeff):
            return True  # block b reads [b * C, b * C + C) of a vector, and the grid is cdiv(n, C)
    return False


@RULE.both
def detect(f):
    partials = [a for a in f.accesses if a.space == "global" and a.kind in ("store", "atomic") and a.value is not None
                and _one_per_block(a) and _reduced(f, a.value)]
    for a in partials:
        if a.kind == "atomic":
            return present([a], "a reduced per-block value combined atomically into one result")
    for a in partials:
        if not any(k.startswith(_GRID) for k in atoms(a.off)):
            continue
        ticket = [b for b in f.accesses if b.kind == "atomic" and b.id > a.id]
        reread = [b for b in f.accesses if b.obj == a.obj and b.kind == "load" and b.id > a.id and not _one_per_block(b)]
        if ticket and reread:
            return present([a, reread[0]], "per-block partials stored, then read back by the block that finishes")
        spread = [b for b in f.accesses if b.space == "global" and b.kind == "load" and _spread_over_grid(f, b)]
        if spread:
            return present([a, spread[0]], "each block reduces a slice of the flat input to one partial per block")
    return absent("no per-block partial of a grid-wide reduction")
