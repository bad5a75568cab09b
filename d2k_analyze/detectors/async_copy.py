"""async_copy: asynchronous global->shared copies.

## What it means
``cp.async`` (PTX or the ``__pipeline_memcpy_async`` / ``cuda::memcpy_async`` /
``cooperative_groups::memcpy_async`` APIs), TMA bulk tensor copies, or Triton tensor-descriptor
loads; in Triton also an explicit ``num_stages >= 2`` on a loop that loads (the compiler then
issues async copies).

## How it is detected
Accesses recorded with ``via = async`` (memcpy_async APIs and ``cp.async`` PTX with its operands
resolved), TMA / bulk-copy PTX, CuTe copy atoms (in the kernel or in the host code that launches it);
Triton: descriptor loads, else the
``num_stages`` convention (undecided when the compiler default applies).

## Not to be confused with
``cp.async.bulk`` used only for stores; a ``__pipeline_memcpy_async`` in dead code.
"""

from ..compiled.ttgir import by_instruction
from ._base import Rule, Signature, absent, present
from ._queries import stages_decision

RULE = Rule("async_copy", Signature(ptx=r"\bcp\.async\S*", sass=r"\b(?:LDGSTS|UTMALDG|UBLKCP)\S*", refutes=True, upgrades=True,
                                    triton=by_instruction(r"\bcp\.async\.(?:ca|cg)\.shared\S*|\bcp\.async\.bulk(?:\.tensor\.\dd)?\.shared\S*")))  # global->shared: cp.async or a TMA load
COPY_ATOMS = ("SM80_CP_ASYNC", "SM90_TMA_LOAD", "SM90_BULK_COPY", "SM100_TMA", "tma.load_async", "tma::load_async", "load_async")


@RULE.cuda
def cuda(f):
    hits = [a for a in f.accesses if a.via == "async"] + f.asm_matching(r"\bcp\.async\b|cp\.async\.bulk")
    hits += f.calls_named("memcpy_async", "__pipeline_memcpy_async", "cp_async_bulk_tensor_2d_global_to_shared", "load_async", "tma_load")
    if hits:
        return present(hits, "asynchronous global->shared copies (cp.async / memcpy_async / TMA)")
    # CuTe copy atoms are usually built by the launching host code and passed in as a type
    atoms = sorted(n for n in f.lib_names_used() | f.host_names if any(h in n for h in COPY_ATOMS))
    if atoms:
        return present([f.loc], f"CuTe async copy atoms: {', '.join(atoms[:3])}")
    return absent("synchronous loads only")


@RULE.triton
def triton(f):
    desc = [a for a in f.accesses if a.via == "descriptor" and a.kind == "load"]
    if desc:
        return present(desc, "tensor-descriptor (TMA) loads")
    return stages_decision(f)
