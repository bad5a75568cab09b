"""Recognising a GEMM-like kernel: a reduction loop that accumulates products of two operands.

Several properties judge GEMM and convolution kernels differently from row-streaming kernels
(single_pass_io is 0 for them: each operand panel is re-read for every output tile by design).
The recognition is structural, not by name:

- a matrix instruction: ``tl.dot`` (Triton), wmma / mma.sync / wgmma / tcgen05 or a CuTe ``gemm``
  (CUDA);
- inside a loop, an accumulation (``acc += a[..] * b[..]``, ``acc = fmaf(a[..], b[..], acc)``)
  whose product multiplies elements of two *different* arrays at *different* indices (a dot
  product of two vectors at the same index, ``s += x[i] * y[i]``, streams and is not a GEMM);
- Triton without tl.dot: an accumulation in a loop of an outer product of two tiles broadcast
  along different axes (``a[:, :, None] * b[None, :, :]``), directly or reduced by ``tl.sum``.

Operands named through one local variable (``prod = a * b; acc += tl.sum(prod)``,
``float av = As[i][k]; acc += av * Bs[k][j]``) are expanded once.
"""

from __future__ import annotations

from ..parsing import rx
from ..parsing.facts import Assign, UnitFacts
from ._common import dots

_REF = r"[A-Za-z_]\w*\s*(?:\[[^\[\]]*\]\s*)+(?:\.\w+)?"  # x[i], As[ty][k], a[i].x
_OPEN = r"(?:(?:[A-Za-z_][\w:]*(?:\s*<[^<>]*>)?\s*)?\(\s*)*"  # casts, conversions, parentheses
_FMA_NAMES = r"(?<![\w.])(?:fmaf?|__fmaf_r[nzud]|__fma_r[nzud]|__hfma2?)"
# two element factors multiplied: to_float(a[k]) * (Bs[k][j]); fma(a[i].x, b[j].x, acc)
_PRODUCT = rx.compile(rf"({_REF})\s*\)*\s*\*\s*{_OPEN}({_REF})")
_FMA_PRODUCT = rx.compile(rf"{_FMA_NAMES}\s*\(\s*{_OPEN}({_REF})\s*\)*\s*,\s*{_OPEN}({_REF})\s*\)*\s*,")
# two tiles broadcast along different axes and multiplied: a[:, :, None] * b[None, :, :]
_BROADCAST = r"\[[^\[\]]*\bNone\b[^\[\]]*\]"
_OUTER = rx.compile(rf"({_BROADCAST})\s*\)*\s*\*\s*[^*+\-\[\]]*?({_BROADCAST})")
_IDENT = rx.compile(r"(?<![\w.])[A-Za-z_]\w*")
_MMA_ASM = r"\b(mma\.sync|wgmma\.|tcgen05\.mma)"
_MMA_CALL = rx.compile(r"^(?:w|wg|u)?mma(?:_\w+)?$|_mma(?:_\w+)?$")  # mma_sync, wgmma, mma_AB; not gamma


def gemm_evidence(facts: UnitFacts) -> list:
    """Records that show a GEMM-style accumulation (empty: not a GEMM). Computed once per unit."""
    cached = facts.cache.get("gemm_evidence")
    if cached is None:
        cached = _triton(facts) if facts.language == "triton" else _cuda(facts)
        facts.cache["gemm_evidence"] = cached
    return cached


def _cuda(facts: UnitFacts) -> list:
    mma = [c for c in facts.calls if _MMA_CALL.search(c.short) or (c.name.endswith("::gemm") and "mma" in c.text.lower())]
    if mma:
        return mma[:2]
    asm = facts.grep_asm(_MMA_ASM)
    if asm:
        return asm[:2]
    return [a for a in _loop_accumulations(facts) if _two_operand_product(_expand(facts, a))][:2]


def _triton(facts: UnitFacts) -> list:
    d = dots(facts)
    if d:
        return d[:2]
    return [a for a in _loop_accumulations(facts) if _outer_product(_expand(facts, a))][:2]


def _loop_accumulations(facts: UnitFacts) -> list[Assign]:
    """Assignments inside a loop that add to their own target: ``t += ..``, ``t = t + ..``,
    ``t = .. + t`` or ``t = fma(.., .., t)``."""
    out = []
    for a in facts.assigns:
        if not any(lp.file == a.file and lp.line <= a.line <= lp.end_line for lp in facts.loops):
            continue
        if a.op == "+=" or (a.op == "=" and _adds_to_itself(a.target, a.value)):
            out.append(a)
    return out


def _adds_to_itself(target: str, value: str) -> bool:
    t, v = _nospace(target), _nospace(value)
    if not t or t == "return":
        return False
    if v.startswith(t + "+") or v.endswith("+" + t):
        return True
    return bool(rx.match(_FMA_NAMES, v)) and v.endswith("," + t + ")")


def _expand(facts: UnitFacts, a: Assign) -> str:
    """The accumulated value with each operand variable replaced (once) by its latest definition
    before ``a`` in the same file, so that products written in two statements are seen whole.
    Only operands are expanded: not subscripted bases or index variables (``b[k0 + i]`` stays), and
    only variables that hold an element or a product (their definition subscripts or multiplies)."""
    latest: dict[str, str] = {}
    for b in _operand_definitions(facts):
        if b.file == a.file and b.line < a.line and b.target != a.target:
            latest[b.target] = b.value
    if not latest:
        return a.value
    out, last = [], 0
    for m in _IDENT.finditer(a.value):
        name = m.group(0)
        rest = a.value[m.end():].lstrip()
        inside = a.value.count("[", 0, m.start()) > a.value.count("]", 0, m.start())
        if name in latest and not inside and not rest.startswith("["):
            out.append(a.value[last:m.start()] + f"({latest[name]})")
            last = m.end()
    return "".join(out) + a.value[last:]


def _operand_definitions(facts: UnitFacts) -> list[Assign]:
    """``name = <element or product>`` assignments, in order (computed once per unit)."""
    cached = facts.cache.get("gemm_operand_defs")
    if cached is None:
        cached = [b for b in facts.assigns if b.op == "=" and ("[" in b.value or "*" in b.value) and rx.fullmatch(r"[A-Za-z_]\w*", b.target)]
        facts.cache["gemm_operand_defs"] = cached
    return cached


def _two_operand_product(value: str) -> bool:
    """``x[i] * y[j]`` (or fma(x[i], y[j], ..)): elements of two different arrays at different indices."""
    if "*" not in value and not rx.search(_FMA_NAMES, value):
        return False
    for m in list(_PRODUCT.finditer(value)) + list(_FMA_PRODUCT.finditer(value)):
        (b1, i1), (b2, i2) = _split_ref(m.group(1)), _split_ref(m.group(2))
        if b1 != b2 and i1 != i2:
            return True
    return False


def _split_ref(ref: str) -> tuple[str, str]:
    """``As[ty][k]`` -> ("As", "[ty][k]") with whitespace removed."""
    squashed = _nospace(ref)
    base, _, rest = squashed.partition("[")
    return base, "[" + rest


def _outer_product(value: str) -> bool:
    """A product of two tiles broadcast along different axes: ``a[:, :, None] * b[None, :, :]``."""
    if "*" not in value:
        return False
    return any(_nospace(m.group(1)) != _nospace(m.group(2)) for m in _OUTER.finditer(value))


def _nospace(s: str) -> str:
    return "".join(s.split())
