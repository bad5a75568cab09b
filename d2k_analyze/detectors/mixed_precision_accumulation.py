"""mixed_precision_accumulation: half/bf16/fp8 operands accumulated in fp32.

## What it means
Low-precision data summed or multiplied into fp32 accumulators: fp32 MMA accumulators, float
locals summing converted loads, Triton ``tl.zeros(..., tl.float32)`` accumulating ``tl.dot``.

## How it is detected
CUDA: some operand is low precision (a load's element type, a template type instantiated with
half/bf16 — including ``AT_DISPATCH_*`` dispatch types — or an MMA PTX type), and a float local,
a float member of a struct local or an element of a float register array accumulates converted
loads or products in a loop or reduction (followed through register arrays and shared tiles where
the conversion happened on the way in), or the MMA accumulates in f32.
Triton: an fp32 zero tile accumulates ``tl.dot`` results, or loads are widened to float32
before a reduction.

## Not to be confused with
fp32 data throughout; half/bf16 accumulators.
"""

import re

from ..facts.expr import Call, Cast, Load, walk
from ..facts.types import base_type, is_float32, is_low_precision
from ._base import Rule, absent, present
from ._queries import cell_of, defs_of, dots, sources, stores_to

RULE = Rule("mixed_precision_accumulation")
MMA_F32 = re.compile(r"(mma|wgmma)\S*\.f32\S*\.(bf16|f16|e4m3|e5m2)")
CONVERTS = ("__bfloat162float", "__half2float", "__bfloat1622float2", "__half22float2", "__low2float", "__high2float")


def low_elem(f, elem: str) -> bool:
    """A low-precision element type, directly or in some instantiation of a template type."""
    return is_low_precision(elem) or any(is_low_precision(t) for t in f.template_types.get(base_type(elem), ()))


def low_access(f, acc) -> bool:
    """Low-precision data: by the access's element type or the object's declared element type
    (a bf16 tensor read as packed ``uint4`` is still bf16 data)."""
    return low_elem(f, acc.elem) or low_elem(f, f.objects[acc.obj].elem)


def _low(f) -> bool:
    if any(low_access(f, a) for a in f.accesses):
        return True
    if any(is_low_precision(t) for ts in f.template_types.values() for t in ts):
        return True
    return any(is_low_precision(t) for t in f.cell_types.values()) or bool(f.asm_matching(r"\.(bf16|f16|e4m3|e5m2)"))


def _widened(f, e) -> bool:
    """``e`` uses low-precision data converted to float (a cast, a conversion intrinsic, or a load
    of a low-precision element flowing into float arithmetic)."""
    for n in walk(e):
        if isinstance(n, Cast) and is_float32(n.type) and any(isinstance(m, Load) for m in walk(n.arg)):
            return True
        if isinstance(n, Call) and n.fn.split(".")[-1] in CONVERTS:
            return True
        if isinstance(n, Load) and n.access < len(f.accesses) and low_access(f, f.accesses[n.access]):
            return True
    feeding = sources(f, e)
    if any(low_access(f, src) for src in feeding if src.space == "global"):
        return True
    # values parked in a register array or staged in a shared tile: low-precision data widened
    # where it was stored there (``As[ty][tx] = __bfloat162float(A[...])``; ``acc += As[..] * Bs[..]``)
    return any(_converts(f, st.value) for src in feeding if src.space in ("local", "shared")
               for st in stores_to(f, src.obj) if st.value is not None)


def _converts(f, e) -> bool:
    """A stored value that is low-precision data made float: a conversion intrinsic, or a cast to
    float of a low-precision load."""
    for n in walk(e):
        if isinstance(n, Call) and n.fn.split(".")[-1] in CONVERTS:
            return True
        if isinstance(n, Cast) and is_float32(n.type) and any(
                isinstance(m, Load) and m.access < len(f.accesses) and low_access(f, f.accesses[m.access]) for m in walk(n.arg)):
            return True
    return False


@RULE.cuda
def cuda(f):
    if not _low(f):
        return absent("no half/bf16/fp8 operands (fp32 throughout)")
    mma = f.asm_matching(MMA_F32.pattern) + [c for c in f.calls if c.short == "mma_sync" and any(is_float32(t) for t in f.cell_types.values())]
    if mma:
        return present(mma, "tensor-core MMA with fp32 accumulators")
    acc = [a for a in f.assigns if _float_target(f, a) and a.old is not None
           and (a.op in ("+=", "-=") or a.old in getattr(a.new, "args", ())) and (_widened(f, a.rhs) or _widened(f, a.new))]
    if acc:
        return present(acc, "low-precision values accumulated in fp32")
    return absent("accumulation stays in low precision")


def _float_target(f, a) -> bool:
    """An fp32 local, or an element of an fp32 register array (``float acc[4]; acc[u] += ...``)."""
    if a.cell is not None:
        return is_float32(f.cell_types.get(a.cell, ""))
    if a.access is None:
        return False
    target = f.accesses[a.access]
    return target.space == "local" and is_float32(target.elem or f.objects[target.obj].elem)


@RULE.triton
def triton(f):
    fp32_dot = [c for c in dots(f) if len(c.call.args) >= 3 or c.call.kwarg("acc") is not None or c.call.kwarg("out_dtype") is not None]
    low_out = [c for c in dots(f) if "float16" in repr(c.call.kwarg("out_dtype")) or _low_accumulator(f, c)]
    if fp32_dot and not low_out:
        return present(fp32_dot, "tl.dot accumulating into an fp32 tile")
    zeros = [c for c in f.calls if c.fn in ("tl.zeros", "tl.full") and "float32" in repr(c.call)]
    if dots(f) and zeros and not low_out:
        return present(dots(f)[:1] + zeros[:1], "fp32 accumulator tile for tl.dot")
    summed = [c for c in f.calls if c.fn in SUMS and any(_widened_tl(a) for a in c.call.args)]
    summed += [a for a in f.assigns if a.old is not None and a.loops and a.cell in _carried(f) and _widened_tl(a.new) and a.op in ("+=", "=")
               and a.old in getattr(a.new, "args", ())]
    if summed:
        return present(summed, "loads widened to float32 before summing")
    return absent("no fp32 accumulation of low-precision data visible")


def _low_accumulator(f, c) -> bool:
    """tl.dot accumulating into a tile that starts as half / bf16 zeros."""
    acc = c.call.args[2] if len(c.call.args) >= 3 else c.call.kwarg("acc")
    cell = cell_of(acc) if acc is not None else None
    inits = [d.new for d in defs_of(f, cell)] if cell is not None else []
    return any(isinstance(v, Call) and v.fn in ("tl.zeros", "tl.full") and re.search(r"float16|bfloat16|fp16|bf16", repr(v)) for v in inits)


SUMS = ("tl.sum", "tl.cumsum", "tl.reduce", "tl.associative_scan")


def _carried(f) -> set[int]:
    return {c for lp in f.loops.values() for c in lp.carried}


def _widened_tl(e) -> bool:
    return any(isinstance(n, Cast) and "float32" in n.type and any(isinstance(m, Load) for m in walk(n.arg)) for n in walk(e))
