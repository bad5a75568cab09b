"""decoupled_lookback (low confidence): single-pass scan with per-tile status flags (aggregate /
inclusive prefix) and a look-back over predecessors. Library scans (cub, tl.cumsum,
tl.associative_scan) and reduce-then-scan do not count."""

from __future__ import annotations

from ..parsing import rx
from ._base import absent, present


def detect(facts):
    status = facts.grep(r"(?i)status|flag|aggregate|inclusive|look_?back|tile_state|prefix_state")
    atomic = [c for c in facts.calls if rx.match(r"^(atomic[A-Z]\w*|atomic_\w+|__ldcv|ld_acquire\w*)$", c.short)] or facts.grep(r"\bvolatile\b") or facts.grep_asm(r"ld\.(acquire|volatile|relaxed)")
    back = [lp for lp in facts.loops if rx.search(r"--|-=\s*1|-\s*1\b|\bpred\w*|look|prev", lp.header)]
    back += [lp for lp in facts.loops if lp.kind in ("while", "do") and rx.search(r"(?i)flag|status|inclusive|aggregate|pred", lp.header)]
    if status and atomic and back:
        return present(back[:2] + status[:2], "look-back loop over predecessor status flags")
    return absent("no decoupled look-back")


detect_cuda = detect_triton = detect
