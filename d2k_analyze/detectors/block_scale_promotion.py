"""block_scale_promotion: each K block's MMA partial is scaled by that block's scales and added
into an fp32 accumulator inside the K loop.

## What it means
Block-scaled (DeepSeek-V3 style) low-precision GEMM done the promoted way: per K step the MMA
produces a fresh partial over one scale block, the partial is multiplied by scale factors loaded
for that K block, and the product is added to the loop-carried accumulator.

## How it is detected
In a GEMM loop (one around a ``tl.dot`` / MMA), an accumulation of a loop-carried value (or an
``+=`` into a register accumulator) whose added term is a product of (a) the result of a
``tl.dot`` without an accumulator argument (Triton), or values that are not global loads
(CUDA register fragments written by the MMA in the same loop), and (b) a load whose offset
moves with that loop's iteration (the K block's scale) and which is not an operand of the MMA.

## Not to be confused with
Dequantising the operand tiles before the MMA (``tl.dot(a * sa[:, None], ...)``): the scales
multiply the operands, not the partial; one scale applied after the loop; a loop-invariant
scale (per tensor or per row) multiplied inside the loop; ``tl.dot(a, b, acc)`` accumulating
the whole K range in the MMA.
"""

from ..facts import poly as P
from ..facts.expr import Call, Load, Op, atoms, flatten, walk
from ._base import Rule, absent, present
from ._queries import dots, gemm_loops, mma_calls, with_enclosing

RULE = Rule("block_scale_promotion")


def _moves_with(f, load: Load, lid: int) -> bool:
    if load.access >= len(f.accesses):
        return False
    acc = f.accesses[load.access]
    keys = atoms(acc.off) | set(P.terms(acc.poly))
    return any(k in (f"iter#{lid}", f"ivar#{lid}") or (k.startswith("carried#") and k.endswith(f"@{lid}")) for k in keys)


def _operand_loads(f, lid: int) -> set[int]:
    out = set()
    for c in dots(f):
        if lid in c.loops:
            out |= {n.access for a in c.call.args[:2] for n in walk(a) if isinstance(n, Load)}
    return out


def _scaled_terms(e, old):
    """Products added to ``old`` in ``e`` (``old + p * s`` or ``p * s + old``)."""
    terms = flatten("+", e)
    if old not in terms:
        return []
    return [t for t in terms if t != old and isinstance(t, Op) and t.op == "*"]


def _factors(t):
    return flatten("*", t)


def _is_partial_dot(n) -> bool:
    return isinstance(n, Call) and n.fn == "tl.dot" and len(n.args) < 3 and n.kwarg("acc") is None


@RULE.triton
def triton(f):
    loops = with_enclosing(f, gemm_loops(f))
    for lid in loops:
        operands = _operand_loads(f, lid)
        for a in f.assigns:
            if lid not in a.loops or a.old is None or a.cell not in f.loops[lid].carried:
                continue
            for t in _scaled_terms(a.new, a.old):
                fs = _factors(t)
                part = [x for x in fs if any(_is_partial_dot(n) for n in walk(x))]
                scale = [n for x in fs if x not in part for n in walk(x) if isinstance(n, Load)
                         and n.access not in operands and _moves_with(f, n, lid)]
                if part and scale:
                    return present([a], "per-K-block tl.dot partial times scales loaded for that K block, added to the carried accumulator")
    return absent("no MMA partial is scaled per K block inside the K loop")


@RULE.cuda
def cuda(f):
    mma_loops = {l for c in mma_calls(f) for l in c.loops}
    if not mma_loops:
        return absent("no tensor-core MMA")
    mac_operand = {x.id for a in f.accesses if a.kind in ("load", "rmw") and a.space == "shared" for x in [a]}
    for lid in sorted(mma_loops):
        for a in f.assigns:
            if lid not in a.loops or a.old is None:
                continue
            if not (a.op in ("+=",) or a.old in flatten("+", a.new)):
                continue
            terms = [a.rhs] if a.op == "+=" else _scaled_terms(a.new, a.old)
            for t in terms:
                if not (isinstance(t, Op) and t.op == "*"):
                    continue
                fs = _factors(t)
                scale = [x for x in fs if any(isinstance(n, Load) and _moves_with(f, n, lid) and n.access not in mac_operand for n in walk(x))]
                regs = [x for x in fs if x not in scale and not any(isinstance(n, Load) and n.space == "global" for n in walk(x))]
                if scale and regs:
                    return present([a], "MMA fragment times per-K-block scales added into an accumulator in the MMA's K loop")
    return absent("no MMA partial is scaled per K block inside the K loop")
