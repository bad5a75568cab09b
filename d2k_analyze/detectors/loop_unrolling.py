"""loop_unrolling: an explicit #pragma unroll (not 1) on a loop with a compile-time trip count,
CUTLASS_PRAGMA_UNROLL, template unrolling; Triton tl.static_range or loop_unroll_factor > 1.
A bare pragma on a runtime-bound loop and what the compiler unrolls by itself do not count."""

from __future__ import annotations

from ..parsing import rx
from ._base import absent, present
from ..parsing.liveness import literal_value

RUNTIME = {"threadIdx", "blockIdx", "blockDim", "gridDim"}


def _compile_time(facts, loop) -> bool:
    params = {p for p, _ in facts.params}
    text = f"{loop.init} ; {loop.cond}"
    names = set(rx.findall(r"[A-Za-z_]\w*", text)) - {loop.var, "int", "unsigned", "size_t", "auto", "const", "long", "sizeof", "uint32_t", "int32_t", "int64_t"}
    for n in names:
        if n in RUNTIME or n in params and not rx.match(r"^(k[A-Z]|[A-Z][A-Z0-9_]+$)", n):
            return False
        env_known = facts.constexpr_values(n)
        if env_known or rx.match(r"^(k[A-Z]\w*|[A-Z][A-Z0-9_]*)$", n) or n in ("std", "numeric_limits"):
            continue
        if any(d.name == n and ("constexpr" in d.qualifiers or "const" in d.qualifiers) and literal_value(d.init, None, "cuda") is not None for d in facts.decls):
            continue
        return False
    return True


def detect_cuda(facts):
    hits = []
    for p in facts.pragmas:
        m = rx.match(r"unroll\b\s*\(?\s*([^)\s]*)", p.text)
        if not m:
            continue
        count = literal_value(m.group(1), None, "cuda") if m.group(1) else None
        if count == 1:
            continue
        nxt = [lp for lp in facts.loops if lp.file == p.file and p.line < lp.line <= p.line + 2]
        if nxt and (count not in (None,) or _compile_time(facts, nxt[0])):
            hits.append(p)
        elif not nxt:
            hits.append(p)
    macros = facts.grep(r"\bCUTLASS_PRAGMA_UNROLL\b|_Pragma\s*\(\s*\"unroll")
    if hits or macros:
        return present((hits + macros)[:4], "explicit unroll of a compile-time loop")
    return absent("no explicit unrolling of a compile-time loop")


def detect_triton(facts):
    hits = [lp for lp in facts.loops if lp.iterator.endswith("static_range")]
    for lp in facts.loops:
        v = literal_value(lp.kw("loop_unroll_factor") or "0")
        if isinstance(v, int) and v > 1:
            hits.append(lp)
    return present(hits, "tl.static_range / loop_unroll_factor") if hits else absent("no explicit unrolling")
