"""coalesced_access: adjacent threads touch adjacent addresses in the main global loads. Only an
obviously strided pattern is 0: in the index of a main (in-loop) load, a lane-level thread index
multiplies a row stride and no lane-level index runs along the contiguous dimension (e.g.
A[tid * K + k], a thread-per-row walk, or a pointer b = B + tid * K read along k)."""

from __future__ import annotations

import re

from ..parsing import rx
from ._base import absent, present
from ._common import aliases_of, mentions_any, pointer_params

SMALL = r"(?:1|2|4|8|16)"  # a vector width: thread i owns the i-th chunk


def _lane_vars(facts) -> tuple[set[str], set[str]]:
    """(fast, slow) lane-level index variables: fast ones step by one (or a vector width) between
    adjacent threads (threadIdx.x, x % C, idx + c); slow ones are divided (idx / C: rows).
    Loop variables are left out here (their status depends on the loop, see ``_scoped``)."""
    loop_inits = {(lp.file, lp.line, lp.var) for lp in facts.loops}
    pointers = set(pointer_params(facts))
    fast, slow = {"threadIdx.x"}, set()
    # assignments that can define a lane variable at all (the rest never change between passes)
    candidates = [
        (a.target, a.value) for a in facts.assigns
        if a.op == "=" and rx.fullmatch(r"[A-Za-z_]\w*", a.target) and "[" not in a.value
        and (a.file, a.line, a.target) not in loop_inits and not mentions_any(a.value, pointers)
    ]
    for _ in range(3):
        for t, v in candidates:
            if t in fast | slow:
                continue
            used = [n for n in fast | slow if mentions_any(v, (n,))]
            if not used:
                continue
            if rx.search(r"/\s*(32|warpSize|WARP_SIZE|kWarpSize)\b|>>\s*5\b", v):
                continue  # warp-level: adjacent threads share it
            if any(n in fast for n in used) and rx.search(rf"(?<![\w.])({'|'.join(map(re.escape, fast))})\b\s*\)?\s*/", v):
                slow.add(t)
            elif any(n in fast for n in used):
                fast.add(t)
            else:
                slow.add(t)
    return fast, slow


def _enclosing(facts, obj) -> tuple:
    return tuple(lp for lp in facts.loops if lp.file == obj.file and lp.line <= obj.line <= lp.end_line)


def _scoped(enclosing: tuple, fast: set[str], slow: set[str]) -> tuple[frozenset, frozenset]:
    """Lane variables inside the loops ``enclosing`` a line: loop variables are fast only when
    their loop starts from a fast index (for (i = threadIdx.x; ...)), whatever other loops did
    with the name."""
    f, sl = set(fast), set(slow)
    for lp in sorted(enclosing, key=lambda lp: lp.line):
        if not lp.var:
            continue
        f.discard(lp.var)
        sl.discard(lp.var)
        if mentions_any(lp.init.split("=", 1)[-1], f):
            f.add(lp.var)
    return frozenset(f), frozenset(sl)


def _longest_first(name: str) -> tuple[int, str]:
    """Longer names first (``idx`` before ``i``); ties by name, so that the same variables always
    give the same pattern text (one compiled regex, whatever order the sets iterate in)."""
    return -len(name), name


class _Pattern:
    """Compiled once per unit: 'a lane index times a stride' and 'a fast lane index'."""

    def __init__(self, fast: set[str], slow: set[str]):
        ln = "|".join(re.escape(n) for n in sorted(fast | slow, key=_longest_first))
        fl = "|".join(re.escape(n) for n in sorted(fast, key=_longest_first))
        self.mult = rx.compile(
            rf"(?:(?<![\w.])(?:{ln})\b|\([^()]*(?<![\w.])(?:{ln})\b[^()]*\))\s*\)?\s*\*\s*\(?\s*(?!{SMALL}\b)[\w.]+"
            rf"|(?<![\w.])(?!{SMALL}\b)[\w.]+\s*\*\s*\(?\s*(?:(?<![\w.])(?:{ln})\b)"
        )
        self.fast = rx.compile(rf"(?<![\w.])(?:{fl})\b")

    def strided(self, idx: str) -> bool:
        if not self.mult.search(idx):
            return False
        return not self.fast.search(self.mult.sub(" ", idx))  # a fast index along the row keeps it coalesced


def _depth(facts, obj) -> int:
    return sum(1 for lp in facts.loops if lp.file == obj.file and lp.line <= obj.line <= lp.end_line)


SUBSCRIPT = rx.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\[([^\[\]]*(?:\[[^\]]*\][^\[\]]*)*)\]\s*(=(?!=)|[-+*/]=)?")


def detect_cuda(facts):
    fast, slow = _lane_vars(facts)
    pat = _Pattern(fast, slow)
    patterns: dict[tuple[frozenset, frozenset], _Pattern] = {}
    scopes: dict[tuple, tuple[frozenset, frozenset]] = {}  # lines in the same loop nest share one

    def pattern_at(obj) -> _Pattern:
        enclosing = _enclosing(facts, obj)
        if enclosing not in scopes:
            scopes[enclosing] = _scoped(enclosing, fast, slow)
        key = scopes[enclosing]
        if key not in patterns:
            patterns[key] = _Pattern(set(key[0]), set(key[1]))
        return patterns[key]

    params = pointer_params(facts)
    names = set().union(*(aliases_of(facts, p) for p in params)) if params else set()
    param_rx = rx.compile(r"(?<![\w.])(" + "|".join(map(re.escape, sorted(names))) + r")\b") if names else None
    strided_ptrs = {a.target.split("[")[0].strip() for a in facts.assigns
                    if param_rx and param_rx.search(a.value) and pat.strided(a.value)}
    reads = []  # (depth, strided?, evidence)
    for ln in facts.lines:
        # reads of a global pointer (or a strided alias) only; lane scoping is worked out for those lines
        subs = [m for m in SUBSCRIPT.finditer(ln.text) if not m.group(3) and (m.group(1) in names or m.group(1) in strided_ptrs)]
        if not subs:
            continue
        pat = pattern_at(ln)
        for m in subs:
            base, idx = m.group(1), m.group(2)
            fast_in_idx = bool(pat.fast.search(idx))
            is_strided = (base in strided_ptrs and not fast_in_idx) or pat.strided(idx)
            if is_strided or fast_in_idx:
                reads.append((_depth(facts, ln), is_strided, ln))
    for a in facts.assigns:  # pointer arithmetic loads: *(uint4*)(src + row * K + chunk)
        if rx.search(r"reinterpret_cast|\*\s*\(", a.value) and param_rx and param_rx.search(a.value):
            reads.append((_depth(facts, a), pattern_at(a).strided(a.value), a))
    if not reads:
        return present([], "no strided thread pattern")
    main_depth = max(d for d, _, _ in reads)
    main = [(s, e) for d, s, e in reads if d == main_depth]  # the loads in the deepest loop dominate
    strided = [e for s, e in main if s]
    coalesced = [e for s, e in main if not s]
    if strided and len(strided) >= len(coalesced):
        return absent("main loads strided across adjacent threads", strided[:3])
    return present(coalesced[:3], "thread index on the contiguous dimension")
