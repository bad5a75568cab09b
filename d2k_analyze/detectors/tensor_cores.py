"""tensor_cores: matrix-multiply instructions on tensor cores.

## What it means
``wmma`` / ``mma.sync`` / ``wgmma`` / ``tcgen05.mma`` (directly, through CuTe/CUTLASS MMA atoms or
ThunderKittens ``mma`` calls), or a live Triton ``tl.dot`` / ``tl.dot_scaled`` except an fp32
``tl.dot`` forced to ``input_precision="ieee"`` (which runs on FMA units; the setting is moot,
and tensor cores are used, when both operands are bf16 / fp16 / fp8 / int8).

## How it is detected
Library MMA calls and PTX MMA mnemonics in live code; for Triton, ``tl.dot`` calls whose
``input_precision`` does not resolve to ``"ieee"`` (``allow_tf32=False`` likewise) under the
launch constants.

## Not to be confused with
An MMA in an unlaunched or constexpr-dead branch (never reached by the interpreter); a header
included but never called; CuTe's ``gemm(A, B, C)`` with no MMA atom (scalar FMAs).
"""

from ..facts.expr import Cast, Load, Num, Str, walk
from ..compiled.ttgir import by_instruction
from ._base import Rule, Signature, absent, present
from ._queries import dots, mma_calls

PTX = r"\b(?:wmma\.mma|mma\.sync|mma\.sp|wgmma\.mma_async|tcgen05\.mma)\S*"
RULE = Rule("tensor_cores", Signature(
    ptx=PTX, sass=r"\b(?:HMMA|HGMMA|IMMA|IGMMA|QGMMA|DMMA|BMMA|UTC\w*MMA)\S*", refutes=True, upgrades=True,
    triton=by_instruction(PTX)))  # wgmma (sm_90), tcgen05.mma (sm_100), mma.sync
ATOM_HINTS = ("SM80_16x8x", "SM90_64x", "SM90_", "SM100_", "GMMA", "UMMA", "MMA_Atom", "make_tiled_mma", "TiledMMA", "SM75_16x8x", "SM70_8x8x")


def _fma_gemm(c) -> bool:
    """CuTe's ``gemm(A, B, C)`` without a TiledMMA: the universal FMA path (a tensor-core gemm
    names its MMA first, ``gemm(tiled_mma, A, B, C)``)."""
    return getattr(c, "short", "") == "gemm" and len(c.call.args) == 3


@RULE.cuda
def cuda(f):
    hits = [c for c in mma_calls(f) if not _fma_gemm(c)]
    if hits:
        return present(hits, "tensor-core MMA instruction or API in live code")
    atoms = sorted(n for n in f.lib_names_used() if any(h in n for h in ATOM_HINTS))
    if atoms:
        return present([f.loc], f"CuTe/CUTLASS MMA atoms: {', '.join(atoms[:3])}")
    return absent("no wmma / mma.sync / wgmma / tcgen05 in live code")


LOW_PRECISION = ("bfloat16", "float16", "float8", "int8")


def _low_precision_operands(f, call) -> bool:
    """Both operands read as 16-bit or narrower types: the fp32-only ``ieee`` setting is moot."""
    args = call.call.args[:2]
    if len(args) < 2:
        return False

    def narrow(e) -> bool:
        casts = [n.type for n in walk(e) if isinstance(n, Cast)]
        loads = [f.accesses[n.access].elem for n in walk(e) if isinstance(n, Load) and n.access < len(f.accesses)]
        return any(t in x for x in casts[:1] + loads for t in LOW_PRECISION)
    return all(narrow(a) for a in args)


def _ieee(call) -> bool:
    prec = call.call.kwarg("input_precision")
    if isinstance(prec, Str) and prec.v == "ieee":
        return True
    tf32 = call.call.kwarg("allow_tf32")
    return isinstance(tf32, Num) and tf32.v is False


@RULE.triton
def triton(f):
    calls = dots(f)
    live = [c for c in calls if not _ieee(c) or _low_precision_operands(f, c)]
    if live:
        return present(live, "live tl.dot (tensor cores)")
    if calls:
        return absent("tl.dot forced to input_precision='ieee' (FMA, not tensor cores)", calls)
    return absent("no tl.dot in live code")
