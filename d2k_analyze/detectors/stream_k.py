"""stream_k (low confidence): MAC-loop iterations divided evenly over a persistent grid with
partial-tile fix-up. Recognised by its bookkeeping (iters_per_tile, per-CTA iteration ranges that
cross tiles) together with a fix-up mechanism (atomics, flags or locks)."""

from __future__ import annotations

from ..parsing import rx
from ._base import absent, present


def detect(facts):
    book = facts.grep(r"(?i)stream_?k|iters_per_(tile|cta|program|sm)|total_(streamk_)?iters|start_iter|end_iter|iter_(begin|end)")
    fixup = [c for c in facts.calls if rx.match(r"^(atomic[A-Z]\w*|atomic_\w+)$", c.short)] or facts.grep(r"(?i)\b(lock|flag|sem)")
    if book and fixup and len({ln.line for ln in book}) >= 2:
        return present(book[:3] + fixup[:1], "stream-K iteration ranges with partial-tile fix-up")
    return absent("no stream-K iteration split")


detect_cuda = detect_triton = detect
