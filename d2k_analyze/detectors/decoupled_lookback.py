"""decoupled_lookback: a single-pass scan resolving each tile's prefix from its predecessors.

## What it means
Each tile publishes its aggregate to a status word in global memory, then walks back over
predecessors' status words until it meets an inclusive prefix, and publishes its own prefix;
tiles usually take a dynamic ticket from an atomic counter.

## How it is detected
A loop reading a global status object at an index that moves backwards from the tile index,
while the same object is written by the kernel (publish), plus an atomic (ticket or flag).

## Not to be confused with
Reduce-then-scan; library scans (``cub::DeviceScan``, ``tl.cumsum``); waiting only on the
immediate predecessor.
"""

from ..facts import poly as P
from ._base import Rule, absent, present

RULE = Rule("decoupled_lookback")


@RULE.both
def detect(f):
    for a in f.accesses:
        if a.space != "global" or a.kind != "load" or not a.loops:
            continue
        c = P.constant_of(P.coeff(a.poly, f"iter#{a.loops[-1]}"))
        backward = (c is not None and c < 0) or P.mentions(a.poly, "carried")
        published = [w for w in f.accesses if w.obj == a.obj and w.kind in ("store", "atomic", "rmw")]
        if backward and published and (P.mentions(a.poly, "bid") or P.mentions(a.poly, "pid") or P.mentions(a.poly, "atomic")) and any(x.kind == "atomic" for x in f.accesses):
            return present([a] + published[:1], "look-back over predecessors' status words")
    return absent("no decoupled look-back")
