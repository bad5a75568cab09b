"""tma: Tensor Memory Accelerator copies (cp.async.bulk(.tensor), CUtensorMap __grid_constant__
parameters used by the kernel, CuTe SM90_TMA_*; Triton tensor descriptors). Block pointers
(tl.make_block_ptr) and descriptors whose loads go through pointers do not count."""

from __future__ import annotations

import re

from ..parsing import rx
from ._base import absent, first, present

TRITON_MAKERS = ("make_tensor_descriptor", "_experimental_make_tensor_descriptor")
TRITON_LEGACY = ("_experimental_descriptor_load", "_experimental_descriptor_store", "load_tensor_descriptor")


def descriptor_loads(facts):
    """Descriptor loads/stores in a Triton unit: ``desc.load(...)`` on a descriptor variable."""
    descs = {a.target for a in facts.assigns if rx.search(r"\b(" + "|".join(TRITON_MAKERS) + r")\b", a.value)}
    descs |= {name for name, ann in facts.params if rx.search(r"(?i)desc", name) or "TensorDescriptor" in ann}
    host_descs = facts.grep_host(r"TensorDescriptor")
    out = [c for c in facts.calls if c.short in TRITON_LEGACY]
    for c in facts.calls:
        base = c.name.rsplit(".", 1)[0] if "." in c.name else ""
        if c.short in ("load", "store", "atomic_add", "gather", "scatter") and base and (base in descs):
            if base in {a.target for a in facts.assigns} or host_descs or rx.search(r"(?i)desc", base):
                out.append(c)
    return out


def detect_triton(facts):
    hits = descriptor_loads(facts)
    return present(hits, "tensor-descriptor loads/stores (TMA)") if hits else absent("no tensor-descriptor loads")


def detect_cuda(facts):
    tmaps = [name for name, typ in facts.params if "CUtensorMap" in typ]
    used = [ln for ln in facts.lines if any(rx.search(rf"(?<![\w.]){re.escape(t)}\b", ln.text) for t in tmaps) and not rx.search(r"__global__|\bvoid\b", ln.text)]
    ids = facts.idents_matching(r"^(SM90_TMA_(LOAD|STORE)\w*|make_tma_copy|make_tma_atom|cp_async_bulk_tensor\w*|tma_load\w*|tma_store\w*)$")
    hits = first(
        facts.grep_asm(r"cp\.async\.bulk|cp\.reduce\.async\.bulk"),
        facts.grep(r"\b(" + "|".join(sorted(ids)) + r")\b") if ids else [],
        [c for c in facts.calls if rx.search(r"tma::(load|store)_async", c.name)],
        used,
    )
    return present(hits, "TMA bulk tensor copies") if hits else absent("no TMA copies in the kernel")
