"""decoupled_lookback: a single-pass scan resolving each tile's prefix from its predecessors.

## What it means
Each tile publishes its aggregate to a status word in global memory, then walks back over
predecessors' status words until it meets an inclusive prefix, and publishes its own prefix;
tiles usually take a dynamic ticket from an atomic counter.

## How it is detected
Inside a loop, a read of a global object (a load, a volatile load, or an atomic that leaves the
word unchanged: ``atomicAdd(&w, 0)``, ``tl.atomic_add(p, 0)``) at an index that moves backwards
from the tile's own index: the loop's iteration enters it with a negative coefficient, or the
index is a local carried round the loop that started from the tile index (the block/program id,
or an atomic ticket, also when the ticket reaches the block through shared memory). The kernel
also writes that object (it publishes), and some atomic is involved (ticket or flag).

## Not to be confused with
Reduce-then-scan; library scans (``cub::DeviceScan``, ``tl.cumsum``); waiting only on the
immediate predecessor (no loop walks back).
"""

from ..facts import poly as P
from ..facts.expr import Load, atoms, num, walk
from ._base import Rule, absent, present
from ._queries import expand, stores_to

RULE = Rule("decoupled_lookback")
TILE = ("bid.", "pid.", "atomic")


def _reads(f) -> list:
    """Global reads inside loops: loads, and atomics that add / or nothing (acquire reads)."""
    return [a for a in f.accesses if a.space == "global" and a.loops and
            (a.kind == "load" or (a.kind == "atomic" and a.value is not None and num(a.value) == 0))]


def _from_tile_index(f, e) -> bool:
    """``e`` derives from the tile index: block/program id or an atomic ticket, directly, through
    a loop-carried local's earlier values, or through a shared-memory broadcast of the ticket."""
    for v in expand(f, e, 3):
        if any(k.startswith(TILE) for k in atoms(v)):
            return True
        for n in walk(v):
            if isinstance(n, Load) and n.space == "shared":
                if any(w.value is not None and any(k.startswith(TILE) for x in expand(f, w.value, 2) for k in atoms(x))
                       for w in stores_to(f, n.obj)):
                    return True
    return False


def _backward(f, a) -> bool:
    lid = a.loops[-1]
    c = P.constant_of(P.coeff(a.poly, f"iter#{lid}"))
    if c is not None and c < 0:
        return True
    return any(k.startswith("carried#") for k in P.terms(a.poly)) or any(k.startswith(("carried#", "phi#")) for k in atoms(a.off))


@RULE.both
def detect(f):
    if not any(x.kind == "atomic" for x in f.accesses):
        return absent("no atomic ticket or flag")
    for a in _reads(f):
        if not _backward(f, a) or not _from_tile_index(f, a.off):
            continue
        published = [w for w in f.accesses if w.obj == a.obj and w.id != a.id and
                     (w.kind in ("store", "rmw") or (w.kind == "atomic" and not (w.value is not None and num(w.value) == 0)))]
        if published:
            return present([a] + published[:1], "look-back over predecessors' status words")
    return absent("no decoupled look-back")
