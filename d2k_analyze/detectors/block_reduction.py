"""block_reduction: a reduction across the whole block: a shared-memory tree (stride halving with
__syncthreads) or two-level (warp shuffles, warp partials in shared memory, then a final combine),
or cub::BlockReduce. Warp-only reductions, thread-0 serial loops and shared atomics are 0.
Triton: not decidable when tl.sum/max/reduce is used (the compiler lowers it), else 0."""

from __future__ import annotations

import re

from ..parsing import rx
from ._base import absent, not_applicable, present
from ._common import shared_names, thread_vars, triton_reduces


def detect_triton(facts):
    if triton_reduces(facts):
        return not_applicable("tl reductions: the compiler chooses the lowering")
    return absent("no reduction")


def detect_cuda(facts):
    if facts.grep(r"\bBlockReduce\b|block_reduce\w*|blockReduce\w*") and facts.calls:
        cub = facts.grep(r"\bBlockReduce\b")
        if cub:
            return present(cub, "cub::BlockReduce")
    # A tree: a halving loop with a barrier inside that combines element [tid + stride].
    syncs = facts.calls_named("__syncthreads", "sync", "barrier_sync")
    halving = [
        lp for lp in facts.loops
        if lp.var and rx.search(r">>=\s*1|/=\s*2|>>\s*1|/\s*2", lp.step + " " + lp.init)
        and any(lp.file == c.file and lp.line <= c.line <= lp.end_line for c in syncs)
        and any(lp.file == ln.file and lp.line <= ln.line <= lp.end_line and rx.search(rf"\[[^\]]*\+\s*{re.escape(lp.var)}\s*\]", ln.text) for ln in facts.lines)
    ]
    if halving:
        return present(halving[:2], "shared-memory tree reduction across the block")
    smem = shared_names(facts)
    if not smem:
        return absent("no shared memory: no cross-warp step")
    sn = "|".join(map(re.escape, sorted(smem)))
    tree = [
        lp for lp in facts.loops
        if rx.search(r">>=\s*1|/=\s*2|>>\s*1|/\s*2", lp.step + " " + lp.init)
        and any(lp.file == ln.file and lp.line <= ln.line <= lp.end_line for ln in facts.grep(rf"\b({sn})\s*\["))
        and not rx.search(r"__shfl", " ".join(ln.text for ln in facts.lines if lp.file == ln.file and lp.line <= ln.line <= lp.end_line))
    ]
    if tree:
        return present(tree[:2], "shared-memory tree reduction across the block")
    _, warp = thread_vars(facts)
    widx = r"(threadIdx\.x\s*(/|>>)\s*(32|5|warpSize|WARP_SIZE|kWarpSize)" + ("|" + "|".join(map(re.escape, sorted(warp))) if warp else "") + r")"
    partials = [a for a in facts.assigns if rx.match(rf"({sn})\s*\[\s*{widx}\s*\]", a.target)]
    shuffles = [c for c in facts.calls if c.short.startswith("__shfl")]
    if partials and (shuffles or facts.grep(r"(?i)warp_?reduce")):
        return present(partials[:2] + shuffles[:1], "warp partials combined through shared memory")
    return absent("no cross-warp reduction step")
