"""bank_conflict_avoidance: explicit shared-memory padding/skew (tile[T][T + 1]), an XOR/rotation
swizzle of shared-memory indices (or TMA/wgmma 32-128B swizzle modes, CuTe Swizzle<>), or an
explicit layout permutation. Halo extents, global padding and tile (L2) swizzles do not count."""

from __future__ import annotations

import re

from ..parsing import rx
from ._base import absent, first, present
from ._common import mentions_any, shared_decls, shared_names

PAD_NAME = rx.compile(r"(?i)^k?_?(pad|padding|skew)\w*$|_(pad|skew)$|^(PAD|SKEW)\w*$|^k(Pad|Skew)\w*$")


def _resolve(facts, expr: str, depth: int = 3) -> str:
    """Expand constant names in ``expr`` (kLd -> kBK + kPad) a few levels deep."""
    for _ in range(depth):
        names = rx.findall(r"[A-Za-z_]\w*", expr)
        changed = False
        for n in names:
            e = facts.constant_expr(n)
            if e and not PAD_NAME.match(n):
                expr = rx.sub(rf"(?<![\w.]){re.escape(n)}\b", f"({e})", expr)
                changed = True
        if not changed:
            break
    return expr


def _padded_dim(facts, dim: str) -> bool:
    e = _resolve(facts, dim)
    return bool(rx.search(r"\+\s*\(?\s*(\d+|[A-Za-z_]\w*)\s*\)?\s*\)*\s*$", e)) and (
        bool(rx.search(r"\+\s*\(?\s*[1-9]\d*\s*\)?\s*\)*\s*$", e)) or any(PAD_NAME.match(n) for n in rx.findall(r"[A-Za-z_]\w*", e))
    )


def _used_pad_constants(facts) -> list:
    """Padding constants (kPad, SKEW...) with a positive value that live code uses, directly or
    through another constant (kLd = kBK + kPad used as a shared row stride)."""
    live = set(facts.idents)
    reach = set(live)
    for _ in range(3):
        for n in list(reach):
            e = facts.constant_expr(n)
            if e:
                reach |= set(rx.findall(r"[A-Za-z_]\w*", e))
    hits = []
    for n in sorted(reach):
        if PAD_NAME.match(n) and facts.constant_expr(n):
            from ..parsing.liveness import literal_value

            v = literal_value(_resolve(facts, facts.constant_expr(n)), None, "cuda")
            if isinstance(v, int) and v > 0:
                users = [m for m in live if n in (facts.constant_expr(m) or "")]  # constants built from n
                hits += facts.grep(rf"(?<![\w.]){re.escape(n)}\b")[:1] or [ln for ln in facts.lines if mentions_any(ln.text, users)][:1]
    return hits


def detect_cuda(facts):
    padded = []
    for d in shared_decls(facts):
        dims = [x for x in d.dims if x]
        if len(dims) >= 2:
            if _padded_dim(facts, dims[-1]) and not all(_padded_dim(facts, x) for x in dims):
                padded.append(d)
        elif dims and rx.search(r"(?i)pad|skew", dims[0]):
            padded.append(d)
    smem = shared_names(facts)
    if smem:
        padded += _used_pad_constants(facts)
    sn = "|".join(map(re.escape, sorted(smem))) if smem else r"(?!x)x"
    xor_idx = [ln for ln in facts.lines if rx.search(r"[^\^]\^\s*(?!1\b)[\(\w]", ln.text) and "__shfl" not in ln.text and (rx.search(rf"\b({sn})\b", ln.text) or rx.search(r"(?i)swizzl|smem_?(idx|off|col|addr)|_sw\b", ln.text))]
    modes = facts.grep(r"CU_TENSOR_MAP_SWIZZLE_(32B|64B|128B)|Swizzle\s*<\s*[1-9]|Layout_\w*SW(32|64|128)|SW128|B128\b") + facts.grep_host(r"CU_TENSOR_MAP_SWIZZLE_(32B|64B|128B)")
    hits = first(padded, xor_idx, modes)
    return present(hits, "shared-memory padding or swizzle against bank conflicts") if hits else absent("no padding or swizzle of shared memory")
