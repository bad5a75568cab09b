"""coalesced_access: adjacent threads touch adjacent addresses in the main global loads.

## What it means
In the kernel's main global loads (those in its deepest loops that load), consecutive lanes of a
warp read consecutive elements (or vectors): the offset's coefficient of ``threadIdx.x`` (or of
the lane, ``threadIdx.x % 32``) is one element of the access type. 0 only for an obviously
strided pattern: a lane coefficient that is a row length or any constant above one.

## How it is detected
Each main global load's offset is evaluated for the 32 lanes of a warp (other atoms at
representative values): consecutive lanes one element apart is contiguous, all equal is a
broadcast, addresses that cover one range without a gap wider than one lane's access (lanes
sharing an element included) contiguous, and so are groups of lanes that each cover whole
32-byte sectors (four lanes of 16 bytes per row, rows apart); anything else strided (when the offset cannot be evaluated,
the lane's coefficient in its polynomial form decides). Absent when strided main loads outnumber contiguous ones; present
otherwise, including traffic that only goes through library tile copies or TMA (no strided
pattern is visible, and the property is 0 only for an obviously strided one).

## Not to be confused with
A block-stride loop (``i = tid; i < n; i += blockDim.x``): its lane coefficient is 1, coalesced.
"""

from ..facts import poly as P
from ..facts.concrete import lane_offsets
from ..compiled.ttgir import Reading, TritonIR
from ._base import Rule, Signature, absent, present
from ._queries import cached_vector, mac_sources, sources

def _compiled(ir: TritonIR) -> Reading:
    """Triton: the coalescing pass orders each load layout by the contiguity it proved; when the
    loads are also vectorized (contiguity > 1) and adjacent lanes walk that fastest dimension,
    adjacent threads touch adjacent addresses. Scalar loads leave it undecided."""
    layouts = ir.load_layouts()
    vector = ir.lines(r"\bld\.global(?:\.[\w:]+)*?\.v[248]\.\w+")
    if not layouts or not vector:
        return Reading(None, (), "no vectorized pointer loads to read the access pattern from")
    along = [b for b in layouts if b.order and b.threads_per_warp[b.order[0]] > 1]
    if len(along) == len(layouts):
        return Reading(True, vector[:1] + ir.lines(r"#ttg\.blocked<", "ttgir", 1), "lanes walk the contiguous dimension of every load")
    return Reading(None, (), "some loads put adjacent lanes on a strided dimension")


RULE = Rule("coalesced_access", Signature(triton=_compiled))


SECTOR = 32  # bytes: the unit a warp's global request is served in


def _runs(offsets: list[int], span: float) -> list[tuple[int, int]]:
    """The warp's addresses merged into contiguous runs (first, last offset): a gap no wider than
    what one lane's access covers continues a run."""
    runs: list[tuple[int, int]] = []
    for o in sorted(set(offsets)):
        if runs and o - runs[-1][1] <= span:
            runs[-1] = (runs[-1][0], o)
        else:
            runs.append((o, o))
    return runs


def _classify(acc) -> str:
    offs = lane_offsets(acc.off)
    if offs is not None:
        if len(set(offs)) == 1:
            return "broadcast"
        # the warp's addresses, in elements, cover one range with no gap wider than an access
        # (lanes sharing an element, ``tid / 2``, or half-element steps of a reinterpreted
        # pointer are as dense as one element per lane; a 16-byte cp.async of halves spans 8)
        step = acc.unit or acc.width or 4
        span = max(1.0, (acc.width or step) / step)
        runs = _runs(offs, span)
        if len(runs) == 1:
            return "unit"
        # lanes in groups that each fill whole sectors (four lanes x 16 bytes of one row, then the
        # next row): every byte fetched is used, as dense as one run
        shortest = min((last - first + span) * step for first, last in runs)
        return "unit" if shortest >= SECTOR else "strided"
    stride = acc.thread_stride()
    if not stride:
        return "broadcast" if not P.mentions(acc.poly, "tid.x") and not P.mentions(acc.poly, "lane") else "unknown"
    c = P.constant_of(stride)
    if c is None:
        return "strided"
    return "unit" if abs(c) == 1 else ("strided" if abs(c) > 1 else "unknown")


def _tile_fills(f) -> set[int]:
    """Global loads whose data is staged in shared-memory tiles (the main loads of a tiled
    kernel); filling a cached vector every warp reads alike is a one-off copy, not the main
    traffic."""
    return {x.id for a in f.accesses if a.space == "shared" and a.kind in ("store", "rmw") and a.value is not None
            and not cached_vector(f, a.obj)
            for x in sources(f, a.value) if x.space == "global"} | {a.id for a in f.accesses if a.space == "global" and a.via == "async"}


@RULE.cuda
def cuda(f):
    loads = [a for a in f.accesses if a.space == "global" and a.kind in ("load", "rmw")]
    tma = [a for a in f.accesses if a.via == "tma" and a.space == "shared" and a.kind == "store"]
    if not loads and tma:  # the inputs arrive by TMA tile copies: whole rows of the tile per request
        return present(tma[:1], "global loads are TMA tile copies: no strided pattern visible")
    if not loads:
        loads = [a for a in f.accesses if a.space == "global" and a.kind == "store"]
    if not loads:
        if f.calls or f.asm:
            return present([f.loc], "global traffic only through library tile copies / TMA: no strided pattern visible")
        return absent("no global memory accesses")
    hot = {x.id for x in mac_sources(f) if x.space == "global"} | _tile_fills(f)
    depth = max(len(a.loops) for a in loads)
    main = [a for a in loads if a.id in hot] or [a for a in loads if len(a.loops) == depth] or loads
    kinds = {a.id: _classify(a) for a in main}  # the other loads only if evidence is needed
    unit = [a for a in main if kinds[a.id] == "unit"]
    strided = [a for a in main if kinds[a.id] == "strided"]
    if strided and len(strided) > len(unit):
        return absent("lanes load elements a row or stride apart", strided)
    evidence = unit or [a for a in loads if a.id not in kinds and _classify(a) == "unit"] or main[:1]
    return present(evidence, "consecutive lanes load consecutive elements" if unit else "no strided pattern in the main loads")
