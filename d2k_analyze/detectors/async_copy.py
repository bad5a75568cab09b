"""async_copy: cp.async / memcpy_async / TMA in CUDA; Triton tensor-descriptor loads, or the
num_stages convention (explicit num_stages >= 2 with a loop that loads)."""

from __future__ import annotations

from ._base import absent, first, present
from ._common import stages_decision
from .tma import descriptor_loads

CUDA_CALLS = ("__pipeline_memcpy_async", "memcpy_async", "cp_async", "cp_async_bulk", "cp_async_bulk_tensor_2d_global_to_shared",
              "cp_async_bulk_tensor_3d_global_to_shared", "load_async")
IDENTS = r"^(SM80_CP_ASYNC\w*|SM90_TMA_LOAD\w*|SM90_BULK_COPY\w*)$"


def detect_cuda(facts):
    ids = facts.idents_matching(IDENTS)
    hits = first(
        facts.grep_asm(r"\bcp\.async\b|cp\.async\.bulk"),
        [c for c in facts.calls_named(*CUDA_CALLS) if c.short != "load_async" or "tma" in c.name],
        facts.grep(r"\b(" + "|".join(sorted(ids)) + r")\b") if ids else [],
    )
    return present(hits, "asynchronous global->shared copy") if hits else absent("only synchronous loads")


def detect_triton(facts):
    desc = descriptor_loads(facts)
    if desc:
        return present(desc, "tensor-descriptor (TMA) loads")
    return stages_decision(facts)
