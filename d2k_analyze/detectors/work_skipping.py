"""work_skipping: loop bounds that exclude fully masked tiles (causal, sliding window, sparse).

## What it means
A KV / reduction loop whose range depends on the tile's own position (``hi = (start_m + 1) *
BLOCK_M``), so tiles above the diagonal are never loaded or computed; or a block-sparse layout
whose loop visits only the key blocks listed for the tile's row.

## How it is detected
A reduction loop (a dot / MMA / multiply-accumulate, or exponentials) whose bound or start is
computed from a block/program index that also picks the block's own rows: that index appears
in a global load outside the loop (the query tile). A split of the key range across the grid
uses an index that picks no rows of its own and does not count. Bounds read from memory count
only for a sparse layout: the bound is read at the tile's row and the loop reaches its keys
through indices it loads (``col_idx[i]``).

## Not to be confused with
Elementwise masks over the full range; ragged-edge guards; per-sequence lengths (a bound read
from memory with direct key addressing); a split of the key range across the grid (split-KV).
"""

from ..facts.expr import Load, atoms, walk
from ._base import Rule, absent, present
from ._queries import (
    exps_in,
    gemm_loops,
    has_load,
    mac_updates,
    reduction_loop,
    with_enclosing,
)

RULE = Rule("work_skipping")
GRID = ("bid.", "pid.")


def _grid(e, f=None) -> set[str]:
    """Grid indices ``e`` is computed from (with facts: also where its loads read)."""
    if e is None:
        return set()
    keys = set(atoms(e))
    if f is not None:
        keys |= {k for n in walk(e) if isinstance(n, Load) and n.access < len(f.accesses) for k in atoms(f.accesses[n.access].off)}
    return {k for k in keys if k.startswith(GRID)}


def _own_rows(f, lid: int) -> set[str]:
    """Grid indices that select data read outside the loop (the tile the block owns)."""
    out: set[str] = set()
    for a in f.accesses:
        if a.space == "global" and a.kind == "load" and lid not in a.loops:
            out |= _grid(a.off)
    return out


def _indirect(f, lid: int) -> bool:
    """The loop reads through an index it loads itself, per iteration (``K[col_idx[i] * BN]``);
    a sequence start read once before the loop is direct addressing."""
    def per_iteration(n) -> bool:
        return isinstance(n, Load) and n.access < len(f.accesses) and lid in f.accesses[n.access].loops
    return any(a.space == "global" and lid in a.loops and any(per_iteration(n) for n in walk(a.off)) for a in f.accesses)


@RULE.both
def detect(f):
    reducing = set(gemm_loops(f)) | {reduction_loop(f, a) for a in mac_updates(f)} - {None}
    for c in f.calls:
        if exps_in(c.call):
            reducing |= set(c.loops)
    reducing = set(with_enclosing(f, sorted(reducing)))  # the key-block loop around the work
    hits = []
    for lid in sorted(reducing):
        lp = f.loops[lid]
        if lp.iterator == "tl.static_range" or (lp.step is not None and any(k.startswith(("gdim.", "nprog.")) for k in atoms(lp.step))):
            continue
        rows = _own_rows(f, lid)
        for e in (lp.bound, lp.init):
            if not (_grid(e, f) & rows):
                continue
            if e is None or not has_load(e) or _indirect(f, lid):
                hits.append(lp)
                break
    if hits:
        return present(hits, "reduction loop bounded by the tile's position")
    return absent("loops cover the full range")
