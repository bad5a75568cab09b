"""warp_tiling: an explicit warp level in the tile hierarchy: the warp index is decomposed into a
(warp_row, warp_col) position inside the block tile (WM x WN sub-tiles). Warp ids used only for
reductions, roles or warp-per-row mappings are 0."""

from __future__ import annotations

import re

from ..parsing import rx
from ._base import absent, present
from ._common import thread_vars


def detect_cuda(facts):
    _, warp = thread_vars(facts)
    warp |= set(facts.idents_matching(r"(?i)^(warp_?id|warp_?idx|warpid|wid|warp)$"))
    if not warp:
        return absent("no warp index")
    wn = "|".join(map(re.escape, sorted(warp)))
    parts = [a for a in facts.assigns if rx.search(rf"\b({wn})\b\s*[/%]|[/%]\s*\b({wn})\b|\b({wn})\b\s*(>>|&)", a.value) and rx.fullmatch(r"[A-Za-z_]\w*", a.target)]
    dims = {("row" if rx.search(r"/|>>", a.value) else "col") for a in parts}
    named = facts.grep(r"\b(WM|WN|WMITER|WNITER|WARP_M|WARP_N|kWM|kWN|WARP_TILE_M|WARP_TILE_N|kWarpTileM|kWarpTileN)\b")
    # Each warp must iterate over several sub-tiles: named warp-tile extents / iteration counts, or
    # an array of accumulators (several MMA tiles or a thread tile inside the warp tile).
    iterates = named or facts.grep(r"\b(WMITER|WNITER|kWMIter|kWNIter|k?Frags?_?[MN]|kFrags[MN]|MMA_?M_?ITERS?|MMA_?N_?ITERS?)\b") or [
        d for d in facts.decls if len([x for x in d.dims if x]) >= 2 and not d.qualifiers & {"__shared__", "extern"}
    ]
    if len(dims) == 2 and iterates:
        return present(parts[:2] + iterates[:1], "warp index decomposed into a warp sub-tile the warp iterates over")
    return absent("warp index used only for reductions/roles, or one tile per warp")
