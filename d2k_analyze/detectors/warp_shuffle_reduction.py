"""warp_shuffle_reduction: __shfl_*_sync (or cg::reduce / tile.shfl_* / redux.sync / WarpReduce)
used to reduce (or scan). Broadcast-only __shfl_sync(mask, v, 0), fragment exchange and warp votes
are 0. Triton: not decidable when tl.sum/max/reduce/cumsum is used, else 0."""

from __future__ import annotations

from ..parsing import rx
from ._base import absent, first, not_applicable, present
from ._common import triton_reduces

COMBINE = r"\+=|\+|fmaxf|fminf|max\s*\(|min\s*\(|\*=|__hadd|__hmax|combine|merge|op\s*\("


def detect_cuda(facts):
    shuffles = [c for c in facts.calls if rx.match(r"^__shfl_(xor|down|up)_sync$", c.short) or c.short in ("shfl_down", "shfl_xor", "shfl_up")]
    reducing = []
    for c in shuffles:
        line = " ".join(ln.text for ln in facts.lines if ln.file == c.file and c.line <= ln.line <= c.end_line + 1)
        if rx.search(COMBINE, line) or any(lp.line <= c.line <= lp.end_line and rx.search(r">>=|/=|<<=|\*=\s*2|>>\s*1", lp.step) for lp in facts.loops):
            reducing.append(c)
    hits = first(
        reducing,
        [c for c in facts.calls if c.name in ("cg::reduce", "cooperative_groups::reduce", "reduce") and c.args and len(c.args) >= 2 and rx.search(r"warp|tile|tb|g\b", c.args[0])],
        facts.calls_named("__reduce_add_sync", "__reduce_max_sync", "__reduce_min_sync"),
        facts.grep_asm(r"redux\.sync"),
        facts.grep(r"\bWarpReduce\b"),
    )
    return present(hits, "warp shuffles combining values") if hits else absent("no shuffle-based reduction")


def detect_triton(facts):
    if triton_reduces(facts):
        return not_applicable("tl reductions: the compiler emits the shuffles")
    return absent("no reduction")
