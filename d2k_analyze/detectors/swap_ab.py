"""swap_ab: a skinny GEMM's operands swapped so that N feeds the MMA's M side.

## What it means
With a tiny M, the kernel computes tiles of C^T = B·A^T: the operand read from the [N, K] tensor
is the first (M-side) operand of the MMA, the small-M activations are the second, and the result
tile is written back transposed, so the MMA's large side is spent on real rows.

## How it is detected
Triton only. For each ``tl.dot``, the row terms of each operand are found from its loads'
offsets: the ``tl.arange`` and program-id terms whose coefficient is not the unit K step and that
the other operand does not share (a shared term is the K offset or K slice). A global store
whose offset uses those row terms is the C store. Swapped: in that store the first operand's row
terms have unit coefficient (they index C's contiguous columns) while the second operand's row
terms, if any, carry a stride. Stores not indexed by the first operand's row aranges (a split-K
workspace, a ticket counter) are not read.

## Not to be confused with
The ordinary ``tl.dot(a_tile, tl.trans(b_tile))`` (B must be transposed anyway; A's rows then
index C's rows, with the row stride); a kernel that stores the swapped product into an [N, M]
buffer transposed afterwards by the host (the store's N index carries the stride); a GEMV on CUDA
cores (no ``tl.dot``). CUDA MMA fragment roles are not traced: CUDA source is left to the judge.
"""

from ..facts import poly as P
from ..facts.expr import Call, Num, Sym
from ._base import Rule, absent, present
from ._queries import dots, loads_in

RULE = Rule("swap_ab")

_ROW_KINDS = ("arange#", "pid.")  # the terms that can index an operand's rows


def _unit(f, co: P.Poly) -> bool:
    """A unit step: the constant 1, or a stride parameter that every launch binds to
    ``t.stride(1)`` / ``t.stride(-1)`` (the contiguous dimension of a 2-D row-major tensor)."""
    if P.constant_of(co) == 1:
        return True
    keys = P.terms(co)
    if len(keys) != 1 or co != P.poly(Sym(next(iter(keys)))):
        return False
    key = next(iter(keys))
    if not key.startswith("param#") or not f.launches:
        return False
    i = int(key.split("#", 1)[1])
    return all(i < len(lf.bound) and _unit_stride(lf.bound[i]) for lf in f.launches)


def _unit_stride(v) -> bool:
    if isinstance(v, Num):
        return v.v == 1
    return (isinstance(v, Call) and v.fn.endswith("stride") and len(v.args) == 2
            and isinstance(v.args[1], Num) and v.args[1].v in (1, -1))


def _row_terms(f, loads, other_terms: set[str]) -> set[str]:
    """Terms that index an operand's rows: aranges and program ids scaled by something other
    than the unit K step, not shared with the other operand (shared ones are the K offset)."""
    out = set()
    for a in loads:
        for t in P.terms(a.poly):
            if t.startswith(_ROW_KINDS) and t not in other_terms and not _unit(f, P.coeff(a.poly, t)):
                out.add(t)
    return out


def _role(f, poly: P.Poly, left: set[str], right: set[str]) -> str | None:
    """'swapped' / 'ordinary' for a store indexed by the first operand's row aranges, else None
    (stores indexed otherwise, such as a split-K workspace or a ticket counter, say nothing)."""
    here = P.terms(poly)
    lt = {t for t in left & here if t.startswith("arange#")}
    rt = {t for t in right & here if t.startswith("arange#")}
    if not lt:
        return None
    if all(_unit(f, P.coeff(poly, t)) for t in lt) and not any(_unit(f, P.coeff(poly, t)) for t in rt):
        return "swapped"
    return "ordinary"


@RULE.triton
def detect(f):
    for c in dots(f):
        args = c.call.args
        if len(args) < 2:
            continue
        first = [a for a in loads_in(f, args[0]) if a.space == "global"]
        second = [a for a in loads_in(f, args[1]) if a.space == "global"]
        if not first or not second:
            continue
        t_first = set().union(*(P.terms(a.poly) for a in first))
        t_second = set().union(*(P.terms(a.poly) for a in second))
        left = _row_terms(f, first, t_second)
        right = _row_terms(f, second, t_first)
        if not left:
            continue
        for st in f.accesses:
            if st.space != "global" or st.kind not in ("store", "atomic"):
                continue
            if _role(f, st.poly, left, right) == "swapped":
                return present([c, st], "tl.dot's first operand is indexed by the N-side rows, and C is stored with them as its contiguous columns")
    return absent("no tl.dot whose first operand's rows become C's columns")
