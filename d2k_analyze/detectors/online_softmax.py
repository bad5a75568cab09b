"""online_softmax: a running max with a rescaled running sum in one pass.

## What it means
As data arrives, ``m_new = max(m_old, ...)`` and the running sum (and any accumulator that
depends on the normalisation, like attention's P·V) is multiplied by ``exp(m_old - m_new)``
before the new terms are added; merging partial (max, sum) pairs with the same rescale counts
(across lanes, warps, loop chunks, or an LSE combine of splits). exp2 with a folded scale counts.

## How it is detected
On resolved values: an update whose new value multiplies the *old value of the same local*
(the loop-carried value, or the merged partner's) by an ``exp``/``exp2`` of ``a - max(a, ...)``
(or ``max(a, ...) - a`` negated), or of ``m - v`` in a branch taken when ``v > m`` (the running
max kept by a comparison), however the locals are named; or a pair merge
``s_a * exp(m_a - m) + s_b * exp(m_b - m)`` with ``m = max(m_a, m_b)``; or a merge written with
selections (``big = a.m > b.m ? a : b``, ``d = big.d + small.d * exp(small.m - big.m)``), read on
each side of its comparison.

## Not to be confused with
A three-pass softmax (separate max, sum and normalise passes) or a one-block safe softmax
(max, then sum of exp(x - max)): no running rescale.
"""

from dataclasses import replace

from ..facts.expr import Call, Load, Op, Sym, flatten, num, rewrite, rewrite_within, walk
from ..facts.ops import without_constant_scale
from ._base import Rule, absent, present
from ._queries import expand, exps_in, has_exp, has_load

RULE = Rule("online_softmax")


def rescale_exps(e, f=None) -> list:
    """``exp(a - max(a, ...))``-shaped factors inside ``e`` (any scale folded in). With the
    kernel's facts, merged values are looked through (``exp2(m_old·c - m_new·c)`` where both
    scaled maxima were computed under ``if constexpr`` alternatives)."""
    out = []
    for x in exps_in(e):
        for n in walk(x):
            if isinstance(n, Op) and n.op == "-" and len(n.args) == 2:
                if any(_is_max_of(b, a) or _is_max_of(a, b) for a, b in _alternatives(f, *n.args)):
                    out.append(x)
                    break
    return out


def _alternatives(f, a, b) -> list[tuple]:
    """(a, b) and, with facts, the values their merged symbols stand for, constant scales removed."""
    pairs = [(a, b)]
    if f is None:
        return pairs
    left = [without_constant_scale(v) for v in expand(f, a, 1)]
    right = [without_constant_scale(v) for v in expand(f, b, 1)]
    pairs += [(x, y) for x in left for y in right]
    # statistics read from one array in two loops (max over lse[i], then exp(lse[i] - max)):
    # the same array, whichever element a loop reads
    return pairs + [(_by_array(x), _by_array(y)) for x, y in pairs]


def _by_array(e):
    return rewrite_within(e, lambda n: Sym(f"array:{n.obj}") if isinstance(n, Load) else n, has_load)


def _is_max_of(m, a) -> bool:
    """``m`` is a maximum taken over ``a`` (and others): max(a, b), tl.max(a), a reduced max."""
    if isinstance(m, Op) and m.op == "max":
        terms = flatten("max", m)
        if a in terms:
            return True
        # a max over part of the same terms: max(x, y, z) is also the max of max(x, z) and y
        return isinstance(a, Op) and a.op == "max" and all(t in terms for t in flatten("max", a)) and len(terms) > len(flatten("max", a))
    if isinstance(m, Call) and m.fn.startswith(("tl.", "cg.")) and m.fn.endswith("max") and m.args:
        return m.args[0] == a or a in flatten("max", m.args[0])
    return False


def _rescaled_old(assign, f=None) -> bool:
    old = assign.old
    if old is None:
        return False
    for n in walk(assign.new):
        if isinstance(n, Op) and n.op == "*" and old in flatten("*", n):
            others = Op("*", tuple(x for x in flatten("*", n) if x != old))
            if rescale_exps(others, f) or _rescaled_under_new_max(others, assign.guards):
                return True
    return False


def _rescaled_under_new_max(e, guards) -> bool:
    """``if (v > m) s = s * exp(m - v) + ...``: the running max kept by a comparison instead of
    ``max()``, the sum rescaled by ``exp(m - v)`` in the branch where ``v`` is the larger (also
    the branch where ``m > v`` fails)."""
    larger = set()
    for g in guards:
        negated = isinstance(g, Op) and g.op == "not" and len(g.args) == 1
        g = g.args[0] if negated else g
        if isinstance(g, Op) and len(g.args) == 2 and g.op in (">", ">=", "<", "<="):
            big, small = g.args if (g.op in (">", ">=")) != negated else g.args[::-1]
            larger.add((small, big))
    if not larger:
        return False
    for x in exps_in(e):
        for n in walk(x):
            if isinstance(n, Op) and n.op == "-" and len(n.args) == 2 and (n.args[0], n.args[1]) in larger:
                return True
    return False


def _pair_merge(assign, f=None) -> bool:
    """``s_a * exp(m_a - m) + s_b * exp(m_b - m)``; with the kernel's facts, a running max read
    back from memory twice (``max(sMax[r], m_b)`` and ``exp(sMax[r] - ...)``) is one value."""
    terms = flatten("+", assign.new)
    scaled = [t for t in terms if rescale_exps(t, f)]
    return len(scaled) >= 2


def _merged_partials(e) -> bool:
    """A sum over partial sums each rescaled to the common max: sum(s_i * exp(m_i - max(m))),
    where the m_i are statistics read back from memory (each split's max or log-sum-exp). A
    one-block softmax weighting values by exp(s - max(s)) of scores it computed itself (a decode
    kernel's P·V over one KV block) is the same shape, but nothing running is merged there."""
    for n in walk(e):
        if isinstance(n, Call) and n.fn.startswith("tl.") and n.fn.endswith("sum") and n.args:
            for p in walk(n.args[0]):
                if isinstance(p, Op) and p.op == "*" and any(_rescales_stored_stats(x) for x in flatten("*", p) if rescale_exps(x)):
                    return True
    return False


def _rescales_stored_stats(x) -> bool:
    """``exp(m_i - max(m))`` whose m_i is a loaded value (a folded scale aside)."""
    for n in walk(x):
        if isinstance(n, Op) and n.op == "-" and len(n.args) == 2:
            a, b = n.args
            for stat, peak in ((a, b), (b, a)):
                if _is_max_of(peak, stat) and isinstance(without_constant_scale(stat), Load):
                    return True
    return False


def _selected(e, cond, side: bool):
    """``e`` with every ``cond ? x : y`` replaced by the side ``cond`` takes."""
    return rewrite(e, lambda n: (n.args[1] if side else n.args[2]) if isinstance(n, Op) and n.op == "?:" and len(n.args) == 3 and n.args[0] == cond else n)


def _rescaled_in_a_branch(assign, f) -> bool:
    """A merge written with selections instead of ``max()`` (``big = a.m > b.m ? a : b``; the sum
    becomes ``big.d + small.d * exp(small.m - big.m)``): on each side of the comparison the
    update is an ordinary one, the old sum rescaled where the new value is the larger."""
    if _smaller_partial_rescaled(assign):  # the comparison is an ``if`` around the merge
        return True
    conds = {n.args[0] for n in walk(assign.new) if isinstance(n, Op) and n.op == "?:" and len(n.args) == 3}
    for c in conds:
        for side in (True, False):
            branch = replace(assign, new=_selected(assign.new, c, side), guards=tuple(assign.guards) + ((c,) if side else (Op("not", (c,)),)))
            if _rescaled_old(branch, f) or _smaller_partial_rescaled(branch):
                return True
    return False


def _smaller_partial_rescaled(assign) -> bool:
    """A merge of two partials: on the side where ``p > q`` holds, a sum is multiplied by
    ``exp(q - p)`` (the smaller partial brought to the larger max) and added to the other (also
    inside a constructed value, ``Pair{p.m, p.s + q.s * exp(q.m - p.m)}``)."""
    for total in walk(assign.new):
        if not isinstance(total, Op) or total.op != "+":
            continue
        terms = flatten("+", total)
        for t in terms:
            if not isinstance(t, Op) or t.op != "*":
                continue
            factors = flatten("*", t)
            exps = [x for x in factors if has_exp(x)]
            rest = [x for x in factors if not has_exp(x) and num(x) is None]
            if exps and rest and len(terms) >= 2 and any(_rescaled_under_new_max(x, assign.guards) for x in exps):
                return True
    return False


@RULE.both
def detect(f):
    # every form below rescales by an exponential: values without one are skipped at once
    hits = [a for a in f.assigns if has_exp(a.new) and (_rescaled_old(a, f) or _pair_merge(a, f) or _merged_partials(a.new) or _rescaled_in_a_branch(a, f))]
    hits += [a for a in f.accesses if a.kind in ("store", "rmw") and a.value is not None and a.space in ("shared", "local")
             and has_exp(a.value) and _pair_merge_value(a.value)]
    if hits:
        return present(hits, "running sum/accumulator rescaled by exp(m_old - m_new)")
    return absent("no running rescale of the sum by exp(m_old - m_new)")


def _pair_merge_value(e) -> bool:
    return len([t for t in flatten("+", e) if rescale_exps(t)]) >= 2
