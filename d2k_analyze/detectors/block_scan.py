"""block_scan: a CTA scans a tile cooperatively (on chip, across its threads).

## What it means
The threads of a block compute the prefix sums of a tile together: each thread's items, a warp
scan of the thread totals with ``__shfl_up_sync``, the warp totals through shared memory; or a
Hillis-Steele ladder in shared memory; or ``cub::BlockScan`` / ``cub::WarpScan``. Triton:
``tl.cumsum`` / ``tl.associative_scan`` over a block tensor.

## How it is detected
CUDA: a value combined with its own copy shuffled *up* (``v + __shfl_up_sync(m, v, d)``, also
behind a ``lane >= d`` select or guard), which is a warp scan; a cub block/warp scan method
(``InclusiveSum``, ``ExclusiveScan``, ...); or, inside a loop, a shared-memory load at the thread's
own position minus a loop-varying distance whose result is stored back to shared memory in the
same loop (a Hillis-Steele ladder); or a Blelloch down-sweep: in a loop, a shared element
overwritten by a plain copy of another element of the same array a thread-independent distance
away. Triton: a live ``tl.cumsum`` / ``tl.cumprod`` /
``tl.associative_scan``.

## Not to be confused with
A reduction (``__shfl_xor_sync`` / ``__shfl_down_sync`` butterflies, ``sdata[t] += sdata[t + s]``
trees: the distance is added, not subtracted); a sequential loop in one thread; a device-wide
library scan called from the host (not a kernel fact).
"""

from ..facts import poly as P
from ..facts.expr import Call, Op, subtree_has, walk
from ._base import Rule, absent, present
from ._queries import is_call, located, swept_down

RULE = Rule("block_scan")
UP_SHUFFLES = frozenset({"__shfl_up_sync", "__shfl_up", "shfl_up", "shfl_up_sync"})
CUB_SCANS = frozenset({"InclusiveSum", "ExclusiveSum", "InclusiveScan", "ExclusiveScan"})
TL_SCANS = frozenset({"cumsum", "cumprod", "associative_scan"})


def _shuffled(call: Call):
    return call.args[1] if len(call.args) >= 3 else (call.args[0] if call.args else None)


_has_up_shuffle = subtree_has(lambda n: is_call(n, UP_SHUFFLES))


def _scans_with_shuffle_up(e) -> bool:
    """``op(v, ... __shfl_up_sync(mask, v, d) ...)``: v combined with its copy from a lower lane."""
    if not _has_up_shuffle(e):
        return False  # decides most values at once: the pairwise search below is quadratic
    for n in walk(e):
        if not isinstance(n, (Op, Call)) or len(n.args) < 2 or is_call(n, UP_SHUFFLES):
            continue
        for arg in n.args:
            for s in walk(arg):
                if is_call(s, UP_SHUFFLES) and _shuffled(s) is not None and _shuffled(s) in n.args:
                    return True
    return False


def _ladder(f) -> list:
    """Shared loads in a loop at (thread position - loop-varying distance), stored back to shared
    memory in that loop."""
    out = []
    for a in f.accesses:
        if a.space != "shared" or a.kind != "load" or not a.loops:
            continue
        lid = a.loops[-1]
        terms = P.terms(a.poly)
        moving = [k for k in terms if k in (f"iter#{lid}", f"ivar#{lid}")]
        thread = any(k.startswith(("tid.", "lane")) for k in terms)
        if not thread or not moving or not any((P.constant_of(P.coeff(a.poly, k)) or 0) < 0 for k in moving):
            continue
        if any(b.space == "shared" and b.kind in ("store", "rmw") and lid in b.loops for b in f.accesses):
            out.append(a)
    return out


@RULE.cuda
def cuda(f):
    # locating loads keeps every call: a value with no up-shuffle has none after it either
    warp = [a for a in f.assigns if _has_up_shuffle(a.new) and (_scans_with_shuffle_up(a.new) or _scans_with_shuffle_up(located(f, a.new)))]
    if warp:
        return present(warp, "a value combined with its copy from lower lanes (__shfl_up_sync): a warp scan")
    lib = [c for c in f.calls if c.short in CUB_SCANS]
    if lib:
        return present(lib, "a cub block/warp scan")
    ladder = _ladder(f)
    if ladder:
        return present(ladder, "a shared-memory scan ladder (element t reads t - d each step)")
    swept = swept_down(f)
    sweeps = [a for a in f.accesses if a.obj in swept and a.kind == "store"]
    if sweeps:
        return present(sweeps[:2], "a Blelloch up-sweep / down-sweep over a shared array")
    return absent("no block-level scan")


@RULE.triton
def triton(f):
    scans = [c for c in f.calls if c.fn.startswith("tl.") and c.short in TL_SCANS]
    if scans:
        return present(scans, "tl scan over a block tensor")
    return absent("no tl scan")
