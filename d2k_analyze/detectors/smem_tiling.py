"""smem_tiling: operand tiles staged in shared memory and reused by several threads, typically
read in an accumulation loop (As[..][k] * Bs[k][..], an MMA fragment load from shared memory).
Transpose-style reorder, a cached single row/vector, reduction scratch and unused arrays are 0.
Triton: not decidable when tl.dot is used (the compiler stages operands), else 0."""

from __future__ import annotations

import re

from ..parsing import rx
from ._base import absent, not_applicable, present
from ._common import IDENTIFIER, dots, shared_decls, shared_names, tokens


def detect_triton(facts):
    if dots(facts):
        return not_applicable("tl.dot: the compiler stages operands in shared memory")
    return absent("Triton source without tl.dot has no shared-memory tiles")


def _tile_like(decl) -> bool:
    """A 2-D tile, or a flat array whose size is a product of tile extents."""
    dims = [d for d in decl.dims if d]
    return len(dims) >= 2 or any("*" in d for d in dims) or not decl.dims


def detect_cuda(facts):
    names = shared_names(facts)
    if not names:
        return absent("no shared memory")
    decls = {d.name: d for d in shared_decls(facts)}
    fills = [c for c in facts.calls if c.short in ("load_matrix_sync", "ldmatrix", "copy") or "mma" in c.short.lower()]
    uses = []
    synced = bool(facts.calls_named("__syncthreads", "sync", "__syncwarp", "barrier_sync")) or bool(facts.grep_asm(r"bar\.sync|barrier"))
    plain = all(IDENTIFIER.fullmatch(n) for n in names)  # then a line can only use names among its tokens
    for ln in facts.lines:
        candidates = names & tokens(ln.text) if plain else names
        used = [n for n in candidates if rx.search(rf"(?<![\w.]){re.escape(n)}\b\s*(\[|\+)|&\s*{re.escape(n)}\b", ln.text)]
        if not used:
            continue
        loops = [lp for lp in facts.loops if lp.file == ln.file and lp.line <= ln.line <= lp.end_line]
        if not loops:
            continue
        accum = rx.search(r"\+=|fma|__hfma|mma|load_matrix_sync|ldmatrix|ldsm|\bdot\b", ln.text) or (len(used) >= 2 and "*" in ln.text)
        tiles = [n for n in used if n not in decls or _tile_like(decls[n])]
        # a tile read (right of '=') with a loop variable in its index: reused across iterations
        rhs = ln.text.split("=", 1)[1] if rx.search(r"[^=!<>]=[^=]", ln.text) else ln.text
        loop_indexed = any(
            lp.var and rx.search(rf"(?<![\w.]){re.escape(n)}\s*\[[^;]*\b{re.escape(lp.var)}\b", rhs) for n in tiles for lp in loops
        )
        if (accum and (len(used) >= 2 or tiles)) or (synced and loop_indexed and len(loops) >= 2):
            uses.append(ln)
    if uses:
        return present(uses[:3], "shared-memory tiles read by many threads in an accumulation loop")
    if fills and any(any(n in c.text for n in names) for c in fills):
        hits = [c for c in fills if any(n in c.text for n in names)]
        return present(hits[:3], "MMA fragments loaded from shared-memory tiles")
    return absent("shared memory only reorders, caches one row/vector, or holds reduction scratch")
