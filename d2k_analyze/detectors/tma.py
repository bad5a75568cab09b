"""tma: copies through the Tensor Memory Accelerator (bulk tensor and plain bulk copies).

## What it means
``cp.async.bulk.tensor`` PTX, ``CUtensorMap`` descriptors used by the kernel, CuTe ``SM90_TMA_*``
atoms, ThunderKittens ``tma::`` loads; Triton tensor descriptors (``tl.make_tensor_descriptor``,
host ``TensorDescriptor``) whose ``load``/``store`` the kernel calls. Plain bulk copies
(``cp.async.bulk`` between global and shared memory, without ``.tensor``, and ``cp.reduce.async.bulk``)
run on the same unit and count.

## How it is detected
Bulk copy PTX (tensor or not; not the group commit/wait instructions alone, nor a plain
``cp.async.bulk.prefetch.L2``, which moves nothing into shared memory) or TMA library calls
in live code; Triton accesses recorded with ``via = descriptor``.

## Not to be confused with
Block pointers (``tl.make_block_ptr``) and descriptors whose data still goes through pointers.
"""

from ..compiled.ttgir import by_instruction
from ._base import Rule, Signature, absent, present

PTX = r"\bcp(?:\.reduce)?\.async\.bulk\.(?:tensor|shared|global)\S*"
RULE = Rule("tma", Signature(ptx=PTX, sass=r"\b(?:UTMALDG|UTMASTG|UTMAREDG|UTMAPF|UBLKCP|UBLKRED)\S*", refutes=True, upgrades=True,
                             triton=by_instruction(PTX)))
TMA_NAMES = ("SM90_TMA", "SM100_TMA", "tma.load_async", "tma.store_async", "tma::load_async", "cp_async_bulk_tensor", "make_tma_copy", "cuTensorMapEncodeTiled")


@RULE.cuda
def cuda(f):
    hits = f.asm_matching(PTX) + [c for c in f.calls if any(t.replace("::", ".") in c.fn for t in TMA_NAMES)]
    if hits:
        return present(hits, "bulk copies through the TMA unit")
    names = sorted(n for n in f.lib_names_used() if any(t.replace("::", ".") in n for t in TMA_NAMES))
    if names and any("load" in n or "copy" in n for n in names):
        return present([f.loc], f"TMA copy atoms: {', '.join(names[:3])}")
    return absent("no TMA copies")


@RULE.triton
def triton(f):
    hits = [a for a in f.accesses if a.via == "descriptor"]
    return present(hits, "tensor-descriptor loads/stores (TMA)") if hits else absent("no tensor-descriptor loads")
