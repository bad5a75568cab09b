"""grid_stride_loop: a loop whose stride is the whole grid: gridDim.x * blockDim.x for elements,
gridDim.x / tl.num_programs for tiles or rows, or a NUM_SMS-like argument equal to the launch grid.
Block-stride loops (i += blockDim.x), K loops and column loops are 0."""

from __future__ import annotations

import re

from ..parsing import rx
from ._base import absent, present

GRID = r"gridDim\.[xyz]|num_programs\s*\("


def _stride_vars(facts) -> set[str]:
    out = set()
    for a in facts.assigns:
        if rx.search(GRID, a.value) and rx.fullmatch(r"[A-Za-z_]\w*", a.target):
            out.add(a.target)
    return out


def _grid_params(facts) -> set[str]:
    """Kernel params passed the same value the launch grid is built from (NUM_SMS == grid)."""
    out = set()
    names = [p for p, _ in facts.params]
    for launch in facts.launches:
        for key, value in launch.kwargs.items():
            v = value.strip()
            if rx.fullmatch(r"[A-Za-z_]\w*", v) and rx.search(rf"(?<![\w.]){re.escape(v)}\b", launch.grid):
                out.add(key)
    for name in names:
        if rx.match(r"(?i)^(num_?sms|num_?programs|num_?progs|n_?progs|grid_?size|num_?ctas|num_?blocks)$", name) and facts.grep_host(rf"(?<![\w.]){re.escape(name)}\b|multi_processor_count"):
            out.add(name)
    return out


def detect(facts):
    sv = _stride_vars(facts) | _grid_params(facts)
    hits = []
    for lp in facts.loops:
        step = lp.step
        if rx.search(GRID, step) or any(rx.search(rf"(?<![\w.]){re.escape(v)}\b", step) for v in sv):
            hits.append(lp)
    if hits:
        return present(hits[:2], "loop strided by the grid size")
    return absent("no grid-stride loop (block-stride / K / column loops only)")


detect_cuda = detect_triton = detect
