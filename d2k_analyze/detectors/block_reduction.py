"""block_reduction: a reduction across a whole thread block.

## What it means
A shared-memory tree (a halving stride with a barrier, ``s[t] += s[t + stride]``), a two-level
reduction (warp shuffles, one partial per warp in shared memory, then a final combine), or a
library block reduction (``cub::BlockReduce``).

## How it is detected
A shared store whose value combines a shared load of the same object at the stored offset plus
a thread-independent distance that halves per iteration (or repeats at several constant
distances when unrolled); or warp-level partials: a shuffle reduction's result stored to shared
memory at the warp index, read back after a barrier and reduced again (the warp step may be
``cg::reduce`` over a 32-thread tile); per-thread partials exchanged through shared memory (stored
at one thread-dependent offset, read back at another, as in a transpose ``s[x][y]`` then
``s[y][x]``) and then reduced by warp shuffles, so each warp sums what other warps produced; or
``cub::BlockReduce``.

## Not to be confused with
A Blelloch scan, whose up-sweep is the same tree but whose down-sweep then copies partial sums
back down the array (a shared element overwritten by another element of it);
warp-only reductions, a serial loop by one thread, shared-memory atomics; Triton ``tl.sum``
(the compiler lowers it: not decidable from source).
"""

from ..facts import poly as P
from ..facts.expr import Call, Load, atoms, walk
from ..facts.ops import source_load
from ..compiled.ttgir import Reading, TritonIR
from ._base import Rule, Signature, absent, not_applicable, present
from ._queries import SHUFFLES, is_call, loads_in, swept_down, thread_dependent, triton_reductions
from .warp_shuffle_reduction import shuffle_reductions

def _compiled(ir: TritonIR) -> Reading:
    """Triton: a tt.reduce whose operand layout spreads the reduced axis over several warps
    (warpsPerCTA[axis] > 1) is finished across warps through shared memory."""
    reduces = ir.reduces()
    if not reduces:
        return Reading(None, (), "no tt.reduce")
    layouts = [(axis, b) for axis, b in reduces if b is not None and axis < len(b.warps_per_cta)]
    across = [(axis, b) for axis, b in layouts if b.warps_per_cta[axis] > 1]
    line = ir.lines(r'"tt\.reduce"', "ttgir", 1)
    if across:
        axis, b = across[0]
        return Reading(True, line, f"axis {axis} spans {b.warps_per_cta[axis]} warps (warpsPerCTA = {list(b.warps_per_cta)})")
    if len(layouts) == len(reduces):
        return Reading(False, line, "every reduced axis lies within one warp")
    return Reading(None, (), "a reduced operand's layout could not be read")


RULE = Rule("block_reduction", Signature(triton=_compiled))
# library warp reductions whose result a block reduction parks per warp (``cg::reduce(tile, v, op)``)
WARP_REDUCE_LIBRARY = frozenset({"cg.reduce", "cooperative_groups.reduce"})


def _tree_steps(f) -> list:
    out = []
    for a in f.accesses:
        if a.space != "shared" or a.kind not in ("store", "rmw") or a.value is None:
            continue
        for src in loads_in(f, a.value):
            if src.obj != a.obj or src.id == a.id:
                continue
            d = P.add(src.poly, a.poly, -1)  # distance between the read and the written element
            if not d or P.mentions(d, "tid") or P.mentions(d, "lane"):
                continue
            if P.mentions(a.poly, "tid") or P.mentions(a.poly, "lane"):
                out.append(a)
                break
    return out


@RULE.cuda
def cuda(f):
    if any("BlockReduce" in n for n in f.lib_names) or any("BlockReduce" in c.fn for c in f.calls):
        return present([c for c in f.calls if "BlockReduce" in c.fn or c.short in ("Reduce", "Sum")][:2] or [f.loc], "cub::BlockReduce")
    swept = swept_down(f)  # a Blelloch scan's up-sweep is a tree too, but its result is a scan
    steps = [s for s in _tree_steps(f) if s.obj not in swept]
    looped = [s for s in steps if s.loops and any(f.loops[l].update in ("shr", "div", "mul", "other") for l in s.loops)]
    unrolled = {P.show(P.add(src.poly, s.poly, -1)) for s in steps for src in loads_in(f, s.value) if src.obj == s.obj}
    if looped or len(unrolled) >= 2:
        return present((looped or steps)[:3], "shared-memory tree reduction across the block")
    warp_partials = []
    reductions = shuffle_reductions(f)
    reduced_cells = {a.cell for a in reductions}
    # a reduction kept in memory through a pointer (``*mean`` of a local whose address was taken)
    reduced_objs = {f.accesses[a.access].obj for a in reductions if a.access is not None}
    for a in f.accesses:
        if a.space != "shared" or a.kind != "store" or a.value is None:
            continue
        if "warp" in P.terms(a.poly) and (_from_reduction(a.value, reduced_cells) or any(isinstance(n, Load) and n.obj in reduced_objs for n in walk(a.value))):
            warp_partials.append(a)
    if warp_partials:
        obj = warp_partials[0].obj
        reread = [b for b in f.accesses if b.obj == obj and b.kind == "load" and b.id > warp_partials[0].id]
        if reread:
            return present(warp_partials[:1] + reread[:1], "warp partials combined through shared memory")
    exchange = _exchanged_then_reduced(f, reductions)
    if exchange:
        return present(exchange, "partials exchanged through shared memory, then reduced by warp shuffles")
    return absent("no cross-warp reduction step")


def _exchanged_then_reduced(f, reductions) -> list:
    """A computed value (not a copy of loaded data, as when a vector is staged) stored to shared
    memory at a thread-dependent offset and a later load of the same object at another
    thread-dependent offset (each thread reads what others wrote), whose value a shuffle reduction
    then combines: the store and the load, or [] when there is none."""
    pairs = {}
    for st in f.accesses:
        if st.space != "shared" or st.kind != "store" or not thread_dependent(st) or st.obj in pairs:
            continue
        if source_load(st.value) is not None:
            continue  # a copy of loaded data (a staged vector), not a partial
        for ld in f.accesses:
            if ld.obj != st.obj or ld.kind != "load" or ld.id < st.id or not thread_dependent(ld):
                continue
            d = P.add(ld.poly, st.poly, -1)
            if d and any(P.mentions(d, k) for k in ("tid", "lane", "warp")):
                pairs[st.obj] = [st, ld]
                break
    if not pairs:
        return []
    for r in reductions:
        deps = {d for n in walk(r.new) for d in getattr(n, "deps", ())}
        for obj, found in pairs.items():
            if "load:shared" in deps and f"obj#{obj}" in deps:
                return found
    return []


def _from_reduction(value, cells) -> bool:
    """The stored value is (or derives from) a warp shuffle reduction's result."""
    if any(is_call(n, SHUFFLES) or (type(n) is Call and n.fn in WARP_REDUCE_LIBRARY) for n in walk(value)):
        return True
    keys = atoms(value)
    return any(k.startswith((f"carried#{c}@", f"phi#{c}@")) for c in cells if c is not None for k in keys)


@RULE.triton
def triton(f):
    if triton_reductions(f):
        return not_applicable("tl reductions: the compiler chooses the lowering")
    return absent("no reduction")
