"""Index arithmetic as polynomials over atoms, so that "which thread touches which address" is a
question about coefficients.

``x[row * n + threadIdx.x + 32 * k]`` has the offset ``row·n + tid.x + 32·iter`` and its
coefficient of ``tid.x`` is 1: adjacent threads touch adjacent elements. Non-polynomial parts
(divisions, modulo, calls, loads) become opaque terms of their own, except the two every warp
computation uses: ``t % 32`` / ``t & 31`` of a thread index is ``lane`` and ``t / 32`` /
``t >> 5`` is ``warp``, however those are spelled.

A polynomial is a mapping ``monomial -> coefficient`` where a monomial is a sorted tuple of
term keys; term keys are atom keys (``tid.x``) or ``~<n>`` for an opaque sub-expression.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from .expr import Cast, E, Load, Num, Op, Ptr, Sym, atoms, forget_with_nodes, num

Monomial = tuple[str, ...]
Poly = tuple[tuple[Monomial, Fraction], ...]  # sorted, hashable

MAX_TERMS = 48
THREAD_X = "tid.x"
_OPAQUE: dict[E, str] = {}
_OPAQUE_EXPR: dict[str, E] = {}


def opaque_key(e: E) -> str:
    """A stable term key for a non-polynomial sub-expression (hash-consed per process)."""
    key = _OPAQUE.get(e)
    if key is None:
        key = f"~{len(_OPAQUE)}"
        _OPAQUE[e] = key
        _OPAQUE_EXPR[key] = e
    return key


def opaque_expr(key: str) -> E | None:
    return _OPAQUE_EXPR.get(key)


def _norm(d: dict[Monomial, Fraction]) -> Poly:
    items = sorted((m, c) for m, c in d.items() if c != 0)
    if len(items) > MAX_TERMS:
        items = items[:MAX_TERMS]
    return tuple(items)


def const(c) -> Poly:
    return _norm({(): Fraction(c)})


_ONE = Fraction(1)  # shared: Fractions are immutable, and building one costs a Python call


def term(key: str) -> Poly:
    return ((((key,)), _ONE),)


def add(a: Poly, b: Poly, sign: int = 1) -> Poly:
    d = dict(a)
    get = d.get
    for m, c in b:
        if sign != 1:
            c = sign * c
        old = get(m)  # a new monomial keeps its coefficient: no ``Fraction(0) + c`` (a Fraction built per term)
        d[m] = c if old is None else old + c
    return _norm(d)


def mul(a: Poly, b: Poly) -> Poly:
    d: dict[Monomial, Fraction] = {}
    for ma, ca in a:
        for mb, cb in b:
            m = tuple(sorted(ma + mb))
            if len(m) > 4:
                m = (opaque_key(Op("*", (Num(len(m)),))),)  # runaway degree: one opaque term
            old = d.get(m)
            d[m] = ca * cb if old is None else old + ca * cb
    return _norm(d)


def constant_of(p: Poly) -> Fraction | None:
    """The value of a constant polynomial, else None."""
    if not p:
        return Fraction(0)
    if len(p) == 1 and p[0][0] == ():
        return p[0][1]
    return None


def _is_thread_linear(p: Poly) -> bool:
    """``p`` = tid.x + (terms not involving threads): its residue mod 32 is the lane."""
    c = dict(p).get((THREAD_X,))
    if c != 1:
        return False
    return all(not any(k.startswith("tid") for k in m) for m, _ in p if m != (THREAD_X,))


@lru_cache(maxsize=65536)
def poly(e: E) -> Poly:
    """The polynomial form of a resolved expression."""
    if isinstance(e, Num):
        if isinstance(e.v, float):
            if e.v != e.v or e.v in (float("inf"), float("-inf")):
                return term(opaque_key(e))  # inf / nan are values, not index arithmetic
            return const(Fraction(e.v).limit_denominator(1 << 20))
        return const(e.v)
    if isinstance(e, Sym):
        return term(e.key)
    if isinstance(e, Cast):
        return poly(e.arg)  # index arithmetic does not change with the integer type
    if isinstance(e, Op) and e.op == "?:" and len(e.args) == 3:
        # a clamp for out-of-range threads (``n < N ? n : 0``) keeps the in-range index
        if num(e.args[2]) is not None and num(e.args[1]) is None:
            return poly(e.args[1])
        if num(e.args[1]) is not None and num(e.args[2]) is None:
            return poly(e.args[2])
    if isinstance(e, Op):
        a = e.args
        if e.op == "+" :
            out: Poly = ()
            for x in a:
                out = add(out, poly(x))
            return out
        if e.op == "-" and len(a) == 2:
            return add(poly(a[0]), poly(a[1]), -1)
        if e.op == "neg":
            return mul(const(-1), poly(a[0]))
        if e.op == "*":
            out = const(1)
            for x in a:
                out = mul(out, poly(x))
            return out
        if e.op == "<<" and num(a[1]) is not None and 0 <= num(a[1]) < 32:
            return mul(poly(a[0]), const(1 << int(num(a[1]))))
        if e.op in ("/", "//", ">>", "%", "&") and len(a) == 2:
            return _divmod(e)
    return term(opaque_key(e))


forget_with_nodes(poly.cache_clear)  # pure given the opaque keys, which stay: see forget_with_nodes


def _divmod(e: Op) -> Poly:
    x, y = e.args
    if e.op == "&" and num(x) is not None and num(y) is None:
        x, y = y, x  # & is commutative: the mask may come first
    c = num(y)
    px = poly(x)
    if c is not None and isinstance(c, int):
        divisor = {"/": c, "//": c, ">>": 1 << c if 0 <= c < 32 else None, "%": c, "&": c + 1 if c >= 0 and (c + 1) & c == 0 else None}[e.op]
        if divisor:
            kx = constant_of(px)
            if kx is not None:
                return const(kx % divisor if e.op in ("%", "&") else kx // divisor)
            if divisor == 1 and e.op in ("/", "//", ">>"):
                return px
            if divisor == 32 and _is_thread_linear(px):
                return term("lane" if e.op in ("%", "&") else "warp")
            if e.op in ("/", "//", ">>") and all(c_ % divisor == 0 for _, c_ in px):
                return _norm({m: c_ / divisor for m, c_ in px})  # (32 * i) / 32 -> i
    return term(opaque_key(e))


def coeff(p: Poly, key: str) -> Poly:
    """The coefficient of ``key`` (degree-1 occurrences): the polynomial multiplying it."""
    d: dict[Monomial, Fraction] = {}
    for m, c in p:
        if m.count(key) == 1:
            rest = list(m)
            rest.remove(key)
            r = tuple(rest)
            d[r] = d.get(r, Fraction(0)) + c
    return _norm(d)


def quotient(a: Poly, b: Poly) -> tuple[str, ...] | None:
    """The atoms single-term ``a`` has beyond single-term ``b`` when ``b``'s atoms all occur in
    ``a`` (``BM·G`` over ``BM`` -> ``(G,)``); None when either is not one term or ``b`` does not
    divide ``a``. Constant factors are ignored: strides are compared by what they are made of."""
    if len(a) != 1 or len(b) != 1:
        return None
    rest = list(a[0][0])
    for k in b[0][0]:
        if k not in rest:
            return None
        rest.remove(k)
    return tuple(rest)


COMPILE_TIME = ("cexpr#", "tparam#", "lib:")  # atoms fixed when the kernel is compiled


def terms(p: Poly) -> set[str]:
    return {k for m, _ in p for k in m}


def mentions(p: Poly, prefix: str) -> bool:
    """Whether a term starting with ``prefix`` occurs, also inside opaque terms."""
    for k in terms(p):
        if k.startswith(prefix):
            return True
        if k.startswith("~"):
            sub = _OPAQUE_EXPR.get(k)
            if sub is not None and any(a.startswith(prefix) for a in atoms(sub)):
                return True
    return False


def show(p: Poly) -> str:
    if not p:
        return "0"
    parts = []
    for m, c in p:
        body = "·".join(m)
        if not m:
            parts.append(str(c))
        elif c == 1:
            parts.append(body)
        else:
            parts.append(f"{c}·{body}")
    return " + ".join(parts)


def pointer_offset(e: E) -> Poly | None:
    return poly(e.off) if isinstance(e, Ptr) else None


__all__ = [
    "COMPILE_TIME", "Poly", "add", "coeff", "const", "constant_of", "mentions", "mul", "opaque_expr", "opaque_key", "quotient",
    "poly", "pointer_offset", "show", "term", "terms", "Load",
]
