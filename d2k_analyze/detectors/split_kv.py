"""split_kv: the KV / sequence axis of one query split across blocks, merged by log-sum-exp.

## What it means
Flash-decoding: each split writes an unnormalised partial output plus its softmax statistics
(max and sum, or an LSE), and a combine step rescales the partials by ``exp(lse_i - lse_max)``.
Any softmax-type reduction axis split across blocks with such a merge counts.

## How it is detected
A partial kernel: a softmax reduction loop whose loads reach a slice of the reduction axis chosen
by the grid (a grid-derived term that moves along the same axis as the loop's iteration), and
softmax statistics (a maximum, a sum of exponentials or a log-sum-exp) stored to global memory.
A combine kernel: statistics read back from global memory and merged with the rescale
``exp(m_i - max(m))``.

## Not to be confused with
A chunked loop over the whole range inside one block; a persistent loop over rows.
"""

from ..facts import poly as P
from ..facts.expr import Call, Cast, Load, Op, flatten, walk
from ..facts.ops import softmax
from ._base import Rule, absent, present
from ._queries import LOG, cell_of, defs_of, exps_in, is_call
from .online_softmax import rescale_exps

RULE = Rule("split_kv")


def _is_statistic(f, e) -> bool:
    """The value itself is a softmax statistic: a max, a sum (of exponentials), or m + log(s)."""
    while isinstance(e, Cast):
        e = e.arg
    if isinstance(e, Call) and e.fn.startswith("tl.") and e.fn.split(".")[-1] in ("max", "sum"):
        return True
    if isinstance(e, Op) and e.op == "+" and any(is_call(t, LOG) for t in e.args):
        return True
    if isinstance(e, Op) and e.op == "max":
        return True
    c = cell_of(e)
    if c is not None:
        return any(isinstance(d.new, Op) and (d.new.op == "max" or exps_in(d.new)) for d in defs_of(f, c))
    return False


def _axis_slice(f) -> list:
    """Loads in a softmax loop reaching a grid-chosen slice of the loop's own axis."""
    out = []
    soft_loops = {lid for c in f.calls if exps_in(c.call) for lid in c.loops} | {lid for a in f.assigns if exps_in(a.new) for lid in a.loops}
    for a in f.accesses:
        if a.space != "global" or a.kind != "load" or not a.loops or a.loops[-1] not in soft_loops:
            continue
        it = P.constant_of(P.coeff(a.poly, f"iter#{a.loops[-1]}"))
        if not it:
            continue
        for k in P.terms(a.poly):
            if k.startswith(("pid.", "bid.")) or (k.startswith("~") and any(P.mentions(P.term(k), g) for g in ("pid", "bid"))):
                c = P.constant_of(P.coeff(a.poly, k))
                if c and c % it == 0 and c > 0:
                    out.append(a)
                    break
    return out


def _combine(f) -> list:
    """A loaded partial (a sum or an output) times exp(m_i - max(m)) of a loaded statistic."""
    for a in f.assigns:
        for n in walk(a.new):
            if not (isinstance(n, Op) and n.op == "*"):
                continue
            factors = flatten("*", n)
            scaled = [x for x in factors if rescale_exps(x) and any(isinstance(m, Load) for m in walk(x))]
            partial = [x for x in factors if isinstance(_strip(x), Load)]
            if scaled and partial:
                return [a]
    return []


def _strip(e):
    while isinstance(e, Cast):
        e = e.arg
    return e


@RULE.both
def detect(f):
    if not softmax(f) and not _combine(f):
        return absent("no softmax statistics")
    stats = [a for a in f.accesses if a.space == "global" and a.kind == "store" and a.value is not None and _is_statistic(f, a.value)]
    sliced = _axis_slice(f)
    if sliced and stats:
        return present(sliced[:1] + stats[:1], "reduction axis sliced across the grid; partial statistics stored")
    merge = _combine(f)
    if merge:
        return present(merge, "partial statistics read back and merged with exp(m_i - max)")
    return absent("one block covers the whole reduction axis")
