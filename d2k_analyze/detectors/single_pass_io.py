"""single_pass_io: every input read from global memory once, every output written once.

## What it means
Row- and tile-streaming kernels (normalisations, softmax, losses, elementwise maps, scans) that
load their data once, keep it on chip for every pass and store once. GEMM-like kernels are 0 by
definition (operand panels are re-read for every output tile).

## How it is detected
Global accesses grouped by memory object: two loads of one object in sibling loops (or a load
after the loop that already read it) are a re-read; a store that is read back, or an object
stored in two passes, is 0. GEMM-like kernels (a multiply-accumulate / MMA loop) are 0.
A load after a loop that reads on from where the loop stopped is not a re-read: the loop steps
by S from its start over a whole number of steps to its bound, and the later load's offset is the
loop's with the induction value replaced by that bound (a full-chunk main loop, then its ragged
tail). Neither are two loads on opposite sides of one branch (a vector path and its fallback), nor
a pipeline's prologue (a loop that only issues asynchronous copies) and the refills of the loop
after it.

## Not to be confused with
Two loads of neighbouring elements in the same pass, or a main loop and its tail over disjoint
ranges.
"""

from fractions import Fraction

from ..facts import poly as P
from ..facts.expr import Op, flatten
from ._base import Rule, absent, present
from ._queries import is_gemm

RULE = Rule("single_pass_io")
GEMM_REASON = "GEMM-style reduction loop: operands are re-read across output tiles by design"


def _last_inside(f) -> dict[int, int]:
    last: dict[int, int] = {}
    for a in f.accesses:
        for lid in a.loops:
            last[lid] = max(last.get(lid, -1), a.id)
    for c in f.calls:
        pass
    return last


def separate_passes(f, a, b, last) -> bool:
    """Whether two accesses run in different passes over the data."""
    common = 0
    while common < min(len(a.loops), len(b.loops)) and a.loops[common] == b.loops[common]:
        common += 1
    rest_a, rest_b = a.loops[common:], b.loops[common:]
    if rest_a and rest_b:
        return True  # sibling loops
    first, second = (a, b) if a.id < b.id else (b, a)
    inner = (first.loops[common:] or [None])[0]
    return inner is not None and not second.loops[common:] and second.id > last.get(inner, -1)


def _whole_steps(span: P.Poly, step: P.Poly) -> bool:
    """Whether ``span`` is a whole number of ``step``s: a constant multiple, one term whose atoms
    include the step's with an integer ratio of coefficients (``(n // S) * S`` over ``S``), or
    ``n - n % S``."""
    s, t = P.constant_of(span), P.constant_of(step)
    if s is not None and t:
        return (s / t).denominator == 1
    if P.quotient(span, step) is not None:
        return (Fraction(span[0][1]) / step[0][1]).denominator == 1
    return any(_is_remainder_cut(span, m, c, step) for m, c in span)


def _is_remainder_cut(span: P.Poly, monomial: tuple, coeff: Fraction, step: P.Poly) -> bool:
    """``span`` = n - (n % step), with ``monomial`` the opaque ``n % step`` term."""
    e = P.opaque_expr(monomial[0]) if len(monomial) == 1 and coeff == -1 else None
    if not (isinstance(e, Op) and e.op == "%" and len(e.args) == 2 and P.poly(e.args[1]) == step):
        return False
    return P.add(P.poly(e.args[0]), P.term(monomial[0]), -1) == span


def continues(f, a, b) -> bool:
    """Whether the later of two loads reads on from where the earlier one's loop stopped: the
    earlier is inside one loop more than the later, that loop adds ``step`` per iteration from
    ``init`` over a whole number of steps up to ``bound``, and the later offset equals the earlier
    one with the induction value (``init + step * iter``) replaced by ``bound``."""
    first, second = (a, b) if a.id < b.id else (b, a)
    extra = [lid for lid in first.loops if lid not in second.loops]
    if len(extra) != 1 or first.loops[:-1] != second.loops:
        return False
    loop = f.loops[extra[0]]
    if loop.update != "add" or None in (loop.init, loop.bound, loop.step):
        return False
    init, bound, step = P.poly(loop.init), P.poly(loop.bound), P.poly(loop.step)
    induction = P.add(init, P.mul(step, P.term(f"iter#{loop.id}")))
    rest = P.add(first.poly, induction, -1)
    if P.mentions(rest, f"iter#{loop.id}"):
        return False
    return P.add(second.poly, bound, -1) == rest and _whole_steps(P.add(bound, init, -1), step)


def _spread(accs: list) -> list:
    """The first and last access of each loop nest: whether two accesses run in separate passes
    depends only on their loop nests and their order, so these stand for all of them (and the
    pairwise check stays linear in the kernel's length)."""
    keep: dict[tuple, list] = {}
    for a in accs:
        ends = keep.setdefault(a.loops, [a, a])
        if a.id < ends[0].id:
            ends[0] = a
        if a.id > ends[1].id:
            ends[1] = a
    return sorted({x.id: x for ends in keep.values() for x in ends}.values(), key=lambda x: x.id)


ASYNC_FILLS = ("async", "tma")


def exclusive(a, b) -> bool:
    """Whether two accesses sit on opposite sides of one branch (a vector path and its scalar
    fallback, a bulk copy and the threads' own copy): one run takes only one of them."""
    facts_a, facts_b = _conjuncts(a.guards), _conjuncts(b.guards)
    return any(Op("not", (g,)) in facts_b for g in facts_a) or any(Op("not", (g,)) in facts_a for g in facts_b)


def _conjuncts(guards) -> set:
    """Every condition a guard list asserts, ``c && d`` split into ``c`` and ``d``."""
    out = set()
    for g in guards:
        out.update(flatten("and", g) if isinstance(g, Op) and g.op == "and" else (g,))
    return out


def prologue(f, a, b) -> bool:
    """Whether the earlier of two asynchronous fills is a pipeline's prologue: a loop that only
    issues asynchronous copies (nothing is consumed or stored in it) before the loop whose
    refills continue the same stream of tiles."""
    first, second = (a, b) if a.id < b.id else (b, a)
    if first.via not in ASYNC_FILLS or second.via not in ASYNC_FILLS:
        return False
    common = 0
    while common < min(len(first.loops), len(second.loops)) and first.loops[common] == second.loops[common]:
        common += 1
    if len(first.loops) <= common:
        return False
    loop = first.loops[common]
    return all(x.via in ASYNC_FILLS for x in f.accesses if loop in x.loops)


@RULE.both
def detect(f):
    if is_gemm(f):
        return absent(GEMM_REASON, [f.loops[i] for i in sorted(f.loops)][:1])
    last = _last_inside(f)
    glob = [a for a in f.accesses if a.space == "global"]
    reads = [a for a in glob if a.kind in ("load", "rmw")]
    if not reads:
        return absent("no global loads found")
    by_obj: dict[int, list] = {}
    for a in reads:
        by_obj.setdefault(a.obj, []).append(a)
    for accs in by_obj.values():
        accs = _spread(accs)
        for i, a in enumerate(accs):
            for b in accs[i + 1:]:
                if separate_passes(f, a, b, last) and not continues(f, a, b) and not exclusive(a, b) and not prologue(f, a, b):
                    return absent("an input is loaded again in a later pass", [a, b])
    writes: dict[int, list] = {}
    for a in glob:
        if a.kind in ("store", "rmw"):
            writes.setdefault(a.obj, []).append(a)
    for obj, ws in writes.items():
        ws = _spread(ws)
        back = [r for r in _spread(by_obj.get(obj, [])) if any(r.id > w.id and separate_passes(f, w, r, last) and not exclusive(w, r) for w in ws)]
        if back:
            return absent("an output is written and read back", ws[:1] + back[:1])
        for i, w in enumerate(ws):
            if any(separate_passes(f, w, v, last) and not exclusive(w, v) for v in ws[i + 1:]):
                return absent("an output is written in two passes", ws[:2])
    return present([accs[0] for accs in by_obj.values()][:3], "each input loaded once per block; outputs written once")
