"""tile_swizzle: block/program ids remapped for L2 reuse (GROUP_SIZE_M grouping, tl.swizzle2d,
super-tile or serpentine rasterisation). A GROUP_SIZE_M that is unused or 1 everywhere is 0."""

from __future__ import annotations

import re

from ..parsing import rx
from ._base import absent, present

GROUP = rx.compile(r"(?i)group|swizzle|super_?tile|raster")


def detect(facts):
    calls = [c for c in facts.calls if c.short in ("swizzle2d", "get_swizzled_block_idx", "swizzle_tile", "get_tile_swizzle")]
    if calls:
        return present(calls, "explicit tile swizzle call")
    group_params = facts.idents_matching(r"(?i)^(GROUP_SIZE_M|GROUP_M|GROUP_SIZE|group_size_m|kGroupM|GROUP_N|GROUP_SIZE_N|SWIZZLE|kSwizzle)$")
    vals = [v for n in group_params for v in list(facts.constexpr_values(n)) + facts.config_values(n) if isinstance(v, int)]
    if vals and max(vals) <= 1:
        return absent("grouping factor is 1 at every launch")
    tainted = {n for n in facts.idents if GROUP.search(n)}
    for _ in range(2):
        for a in facts.assigns:
            if any(rx.search(rf"(?<![\w.]){re.escape(n)}\b", a.value) for n in tainted) and rx.fullmatch(r"[A-Za-z_]\w*", a.target):
                tainted.add(a.target)
    pid = r"\b(pid\w*|program_id|blockIdx\.[xyz]|bid\w*|block_?id\w*|tile_?id\w*|linear\w*)\b"
    remaps = [
        a for a in facts.assigns
        if rx.search(r"(?i)(pid|block|tile|bid)\w*_?(m|n|row|col|x|y)\b|^(m|n)_?(block|tile|idx)", a.target)
        and rx.search(r"%|//|/", a.value)
        and any(rx.search(rf"(?<![\w.]){re.escape(n)}\b", a.value) for n in tainted)
    ]
    if remaps and any(rx.search(pid, a.value) or any(rx.search(rf"(?<![\w.]){re.escape(n)}\b", a.value) for n in tainted) for a in remaps):
        return present(remaps[:3], "program/block ids regrouped for L2 reuse")
    return absent("tiles visited in plain row-major order")


detect_cuda = detect_triton = detect
