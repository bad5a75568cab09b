"""register_tiling: each thread accumulates a TM x TN (or TM x 1) tile in registers: a local
array with compile-time extents updated by products inside the reduction loop, or an array of MMA
accumulator fragments. One output per thread, elementwise bundles and row caches are 0.
Triton: not decidable when tl.dot is used, else 0."""

from __future__ import annotations

import re

from ..parsing import rx
from ._base import absent, not_applicable, present
from ._common import dots


def detect_triton(facts):
    if dots(facts):
        return not_applicable("tl.dot: the compiler assigns accumulator layouts")
    return absent("Triton source without tl.dot: no register tiles")


def detect_cuda(facts):
    local = [d for d in facts.decls if d.dims and all(d.dims) and not d.qualifiers & {"__shared__", "extern", "__constant__", "static"}]
    hits = []
    for d in local:
        n = re.escape(d.name)
        frag = "fragment" in d.type or rx.search(r"acc|frag|c_?reg|accum", d.name, re.I)
        for a in facts.assigns:
            if not rx.match(rf"{n}\s*\[", a.target):
                continue
            if (a.op == "+=" and "*" in a.value) or rx.search(r"\bfma\w*\s*\(|__hfma", a.value):
                if any(lp.file == a.file and lp.line <= a.line <= lp.end_line for lp in facts.loops):
                    hits.append(a)
                    break
        else:
            if frag and (len(d.dims) >= 2 or "fragment" in d.type):
                mm = [c for c in facts.calls if ("mma" in c.short.lower()) and rx.search(rf"\b{n}\s*\[", c.text)]
                if mm:
                    hits.append(mm[0])
        if not hits:
            mm = [c for c in facts.calls if "mma" in c.short.lower() and rx.search(rf"\b{n}\s*\[[^\]]+\]\s*\[", c.text)]
            hits += mm[:1]
    if hits:
        return present(hits[:3], "per-thread register tile accumulated in the reduction loop")
    return absent("no per-thread register tile (one output per thread)")
