"""privatized_histogram: per-block histograms on chip, merged into the global one once per block.

## What it means
Each block (warp, program) counts into a private copy of the histogram that lives on chip and
adds that copy to the global histogram once, instead of issuing one global atomic per element.

## How it is detected
CUDA: an atomic on a shared-memory object at an offset computed from loaded data (the bin of an
element), and a global atomic or store whose value is read from that same shared object (the
merge). Triton: a global atomic or store whose value comes from ``tl.histogram`` (directly or
through a register accumulator of its results).

## Not to be confused with
Global atomics per element (no private copy); shared memory used to stage input tiles (its
offsets do not depend on the data); host-side library histograms.
"""

from ..facts.expr import Call, Load, walk
from ._base import Rule, absent, present
from ._queries import expand

RULE = Rule("privatized_histogram")


def _data_dependent(e) -> bool:
    return any(isinstance(n, Load) and n.space == "global" for n in walk(e))


def _reads(f, e, obj: int) -> bool:
    return any(isinstance(n, Load) and n.obj == obj for x in expand(f, e, 3) for n in walk(x))


@RULE.cuda
def cuda(f):
    counts = [a for a in f.accesses if a.space == "shared" and a.kind == "atomic" and _data_dependent(a.off)]
    for a in counts:
        merges = [b for b in f.accesses if b.space == "global" and b.kind in ("atomic", "store")
                  and b.value is not None and _reads(f, b.value, a.obj)]
        if merges:
            return present([a, merges[0]], "shared-memory counts at the data's bin, merged into the global histogram")
    return absent("no private on-chip histogram merged into a global one")


@RULE.triton
def triton(f):
    for b in f.accesses:
        if b.space == "global" and b.kind in ("atomic", "store") and b.value is not None:
            if any(isinstance(n, Call) and n.fn == "tl.histogram" for x in expand(f, b.value, 3) for n in walk(x)):
                return present([b], "a program's tl.histogram added to the global histogram")
    return absent("no per-program histogram merged into a global one")
