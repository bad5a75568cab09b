"""grouped_tile_scheduler: one launch over the tiles of many GEMMs whose sizes are read at run time.

## What it means
A single launch covers the output tiles of several independent GEMM problems (the experts of an
MoE layer): the groups' sizes are loaded in the kernel, turned into per-group tile counts, summed
into a running or prefix total, and each program (or each iteration of a persistent tile loop)
finds the group whose tile range holds its tile index; the group found selects the operand
offsets (an expert's weight, a group's first row).

## How it is detected
1. Tile counts: a division (``/``, ``//``, ``cdiv``, ``>>``) of a value loaded from global memory
   by a value that is not loaded (``(size + BM - 1) // BM``, ``tl.cdiv(size, BM)``); a local
   holding such a value is a count cell.
2. A running sum of them: a ``tl.cumsum`` / ``tl.associative_scan`` of a count, or a local
   carried round a loop whose update adds a count (or a count cell) to its own previous value.
3. The search: a comparison (``<``, ``<=``, ``>``, ``>=``) that involves both that sum and a tile
   index (a block/program id, or the iteration of a loop that starts at one); or, where the
   comparison is a ``while`` condition (which the fact layer does not keep), a ``while`` loop
   nested in such a tile loop whose induction variable steps by a count.
4. The group found reaches the operands: a global load (pointer or descriptor) of another array
   than the sizes whose offset contains a reduction over the comparison (``tl.sum(prefix <= tile)``: the number of groups
   that end before the tile, used as the group index; a comparison used only as a mask or a
   ``tl.where`` select does not count), or a local
   assigned under the comparison (``if (tile < end) { g = e; break; }``) or counted up inside the
   walking ``while`` loop.

## Not to be confused with
A batched GEMM whose grid axis is the batch (every batch the same size, no running sum); a host
loop that launches one kernel per group (each launch sees one GEMM: no sizes loaded); a tile ->
group table written by the host and read per tile (no counts or search in the kernel); sizes
loaded only to mask the rows of a grid sized for the largest group; a segment search over row
offsets with no tile counts (``cumsum(sizes) <= row``: no ceil-division by a tile size); a kernel
that builds a tile -> group table on the device (it finds each tile's group but reads only the
sizes array again, no operand).
"""

from __future__ import annotations

from ..facts.expr import Call, Load, Op, atoms, subtree_has, walk
from ._base import Rule, absent, present

RULE = Rule("grouped_tile_scheduler")

DIVISIONS = frozenset({"/", "//", "cdiv", ">>"})
COMPARISONS = frozenset({"<", "<=", ">", ">="})
SCANS = frozenset({"tl.cumsum", "tl.associative_scan"})
GROUP_REDUCTIONS = frozenset({"tl.sum", "tl.max", "tl.min", "tl.argmax", "tl.argmin", "tl.reduce"})

has_global_load = subtree_has(lambda n: isinstance(n, Load) and n.space == "global")


def _is_count(n) -> bool:
    """A loaded value divided by something that is not loaded: a tile count of a run-time size."""
    return (isinstance(n, Op) and n.op in DIVISIONS and len(n.args) == 2
            and has_global_load(n.args[0]) and not has_global_load(n.args[1]))


has_count = subtree_has(_is_count)


def _cell_atoms(keys, cells: set[int]) -> bool:
    """Whether atoms name the value of one of ``cells`` (carried round a loop or merged: φ)."""
    for k in keys:
        if k.startswith(("carried#", "phi#")):
            try:
                if int(k.split("#", 1)[1].split("@", 1)[0]) in cells:
                    return True
            except ValueError:
                continue
    return False


def _tile_loops(f) -> set[int]:
    return {lid for lid, lp in f.loops.items()
            if lp.init is not None and any(k.startswith(("pid.", "bid.")) for k in atoms(lp.init))}


def _tile_index(keys, tile_loops: set[int]) -> bool:
    return any(k.startswith(("pid.", "bid.")) for k in keys) or any(f"iter#{lid}" in keys for lid in tile_loops)


def _expressions(f):
    """(value, record) pairs of every resolved expression a comparison can sit in."""
    for a in f.assigns:
        yield a.new, a
        for g in a.guards:
            yield g, a
    for a in f.accesses:
        yield a.off, a
        for g in a.guards:
            yield g, a
    for c in f.calls:
        yield c.call, c
    for lp in f.loops.values():
        if lp.bound is not None:
            yield lp.bound, lp


@RULE.both
def detect(f):
    count_cells = {a.cell for a in f.assigns if a.cell is not None and has_count(a.new)}

    def countish(v) -> bool:
        return has_count(v) or _cell_atoms(atoms(v), count_cells)

    # running sums: loop-carried locals that add a count to themselves
    sum_cells: dict[int, object] = {}
    for a in f.assigns:
        if a.cell is None or not a.loops:
            continue
        lid = a.loops[-1]
        if a.cell in f.loops[lid].carried and _cell_atoms(atoms(a.new), {a.cell}) and countish(a.rhs if a.op == "+=" else a.new):
            sum_cells[a.cell] = a
    scans = [c for c in f.calls if c.fn in SCANS and any(countish(x) for x in c.call.args)]
    if not sum_cells and not scans:
        return absent("no running sum of per-group tile counts computed from loaded sizes")
    is_scan = subtree_has(lambda n: isinstance(n, Call) and n.fn in SCANS and any(countish(x) for x in n.args))
    tile_loops = _tile_loops(f)

    def is_search(n) -> bool:
        if not (isinstance(n, Op) and n.op in COMPARISONS):
            return False
        keys = atoms(n)
        return _tile_index(keys, tile_loops) and (is_scan(n) or _cell_atoms(keys, set(sum_cells)))

    has_search = subtree_has(is_search)
    # the vector form: the group index is a reduction over the comparisons (how many groups end
    # before the tile), not a comparison used as a mask or a select
    counts_groups = subtree_has(lambda n: isinstance(n, Call) and n.fn in GROUP_REDUCTIONS and any(has_search(x) for x in n.args))
    searches = []
    for value, rec in _expressions(f):
        if has_search(value):
            searches.append((value, rec))
    # locals that hold the group found: assigned under a search, or counted up in a walking loop
    group_cells = {a.cell for a in f.assigns if a.cell is not None and any(has_search(g) for g in a.guards)}
    walks = []
    for lid, lp in f.loops.items():
        if lp.kind not in ("while", "do") or lp.step is None or not countish(lp.step):
            continue
        chain, p = set(), lp.parent
        while p is not None:
            chain.add(p)
            p = f.loops[p].parent
        if chain & tile_loops or any(k.startswith(("pid.", "bid.")) for k in atoms(lp.init) if lp.init is not None):
            walks.append(lp)
            group_cells |= {a.cell for a in f.assigns if a.cell is not None and lid in a.loops and a.cell in lp.carried
                            and a.cell not in sum_cells and not countish(a.new) and not has_global_load(a.new)}
    if not searches and not walks:
        return absent("per-group tile counts are summed, but no tile index is located in that sum")
    size_loads = {n.access for a in f.assigns for n in walk(a.new) if isinstance(n, Load) and _is_count_source(a.new, n)}
    # the sizes' own arrays: reading the found group's size (to record it in a tile table) is
    # not reading an operand
    size_objs = {f.accesses[i].obj for i in size_loads if i < len(f.accesses)}
    for acc in f.accesses:
        if acc.space != "global" or acc.kind not in ("load", "rmw") or acc.id in size_loads or acc.obj in size_objs:
            continue
        keys = atoms(acc.off)
        if counts_groups(acc.off) or _cell_atoms(keys, group_cells):
            hits = [acc] + ([walks[0]] if walks else []) + [rec for _, rec in searches[:1]]
            return present(hits, "tile index located among running sums of per-group tile counts; the group found offsets an operand load")
    return absent("a tile index is located among per-group tile counts, but no operand load depends on the group found")


def _is_count_source(value, load) -> bool:
    """Whether ``load`` is read to size the groups (it sits under a tile-count division)."""
    return any(_is_count(n) and any(m == load for m in walk(n.args[0])) for n in walk(value))
