"""split_kv: the KV / sequence axis of one query split across blocks, merged by log-sum-exp.

## What it means
Flash-decoding: each split writes an unnormalised partial output plus its softmax statistics
(max and sum, or an LSE), and a combine step rescales the partials by ``exp(lse_i - lse_max)``.
Any softmax-type reduction axis split across blocks with such a merge counts.

## How it is detected
A partial kernel of a softmax-type reduction: a loop whose loads reach a slice of the reduction
axis chosen by the grid (the loop starts at a grid-chosen position, or the grid index's
coefficient is the loop's step along that axis times a compile-time factor or the loop's own
extent), and softmax statistics (a maximum, a sum of
exponentials or a log-sum-exp) stored to global memory. A combine kernel: statistics read back
from global memory and merged with the rescale ``exp(m_i - max(m))``, computed in place or
parked in shared memory first. A cluster split: a softmax kernel whose CTAs store their
statistics into a peer CTA's shared memory (``map_shared_rank``, ``mapa``) to merge them there.

## Not to be confused with
A chunked loop over the whole range inside one block; a persistent loop over rows; running
statistics one block keeps in global memory, read and written back at the same address on every
pass (its own state, not other splits' partials).
"""

from ..facts import poly as P
from ..facts.expr import Call, Cast, Load, Op, Tup, atoms, children, flatten, num, walk
from ..facts.ops import softmax
from ._base import Rule, absent, present
from ._queries import LOG, cell_of, defs_of, exps_in, has_exp, is_call, is_exp, stores_to
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
    """Loads in a loop of a softmax kernel reaching a grid-chosen slice of the loop's own axis:
    the grid index's coefficient is the loop's step along that axis times a compile-time factor
    or the loop's own extent (``start = split * CHUNK`` with the loop covering ``CHUNK``). The
    loop is one whose carried values are softmax statistics (a running max, a sum of
    exponentials): a dot product over the head dimension inside it is not the split axis."""
    out = []
    stat_loops = _statistic_loops(f)
    for a in f.accesses:
        if a.space != "global" or a.kind != "load" or not a.loops:
            continue
        if any(lid in stat_loops and _slices(f.loops[lid], a) for lid in a.loops):
            out.append(a)
    return out


def _slices(lp, a) -> bool:
    it = P.coeff(a.poly, f"iter#{lp.id}")
    if not it:
        return False
    grid_stride = lp.step is not None and any(k.startswith(("nprog.", "gdim.")) for k in atoms(lp.step))
    if lp.init is not None and any(k.startswith(("pid.", "bid.")) for k in atoms(lp.init)) and not grid_stride:
        return True  # the loop itself starts at a grid-chosen position of its axis
    extent = _extent(lp)
    for k in P.terms(a.poly):
        if k.startswith(("pid.", "bid.")) or (k.startswith("~") and any(P.mentions(P.term(k), g) for g in ("pid", "bid"))):
            if _same_axis(P.coeff(a.poly, k), it, extent):
                return True
    return False


def _statistic_loops(f) -> set[int]:
    """Loops that carry a softmax statistic: a value updated through a max or an exponential."""
    out: set[int] = set()
    for asg in f.assigns:
        if asg.cell is None or not asg.loops:
            continue
        if not (has_exp(asg.new) or any(isinstance(n, Op) and n.op == "max" for n in walk(asg.new))):
            continue
        out |= {lid for lid in asg.loops if asg.cell in f.loops[lid].carried}
    return out


def _extent(lp) -> frozenset:
    """What a slice's length can be made of: the loop's trip count when it runs from 0 to one
    size (``for j in [0, CHUNK)``), or the sizes of a bound that moves with the grid. A loop
    that runs to the axis' full length whatever the grid index (``c0 + i < seq``) has none: a
    grid index times that length picks another sequence (a head), not a slice of this one."""
    if lp.bound is None:
        return frozenset()
    bound = P.poly(lp.bound)
    if num(lp.init) == 0 and len(bound) == 1:
        return frozenset(bound[0][0])
    keys = atoms(lp.bound)
    return keys if any(k.startswith(("pid.", "bid.")) for k in keys) else frozenset()


def _same_axis(g: P.Poly, it: P.Poly, extent) -> bool:
    """``g`` is ``it`` times a compile-time factor or a size the loop's bound uses."""
    gc, ic = P.constant_of(g), P.constant_of(it)
    if gc is not None and ic is not None:
        return ic != 0 and gc > 0 and gc % ic == 0
    rest = P.quotient(g, it)
    return bool(rest) and all(k.startswith(P.COMPILE_TIME) or k in extent for k in rest)


def _combine(f) -> list:
    """A loaded partial (a sum or an output) times exp(m_i - max(m)) of a loaded statistic (the
    weight computed in place, or parked in shared memory first)."""
    cached = f.cache.get("split_kv.combine")
    if cached is None:
        cached = f.cache["split_kv.combine"] = _find_combine(f)
    return cached


def _find_combine(f) -> list:
    seen: set[int] = set()  # nodes already tested: values nest, and a node failing once fails again
    for a in f.assigns:
        stack = [a.new]
        while stack:
            n = stack.pop()
            if id(n) in seen:
                continue  # its whole subtree was walked for an earlier assignment
            seen.add(id(n))
            stack.extend(children(n))
            if not (isinstance(n, Op) and n.op == "*"):
                continue
            factors = flatten("*", n)
            # the cheap test first: most products have no loaded factor, and then no weight matters
            if any(isinstance(_strip(x), Load) for x in factors) and any(_loaded_weight(f, x) for x in factors):
                return [a]
    return []


def _loaded_weight(f, x) -> bool:
    """``x`` (or what was parked where it is loaded from) is an exp(m_i - max) of loaded data
    that other blocks wrote: a statistic this kernel keeps at one address, reading it and writing
    it back there every pass, is one block's running state, not a split's partial."""
    return any(rescale_exps(v, f) and any(isinstance(m, Load) for m in walk(v)) and not _running_state(f, v)
               for v in _parked(f, x))


def _running_state(f, v) -> bool:
    """Every global statistic ``v`` loads is also stored by this kernel at the same offset."""
    loads = [f.accesses[m.access] for m in walk(v) if isinstance(m, Load) and m.space == "global" and m.access < len(f.accesses)]
    return bool(loads) and all(any(s.obj == ld.obj and s.kind == "store" and s.poly == ld.poly for s in stores_to(f, ld.obj))
                               for ld in loads)


def _parked(f, e) -> list:
    """``e``, and the values stored where ``e`` was loaded from when it is a shared/local load."""
    e = _strip(e)
    if isinstance(e, Load) and e.space in ("shared", "local"):
        return [e] + [w.value for w in stores_to(f, e.obj) if w.value is not None]
    return [e]


def _strip(e):
    while isinstance(e, Cast):
        e = e.arg
    return e


def _parts(value) -> tuple:
    """The members of a stored pair: a brace initialiser's items, make_float2(a, b)'s arguments."""
    if isinstance(value, Tup):
        return value.items
    if isinstance(value, Call) and value.fn.split(".")[-1].startswith("make_float"):
        return value.args
    return (value,)


@RULE.both
def detect(f):
    if not any(is_exp(c.call) for c in f.calls) and not any(has_exp(a.new) for a in f.assigns):
        return absent("no softmax statistics")
    if not softmax(f) and not _combine(f):
        return absent("no softmax statistics")
    stats = [a for a in f.accesses if a.space == "global" and a.kind == "store" and a.value is not None and _is_statistic(f, a.value)]
    sliced = _axis_slice(f)
    if sliced and stats:
        return present(sliced[:1] + stats[:1], "reduction axis sliced across the grid; partial statistics stored")
    merge = _combine(f)
    if merge:
        return present(merge, "partial statistics read back and merged with exp(m_i - max)")
    peers = [a for a in f.accesses if a.kind == "store" and a.value is not None and f.objects[a.obj].origin == "cluster_peer"
             and any(_is_statistic(f, v) for v in _parts(a.value))]
    if peers and softmax(f):
        return present(peers[:1], "reduction axis split over a cluster; statistics exchanged through distributed shared memory")
    return absent("one block covers the whole reduction axis")
