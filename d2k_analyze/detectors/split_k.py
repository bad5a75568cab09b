"""split_k: the GEMM K dimension split across blocks/programs (a grid axis picks a K slice) and
partials combined with atomics or a workspace. A SPLIT_K that is 1 at every launch is 0."""

from __future__ import annotations

from ..parsing import rx
from ._base import absent, present
from ._common import mentions_any

SPLIT = rx.compile(r"(?i)^(split_?k|k_?splits?|num_?splits?_?k|splitk\w*|SPLIT_K|kSplitK|k_?slices?|slices?_?k)$")


def _split_values(facts):
    vals = []
    for name in facts.idents:
        if SPLIT.match(name):
            vals += list(facts.constexpr_values(name)) + facts.config_values(name)
    return vals


def detect(facts):
    vals = [v for v in _split_values(facts) if isinstance(v, int)]
    if vals and max(vals) <= 1:
        return absent("split factor is 1 at every launch")
    if facts.language == "triton":
        slice_vars = {a.target for a in facts.assigns if rx.search(r"program_id\(\s*(axis\s*=\s*)?[12]\s*\)", a.value) and rx.search(r"(?i)k|split", a.target)}
    else:
        slice_vars = {a.target for a in facts.assigns if rx.search(r"blockIdx\.[zy]", a.value) and rx.search(r"(?i)k|split|slice", a.target)}
    split_names = {n for n in facts.idents if SPLIT.match(n)}
    sliced = [
        lp for lp in facts.loops
        if mentions_any(lp.init + " " + lp.cond + " " + lp.step, slice_vars | split_names)
        or rx.search(r"blockIdx\.z", lp.init + lp.cond)
    ]
    sliced += [a for a in facts.assigns if slice_vars and rx.search(r"(?i)k", a.target) and mentions_any(a.value, slice_vars) and rx.search(r"(?i)(start|begin|end|lo|hi|off)", a.target)]
    combine = [c for c in facts.calls if rx.match(r"^(atomic[A-Z]\w*|atomic_add|atomic_\w+)$", c.short)] or facts.grep(r"(?i)(workspace|partial|\bws)\w*\s*\[|\bws_?ptr\b")
    if sliced and combine:
        return present(sliced[:2] + combine[:2], "K loop sliced by a grid axis; partials combined")
    return absent("each tile's K loop runs in one block/program")


detect_cuda = detect_triton = detect
