"""atomics: CUDA atomic* / cuda::atomic_ref / PTX atom.|red. ; Triton tl.atomic_* (live code only)."""

from __future__ import annotations

from ..parsing import rx
from ._base import absent, first, present


def detect_cuda(facts):
    hits = first(
        [c for c in facts.calls if rx.match(r"^atomic[A-Z]\w*$", c.short) or c.short in ("fetch_add", "fetch_max", "fetch_min", "fetch_or", "compare_exchange_strong", "compare_exchange_weak")],
        facts.grep_asm(r"\b(atom|red)\.(global|shared|add|max|min|cas|exch|inc|dec|and|or|xor|relaxed|acquire|release|acq_rel|gpu|sys|cta)"),
        facts.grep(r"\b(cuda::)?atomic_ref\b"),
    )
    return present(hits, "atomic operation in live code") if hits else absent("no atomics in live code")


def detect_triton(facts):
    hits = [c for c in facts.calls if c.short.startswith("atomic_")]
    return present(hits, "tl.atomic_* in live code") if hits else absent("no tl.atomic_* in live code")
