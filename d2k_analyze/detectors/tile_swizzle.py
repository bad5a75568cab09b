"""tile_swizzle: block/program ids remapped for L2 reuse.

## What it means
The tile a block computes is not the row-major order of its id: ``GROUP_SIZE_M`` grouping
(``pid_m = first_pid_m + (pid % group) % group_size``), ``tl.swizzle2d``, super-tile /
log-tile rasterisation (bits of one block index moved into another), serpentine order.

## How it is detected
A tile coordinate used in the global offsets is a sum whose terms come from *both* a quotient
and a remainder (or shifted / masked bits) of block indices with different divisors, or from two
different grid axes mixed through bit operations; or ``tl.swizzle2d``. A grouping factor that
resolves to 1 makes the remainder vanish and earns nothing.

## Not to be confused with
Row-major decomposition (``pid // n``, ``pid % n``), batch decomposition of a linear id.
"""

from ..facts import poly as P
from ..facts.expr import Op, atoms, num, walk
from ._base import Rule, absent, present

RULE = Rule("tile_swizzle")


def _grid_dep(e, tile_iters: frozenset[str]) -> bool:
    """Depends on the block/program index, or on the tile index of a persistent tile loop."""
    return any(k.startswith(("bid.", "pid.")) or k in tile_iters for k in atoms(e))


def _parts(e, tile_iters) -> list[tuple[str, str]]:
    """What kind of index arithmetic on a grid atom an expression does: quotient / remainder / bits."""
    kinds = []
    for n in walk(e):
        if isinstance(n, Op) and len(n.args) == 2 and _grid_dep(n.args[0], tile_iters):
            d = num(n.args[1])
            if _at_most_one(n.args[1]) and n.op in ("%", "/", "//"):
                continue  # a group of one: the remainder vanishes
            if n.op in ("/", "//", ">>"):
                kinds.append(("q", repr(n.args[1])))
            elif n.op == "%" and d != 1:
                kinds.append(("r", repr(n.args[1])))
            elif n.op == "&" and d not in (0,):
                kinds.append(("r", repr(n.args[1])))
            elif n.op == "<<":
                kinds.append(("s", repr(n.args[1])))
            elif n.op == "^" and _grid_dep(n.args[1], tile_iters):
                kinds.append(("x", ""))
    return kinds


def _at_most_one(e) -> bool:
    return num(e) == 1 or (isinstance(e, Op) and e.op == "min" and any(num(x) == 1 for x in e.args))


def _swizzled(e, tile_iters) -> bool:
    if not (isinstance(e, Op) and e.op == "+"):
        return False
    terms = [_parts(t, tile_iters) for t in e.args]
    quot = {d for t in terms for k, d in t if k in ("q", "s")}
    rem = {d for t in terms for k, d in t if k == "r"}
    mixed_terms = [t for t in terms if t]
    return len(mixed_terms) >= 2 and bool(quot) and bool(rem) and quot != rem


@RULE.both
def detect(f):
    calls = [c for c in f.calls if c.short in ("swizzle2d",)]
    if calls:
        return present(calls, "tl.swizzle2d")
    tile_iters = frozenset(f"iter#{lp.id}" for lp in f.loops.values() if lp.init is not None and any(k.startswith(("bid.", "pid.")) for k in atoms(lp.init)))
    tile_iters |= frozenset(f"ivar#{lp.id}" for lp in f.loops.values())
    used = {k for a in f.accesses if a.space == "global" for k in P.terms(a.poly)}
    hits = []
    for rec, value in [(a, a.new) for a in f.assigns] + [(a, a.off) for a in f.accesses if a.space == "global"]:
        for n in walk(value):
            if isinstance(n, Op) and n.op == "+" and _swizzled(n, tile_iters) and _feeds(n, used):
                hits.append(rec)
                break
            if isinstance(n, Op) and n.op == "^" and all(_grid_dep(x, tile_iters) for x in n.args) and _feeds(n, used):
                hits.append(rec)
                break
        if hits:
            break
    if hits:
        return present(hits, "tile coordinates remapped from the block id (grouped / swizzled order)")
    return absent("tiles visited in plain row-major order")


def _feeds(e, used: set[str]) -> bool:
    """Part of ``e`` (its quotient / remainder sub-terms) reaches a global memory offset."""
    if P.terms(P.poly(e)) & used:
        return True
    return any(isinstance(n, Op) and n.op in ("%", "/", "//", "&", ">>", "^") and P.opaque_key(n) in used for n in walk(e))
