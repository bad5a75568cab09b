"""decoupled_lookback: a single-pass scan resolving each tile's prefix from its predecessors.

## What it means
Each tile publishes its aggregate to a status word in global memory, then walks back over
predecessors' status words until it meets an inclusive prefix, and publishes its own prefix;
tiles usually take a dynamic ticket from an atomic counter.

## How it is detected
Inside a loop, a read of a global object (a load, a volatile load, or an atomic that leaves the
word unchanged: ``atomicAdd(&w, 0)``, ``tl.atomic_add(p, 0)``, also of a zero block) at an index that moves backwards
from the tile's own index: the loop's iteration enters it with a negative coefficient, or the
index is a local carried round the loop that started from the tile index, or the loop steps its
index down whichever way its selects go (the block/program id,
or an atomic ticket, also when the ticket reaches the block through shared memory). The kernel
also writes that object (it publishes), and some atomic is involved (ticket or flag).

## Not to be confused with
Reduce-then-scan; library scans (``cub::DeviceScan``, ``tl.cumsum``); waiting only on the
immediate predecessor (no loop walks back).
"""

from ..facts import poly as P
from ..facts.expr import Call, Load, Op, atoms, num, rewrite, walk
from ._base import Rule, absent, present
from ._queries import expand, stores_to

RULE = Rule("decoupled_lookback")
TILE = ("bid.", "pid.", "atomic")
SIZES = ("cexpr#", "tparam#")  # compile-time sizes: positive


def _zero(e) -> bool:
    """A value that adds / ors nothing: 0, or a zero-filled block (``tl.zeros``, ``tl.full(.., 0, ..)``)."""
    if num(e) == 0:
        return True
    if isinstance(e, Call) and e.fn in ("tl.zeros", "tl.zeros_like"):
        return True
    return isinstance(e, Call) and e.fn == "tl.full" and len(e.args) >= 2 and num(e.args[1]) == 0


def _reads(f) -> list:
    """Global reads inside loops: loads, and atomics that add / or nothing (acquire reads)."""
    return [a for a in f.accesses if a.space == "global" and a.loops and
            (a.kind == "load" or (a.kind == "atomic" and a.value is not None and _zero(a.value)))]


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


def _arms(e, limit: int = 16) -> list:
    """``e`` with every ``c ? x : y`` replaced by one of its arms, in every combination (capped)."""
    for n in walk(e):
        if isinstance(n, Op) and n.op == "?:" and len(n.args) == 3:
            out = []
            for arm in n.args[1:]:
                out += _arms(rewrite(e, lambda m, n=n, arm=arm: arm if m == n else m), limit)
            return out[:limit]
    return [e]


def _steps_down(step) -> bool:
    """A loop step that moves back whichever way its selects go: every arm is a sum of
    non-positive multiples of the tile index, of compile-time sizes (a constexpr window) and of
    1, and some arm is negative (``p = done ? -1 : p - W`` steps by -(p + 1) or -W)."""
    if step is None:
        return False
    negative = False
    for arm in _arms(step):
        poly = P.poly(arm)
        for mono, c in poly:
            if any(not k.startswith(TILE + SIZES) for k in mono) or c > 0:
                return False
            negative = negative or c < 0
    return negative


def _backward(f, a) -> bool:
    lid = a.loops[-1]
    c = P.constant_of(P.coeff(a.poly, f"iter#{lid}"))
    if c is not None and c < 0:
        return True
    if f"iter#{lid}" in atoms(a.off) and _steps_down(f.loops[lid].step):
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
                     (w.kind in ("store", "rmw") or (w.kind == "atomic" and not (w.value is not None and _zero(w.value))))]
        if published:
            return present([a] + published[:1], "look-back over predecessors' status words")
    return absent("no decoupled look-back")
