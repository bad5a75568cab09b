"""single_pass_io: each input row/tile is read from global memory once per block and kept on chip
for every pass, each output written once. 0 when a later pass re-loads data an earlier pass read
(sibling loops loading the same pointer), or an output is written and read back / rewritten.
Tiled GEMM / convolution kernels are 0 by definition (each operand panel is re-read for every
output tile), recognised structurally by :mod:`._gemm`."""

from __future__ import annotations

import re

from ..parsing import rx
from ._base import absent, present
from ._common import (
    IDENTIFIER,
    alias_map,
    aliases_of,
    disjoint,
    innermost_loop,
    loads,
    pointer_params,
    tokens,
)
from ._gemm import gemm_evidence

GEMM_REASON = "GEMM-style K-loop accumulation of two operands: operands are re-read across output tiles by design"


def _triton_base(call) -> str:
    arg = call.args[0] if call.args else (call.kw("pointer") or "")
    m = rx.match(r"\(?\s*([A-Za-z_]\w*)", arg)
    return m.group(1) if m else ""


def _root(facts, name: str, params: list[str]) -> str:
    return alias_map(facts).get(name, name)


def detect_triton(facts):
    gemm = gemm_evidence(facts)
    if gemm:
        return absent(GEMM_REASON, gemm)
    params = [p for p, _ in facts.params]
    reads: dict[str, list] = {}
    writes: dict[str, list] = {}
    for c in loads(facts):
        reads.setdefault(_root(facts, _triton_base(c), params), []).append(c)
    for c in facts.calls:
        if c.short == "store" and (c.name.startswith("tl.") or "." in c.name):
            writes.setdefault(_root(facts, _triton_base(c), params), []).append(c)
    return _decide(facts, reads, writes)


def detect_cuda(facts):
    gemm = gemm_evidence(facts)
    if gemm:
        return absent(GEMM_REASON, gemm)
    params = pointer_params(facts)
    reads: dict[str, list] = {}
    writes: dict[str, list] = {}
    for p in params:
        names = aliases_of(facts, p)
        nx = "|".join(map(re.escape, sorted(names)))  # sorted: one pattern text, one compile
        plain = all(IDENTIFIER.fullmatch(n) for n in names)  # then only lines using a name as a token can match
        for ln in facts.lines:
            if plain and names.isdisjoint(tokens(ln.text)):
                continue
            for m in rx.finditer(rf"(?<![\w.])({nx})\s*\[[^\]]*\](\s*\.\w+)?\s*(=(?!=)|\+=|-=|\*=|/=)?", ln.text):
                (writes if m.group(3) else reads).setdefault(p, []).append(ln)
            if rx.search(rf"(__ldg|__ldcs|__ldcg|__ldca|reinterpret_cast<[^>]*>)\s*\(\s*&?\s*\(?\s*({nx})\b", ln.text):
                reads.setdefault(p, []).append(ln)
    return _decide(facts, reads, writes)


def _decide(facts, reads, writes):
    if not reads:
        return absent("no global loads found")
    for base, rs in reads.items():
        loops = [innermost_loop(facts, r) for r in rs]
        for i in range(len(rs)):
            for j in range(i + 1, len(rs)):
                if disjoint(loops[i], loops[j]) and _outer(facts, loops[i]) != _outer(facts, loops[j]) or (
                    disjoint(loops[i], loops[j]) and _same_level(facts, loops[i], loops[j])
                ):
                    return absent(f"'{base}' is loaded again in a later pass", [rs[i], rs[j]])
    for base, ws in writes.items():
        if base in reads and any(disjoint(innermost_loop(facts, w), innermost_loop(facts, r)) for w in ws for r in reads[base]):
            return absent(f"'{base}' is written and read back", ws[:1] + reads[base][:1])
        if len(ws) >= 2:
            loops = [innermost_loop(facts, w) for w in ws]
            if any(disjoint(loops[i], loops[j]) for i in range(len(ws)) for j in range(i + 1, len(ws))):
                return absent(f"'{base}' is written in two passes", ws[:2])
    first_reads = [rs[0] for rs in reads.values()]
    return present(first_reads[:3], "each input loaded once per block; outputs written once")


def _outer(facts, loop):
    if loop is None:
        return None
    outers = [lp for lp in facts.loops if lp.file == loop.file and lp.line < loop.line and loop.end_line <= lp.end_line]
    return max(outers, key=lambda lp: lp.line) if outers else None


def _same_level(facts, a, b) -> bool:
    return _outer(facts, a) == _outer(facts, b)
