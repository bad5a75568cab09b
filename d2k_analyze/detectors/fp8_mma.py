"""fp8_mma: the tensor-core MMA consumes 8-bit float (e4m3 / e5m2) operands.

## What it means
The matrix multiply itself runs on fp8 data: ``mma.sync`` / ``wgmma`` with ``.e4m3`` / ``.e5m2``
operand types, CuTe/CUTLASS fp8 MMA atoms, or a Triton ``tl.dot`` whose operands are
``float8e4nv`` / ``float8e5`` tiles (cast with ``.to(tl.float8e4nv)``, or raw loads of tensors
the launching host code declares fp8), or ``tl.dot_scaled`` with an ``e4m3`` / ``e5m2`` format.

## How it is detected
CUDA: PTX MMA mnemonics with an fp8 operand type in live inline asm, or fp8 MMA atoms among
the library names. Triton: a live ``tl.dot`` whose two operands are each either a cast to a
float8 type or a load read as it is (no cast, no arithmetic; a transpose is fine) while the
host code that launches the kernel names a ``torch.float8_*`` dtype; ``tl.dot_scaled`` with an
fp8 format string. A ``tl.dot`` with an operand cast to bf16/fp16/fp32 or computed from its load
(dequantised) is absent; raw loads with no fp8 dtype anywhere in sight are undecided.

## Not to be confused with
Dequantising fp8 to bf16/fp16 before a bf16 MMA (``tl.dot(a.to(tl.bfloat16) * s, ...)``); fp8
used only for storage of the output; int8 MMA (``.s8``).
"""

from ..facts.expr import Attr, Call, Cast, Load, Str, walk
from ._base import Rule, Signature, absent, not_applicable, present
from ._queries import dots

PTX = r"\b(?:mma\.sync|wgmma\.mma_async|tcgen05\.mma)\S*\.(?:e4m3|e5m2)"
RULE = Rule("fp8_mma", Signature(ptx=PTX, sass=r"\bQGMMA\S*|\bHMMA\S*\.E4M3\S*|\bHMMA\S*\.E5M2\S*", upgrades=True))
FP8 = ("float8", "fp8", "e4m3", "e5m2")
WIDE = ("bfloat16", "float16", "float32", "float64", "fp16", "bf16", "fp32")


@RULE.cuda
def cuda(f):
    hits = f.asm_matching(PTX)
    if hits:
        return present(hits, "fp8 (e4m3/e5m2) tensor-core MMA in live inline asm")
    atoms = sorted(n for n in f.lib_names_used() if ("MMA" in n or "GMMA" in n) and ("E4M3" in n or "E5M2" in n))
    if atoms:
        return present([f.loc], f"fp8 MMA atoms: {', '.join(atoms[:3])}")
    return absent("no fp8 MMA instruction in live code")


def _operand(f, e) -> str:
    """'fp8' (cast to a float8 type or a load whose element type is fp8), 'raw' (a load read as
    it is, maybe transposed), 'wide' (cast to a 16/32-bit type or computed from loads), '?'."""
    while isinstance(e, Attr) and e.name == "T" or isinstance(e, Call) and e.fn in ("tl.trans", "tl.permute") and e.args:
        e = e.base if isinstance(e, Attr) else e.args[0]
    if isinstance(e, Cast):
        if any(t in e.type for t in FP8):
            return "fp8"
        return "wide" if any(t in e.type for t in WIDE) else "?"
    if isinstance(e, Load):
        elem = f.accesses[e.access].elem if e.access < len(f.accesses) else ""
        return "fp8" if any(t in elem for t in FP8) else "raw"
    if any(isinstance(n, Cast) and any(t in n.type for t in WIDE) for n in walk(e)):
        return "wide"
    if any(isinstance(n, Load) for n in walk(e)):
        return "wide"  # arithmetic on the loaded values before the MMA: dequantised
    return "?"


@RULE.triton
def triton(f):
    calls = dots(f)
    if not calls:
        return absent("no tl.dot in live code")
    host_fp8 = any("float8" in n for n in f.host_names)
    undecided = []
    for c in calls:
        if c.call.fn == "tl.dot_scaled":
            if any(isinstance(n, Str) and n.v in ("e4m3", "e5m2") for n in walk(c.call)):
                return present([c], "tl.dot_scaled with an fp8 operand format")
            continue
        kinds = [_operand(f, x) for x in c.call.args[:2]]
        if len(kinds) == 2 and all(k == "fp8" or (k == "raw" and host_fp8) for k in kinds):
            return present([c], "tl.dot on fp8 tiles" + (" (raw loads of fp8 tensors)" if "raw" in kinds else ""))
        if "wide" not in kinds:
            undecided.append(c)
    if undecided:
        return not_applicable("tl.dot on raw loads whose element type the source does not show")
    return absent("tl.dot operands are converted to 16/32-bit floats before the MMA", calls)
