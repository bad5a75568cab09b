"""welford: a Welford mean/M2 update or a Chan merge of (count, mean, M2).

## What it means
``d = x - mean; mean += d / n; m2 += d * (x - mean)`` (also a chunk at a time:
``mean += (sum(x) - n_chunk · mean) / n``), or merging partials:
``mean = mean_a + d * n_b / n; m2 = m2_a + m2_b + d² · n_a · n_b / n``.

## How it is detected
On resolved values: a *mean update* ``A + (X - A) · k`` (or ``/ k``) where the same value ``A``
appears as the base and inside the difference, together with an *M2 update* that adds to a
value a product of two differences with that mean (``(X - A) · (X - A')``, or a squared
``(X - A)``); the re-weighted form of the mean update ``(A · n + X) / n'`` counts too, and so
does either update masked for padding (``A + where(ok, (X - A) / n, 0)``). A Chan
merge: ``M2 + n · (mean_a - mean_b)²`` with both sides means, or with partial statistics read
back from memory (loaded ``mean_i``, ``n_i`` and ``M2_i``). Statistics kept in memory through a
pointer compare by the location they read, not by the load that read them. Inductor's
``welford`` helpers. Combine functions handed to ``tl.reduce`` are analysed like any other code.

## Not to be confused with
A single-pass sum and sum of squares (``E[x²] - E[x]²``) or a two-pass centred variance (no
loaded count or M2 partial); a ceiling division ``1 + (x - 1) / k`` (a constant is no mean).
"""

from ..facts.expr import Call, Load, Num, Op, Sym, flatten, rewrite_within, subtree_has, walk
from ..facts.expr import num as num_of
from ._base import Rule, absent, present
from ._queries import located

RULE = Rule("welford")


def _diffs(e) -> list[Op]:
    return [n for n in walk(e) if isinstance(n, Op) and n.op == "-" and len(n.args) == 2]


def _values(f) -> list:
    """(assignment, its value) with every load replaced by the location it reads, for the
    assignments shaped like a mean or M2 update (:func:`_update_shaped`): statistics kept in
    memory (``*mean += (x - *mean) / n`` through a pointer) read the same location twice, as two
    loads that must compare equal. Fused multiply-adds are read as the sum they compute
    (``mean = fmaf(delta, w, mean)`` is ``mean + delta * w``)."""
    cached = f.cache.get("welford_values")
    if cached is None:
        unfused = [(a, _unfused(a.new)) for a in f.assigns]
        cached = [(a, located(f, v)) for a, v in unfused if _update_shaped(v)]
        f.cache["welford_values"] = cached
    return cached


_FMA = frozenset({"fma", "fmaf", "__fmaf_rn", "__fma_rn", "__fmaf_ieee_rn", "tl.fma", "tl.math.fma"})
_has_fma = subtree_has(lambda n: type(n) is Call and n.fn in _FMA and len(n.args) == 3)


def _unfused(e):
    """``e`` with every ``fma(a, b, c)`` written ``a * b + c``."""
    if not _has_fma(e):
        return e
    return rewrite_within(e, lambda n: Op("+", (Op("*", n.args[:2]), n.args[2])) if type(n) is Call and n.fn in _FMA and len(n.args) == 3 else n,
                          _has_fma)


# Locating loads renames leaves and keeps every operator, so a shape test on operators gives
# the same answer before and after it: the assignments that cannot match are never located
# (rewriting every assignment's value was most of this rule's time).


def _unmasked(t):
    """The update a masked term applies: ``where(ok, u, 0)`` (Triton's padding guard) is ``u``."""
    if isinstance(t, Op) and t.op == "?:" and len(t.args) == 3:
        if num_of(t.args[2]) == 0:
            return t.args[1]
        if num_of(t.args[1]) == 0:
            return t.args[2]
    return t


def _terms(value) -> list:
    return [_unmasked(t) for t in flatten("+", value)]


def _update_shaped(value) -> bool:
    """The operator shape every mean / M2 update this rule matches has: a sum with a scaled
    term that holds a difference, or (the re-weighted mean) a quotient."""
    terms = _terms(value)
    if len(terms) < 2:
        return isinstance(value, Op) and value.op in ("/", "fdiv") and len(value.args) == 2
    return any(isinstance(t, Op) and t.op in ("*", "/", "fdiv") and _has_difference(t) for t in map(_summed, terms))


_has_difference = subtree_has(lambda n: type(n) is Op and n.op == "-" and len(n.args) == 2)


def _merge_shaped_at(n) -> bool:
    """The operator shape of :func:`_chan_merge_at`: a sum with a term of two difference factors."""
    if not (isinstance(n, Op) and n.op == "+") or len(n.args) < 2:
        return False
    return any(sum(1 for x in flatten("*", t) if isinstance(x, Op) and x.op == "-" and len(x.args) == 2) >= 2 for t in n.args)


_merge_shaped = subtree_has(_merge_shaped_at)


def mean_updates(f) -> list:
    """(assignment, the mean value A) for values shaped A + (X - A)·k or A + (X - A)/k."""
    out = []
    for a, value in _values(f):
        terms = _terms(value)
        if len(terms) < 2:
            base = _reweighted_mean(value)
            if base is not None:
                out.append((a, base))
            continue
        for base in terms:
            if isinstance(base, Num) or not _data(base):
                continue  # ``1 + (x - 1) / k`` is a ceiling division, not a running mean
            rest = [t for t in terms if t is not base]
            if any(_scaled_difference_with(t, base) for t in rest):
                out.append((a, base))
                break
    return out


def _reweighted_mean(value):
    """``(mean · n + x) / n'``: the running mean re-weighted by its count (the mean it updates)."""
    if not (isinstance(value, Op) and value.op in ("/", "fdiv") and len(value.args) == 2):
        return None
    terms = flatten("+", value.args[0])
    if len(terms) < 2:
        return None
    for t in terms:
        if isinstance(t, Op) and t.op == "*":
            for factor in t.args:
                if isinstance(factor, Sym) and factor.key.startswith(("carried#", "phi#", "at:")):
                    return factor
    return None


def _data(e) -> bool:
    """A value that comes from the data: a load, a location read, or a value carried round a loop."""
    return any(isinstance(n, Sym) and n.key.startswith(("at:", "carried#", "phi#", "ld.")) or isinstance(n, Load)
               or isinstance(n, Call) for n in walk(e))


def _scaled_difference_with(t, base) -> bool:
    """``(X - base) · k`` or ``(X - base) / k``; or, a chunk at a time, ``(S - n_b · base) / n``
    (the chunk's sum less its count times the running mean)."""
    if not (isinstance(t, Op) and t.op in ("*", "/", "fdiv")):
        return False
    return any(d.args[1] == base or (isinstance(d.args[1], Op) and d.args[1].op == "*" and base in flatten("*", d.args[1]))
               for d in _diffs(t))


def _summed(t):
    """The addend of a block reduction (``tl.sum(where(ok, d1 * d2, 0))`` adds ``d1 * d2`` per
    element): a chunked update sums its per-element terms before adding them."""
    if isinstance(t, Call) and t.fn in ("tl.sum", "sum") and t.args:
        return _unmasked(t.args[0])
    return t


def _m2_update(value, means: set) -> bool:
    terms = _terms(value)
    if len(terms) < 2:
        return False
    for t in map(_summed, terms):
        if not (isinstance(t, Op) and t.op in ("*", "/", "fdiv")):
            continue
        diffs = [d for d in _diffs(t) if any(m == d.args[1] or m == d.args[0] for m in means)]
        factors = flatten("*", t)
        squared = any(factors.count(x) >= 2 for x in factors if isinstance(x, Op) and x.op == "-") or any(
            isinstance(x, Op) and x.op == "pow" for x in factors)
        if len(diffs) >= 2 or (diffs and squared):
            return True
    return False


def _mean_like(e) -> bool:
    """A mean: a sum (a reduction or a running total) divided by a count."""
    e = e.args[0] if isinstance(e, Op) and e.op == "?:" and len(e.args) == 3 else e
    return isinstance(e, Op) and e.op in ("/", "fdiv") and any(isinstance(n, Call) and n.fn.startswith("tl.") and n.fn.endswith("sum")
                                                                or isinstance(n, Sym) and n.key.startswith("carried#") for n in walk(e.args[0]))


def _loaded(e) -> bool:
    return any(isinstance(x, Sym) and x.key.startswith("at:") for x in walk(e))


def _partials_merge(total, term, factors) -> bool:
    """Partials read back from memory: ``M2_i + n_i · (mean_i - mean)²`` with ``mean_i``, ``n_i``
    and ``M2_i`` loaded and ``mean`` a mean (a two-pass variance has no loaded count or M2)."""
    diffs = [x for x in factors if isinstance(x, Op) and x.op == "-" and len(x.args) == 2
             and any(_mean_like(y) for y in x.args) and all(_mean_like(y) or _loaded(y) for y in x.args)]
    if len(diffs) < 2 or diffs[0] != diffs[1]:
        return False
    counts = [x for x in factors if x not in diffs and _loaded(x)]
    addends = [x for x in total.args if x is not term and _loaded(x)]
    return bool(counts and addends)


def _chan_merge_at(n) -> bool:
    """``n`` is a sum one of whose terms is ``k · (mean_a - mean_b)²`` (both sides means), or
    a merge of partials read back from memory."""
    if not (isinstance(n, Op) and n.op == "+") or len(n.args) < 2:
        return False
    for t in n.args:
        factors = flatten("*", t)
        diffs = [x for x in factors if isinstance(x, Op) and x.op == "-" and len(x.args) == 2 and all(_mean_like(y) for y in x.args)]
        if len(diffs) >= 2 and diffs[0] == diffs[1]:
            return True
        if _partials_merge(n, t, factors):
            return True
    return False


_has_chan_merge = subtree_has(_chan_merge_at)


def chan_merges(f) -> list:
    """M2 merges of partials: ``M2_a (+ M2_b) + n · (mean_a - mean_b)²`` with both sides means."""
    return [a for a in f.assigns if _merge_shaped(a.new) and _has_chan_merge(located(f, a.new))]


@RULE.both
def detect(f):
    helpers = [c for c in f.calls if c.short in ("welford_reduce", "welford_combine", "welford") and "." in c.fn]
    if helpers:
        return present(helpers, "Inductor welford helpers")
    chan = chan_merges(f)
    if chan:
        return present(chan, "Chan merge of partial (count, mean, M2)")
    updates = mean_updates(f)
    if not updates:
        return absent("no running mean update (sum of squares or two-pass statistics)")
    values = dict((id(a), v) for a, v in _values(f))
    means = {m for _, m in updates} | {values[id(a)] for a, _ in updates}
    m2 = [a for a, v in _values(f) if _m2_update(v, means)]
    if m2:
        return present([updates[0][0], m2[0]], "Welford / Chan update of (mean, M2)")
    return absent("a running mean without an M2 update of the Welford form", [updates[0][0]])
