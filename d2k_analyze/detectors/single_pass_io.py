"""single_pass_io: every input read from global memory once, every output written once.

## What it means
Row- and tile-streaming kernels (normalisations, softmax, losses, elementwise maps, scans) that
load their data once, keep it on chip for every pass and store once. GEMM-like kernels are 0 by
definition (operand panels are re-read for every output tile).

## How it is detected
Global accesses grouped by memory object: two loads of one object in sibling loops (or a load
after the loop that already read it) are a re-read; a store that is read back, or an object
stored in two passes, is 0. GEMM-like kernels (a multiply-accumulate / MMA loop) are 0.

## Not to be confused with
Two loads of neighbouring elements in the same pass.
"""

from ._base import Rule, absent, present
from ._queries import is_gemm

RULE = Rule("single_pass_io")
GEMM_REASON = "GEMM-style reduction loop: operands are re-read across output tiles by design"


def _last_inside(f) -> dict[int, int]:
    last: dict[int, int] = {}
    for a in f.accesses:
        for lid in a.loops:
            last[lid] = max(last.get(lid, -1), a.id)
    for c in f.calls:
        pass
    return last


def separate_passes(f, a, b, last) -> bool:
    """Whether two accesses run in different passes over the data."""
    common = 0
    while common < min(len(a.loops), len(b.loops)) and a.loops[common] == b.loops[common]:
        common += 1
    rest_a, rest_b = a.loops[common:], b.loops[common:]
    if rest_a and rest_b:
        return True  # sibling loops
    first, second = (a, b) if a.id < b.id else (b, a)
    inner = (first.loops[common:] or [None])[0]
    return inner is not None and not second.loops[common:] and second.id > last.get(inner, -1)


def _spread(accs: list) -> list:
    """The first and last access of each loop nest: whether two accesses run in separate passes
    depends only on their loop nests and their order, so these stand for all of them (and the
    pairwise check stays linear in the kernel's length)."""
    keep: dict[tuple, list] = {}
    for a in accs:
        ends = keep.setdefault(a.loops, [a, a])
        if a.id < ends[0].id:
            ends[0] = a
        if a.id > ends[1].id:
            ends[1] = a
    return sorted({x.id: x for ends in keep.values() for x in ends}.values(), key=lambda x: x.id)


@RULE.both
def detect(f):
    if is_gemm(f):
        return absent(GEMM_REASON, [f.loops[i] for i in sorted(f.loops)][:1])
    last = _last_inside(f)
    glob = [a for a in f.accesses if a.space == "global"]
    reads = [a for a in glob if a.kind in ("load", "rmw")]
    if not reads:
        return absent("no global loads found")
    by_obj: dict[int, list] = {}
    for a in reads:
        by_obj.setdefault(a.obj, []).append(a)
    for accs in by_obj.values():
        accs = _spread(accs)
        for i, a in enumerate(accs):
            for b in accs[i + 1:]:
                if separate_passes(f, a, b, last):
                    return absent("an input is loaded again in a later pass", [a, b])
    writes: dict[int, list] = {}
    for a in glob:
        if a.kind in ("store", "rmw"):
            writes.setdefault(a.obj, []).append(a)
    for obj, ws in writes.items():
        ws = _spread(ws)
        back = [r for r in _spread(by_obj.get(obj, [])) if any(r.id > w.id and separate_passes(f, w, r, last) for w in ws)]
        if back:
            return absent("an output is written and read back", ws[:1] + back[:1])
        for i, w in enumerate(ws):
            if any(separate_passes(f, w, v, last) for v in ws[i + 1:]):
                return absent("an output is written in two passes", ws[:2])
    return present([accs[0] for accs in by_obj.values()][:3], "each input loaded once per block; outputs written once")
