"""tensor_cores: wmma / mma.sync / wgmma / tcgen05 (CUDA) or a live tl.dot (Triton), except an
fp32 tl.dot forced to input_precision="ieee" (that runs on FMA units)."""

from __future__ import annotations

from ._base import absent, first, present
from ._common import dots

CUDA_CALLS = ("mma_sync", "wmma::mma_sync", "nvcuda::wmma::mma_sync", "warpgroup::mma", "mma_AB", "mma_ABt", "wgmma", "umma")
CUDA_IDENTS = r"^(SM80_16x8x\d+\w*|SM90_\w*(GMMA|SS|RS)\w*|SM100_\w*UMMA\w*|GMMA|UMMA|MMA_Atom|make_tiled_mma|TiledMMA)$"


def detect_cuda(facts):
    hits = first(
        facts.grep_asm(r"\b(mma\.sync|wgmma\.|tcgen05\.mma|mma\.sp)"),
        facts.calls_named(*CUDA_CALLS),
        [c for c in facts.calls if c.short in ("mma_sync",) or c.name.endswith("::gemm") and "mma" in c.text.lower()],
    )
    if hits:
        return present(hits, "tensor-core MMA instruction or API in live code")
    import re

    ids = [i for i in facts.idents if re.match(CUDA_IDENTS, i)]
    if ids:
        lines = facts.grep(r"\b(" + "|".join(map(re.escape, sorted(ids))) + r")\b")
        return present(lines or [], f"CuTe/CUTLASS MMA atoms: {', '.join(sorted(ids))}")
    return absent("no wmma / mma.sync / wgmma / tcgen05 in live code")


def _ieee(call, facts) -> bool:
    prec = (call.kw("input_precision") or "").strip("'\" ")
    if prec in ("ieee",):
        return True
    if prec and prec in facts.constexprs:
        vals = facts.constexpr_values(prec)
        return bool(vals) and all(str(v) == "ieee" for v in vals)
    return (call.kw("allow_tf32") or "").strip() == "False"


def detect_triton(facts):
    calls = dots(facts)
    live = [c for c in calls if not _ieee(c, facts)]
    if live:
        return present(live, "live tl.dot (tensor cores)")
    if calls:
        return absent("tl.dot forced to input_precision='ieee' (FMA, not tensor cores)", calls)
    return absent("no tl.dot in live code")
