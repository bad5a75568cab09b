"""persistent_kernel: a grid sized from the SM count, each block looping over many tiles/rows.

## What it means
The launch grid is derived from the number of SMs (a device-property query, an occupancy
calculation, or a literal equal to a GPU's SM count) and each block/program loops over several
work units: a static stride by the grid size, a tile scheduler, or an atomic work counter.

## How it is detected
Kernel side: a loop whose start depends on the block/program index and whose step is the grid
size (``gridDim``, ``tl.num_programs``), a parameter that the launch sets to the SM-derived
grid, or a compile-time constant equal to a GPU's SM count (``cur += C::NUM_SM`` once the config
type is resolved); a loop that takes work from an atomic counter; or a per-block share of the
whole work (``iters = ceil(total / gridDim.x)``, block ``b`` starting at ``iters * b``).
Host side: a launch grid whose value carries the ``sm_count``/``occupancy`` atom, equals a known
SM count, or comes from a query that cannot see the data: a library call with no arguments
(``get_sm_count()``) or one handed the kernel itself (an occupancy calculation on the compiled
kernel).

## Not to be confused with
A grid-stride loop over a grid sized to the data (the host side decides).
"""

from ..facts import poly as P
from ..facts.expr import Call, Op, TypeRef, atoms, num, short, subtree_has, walk
from ..facts.kernel import LoopFact
from ._base import Rule, absent, present
from ._queries import counted_grid_stride, reads_block_index

RULE = Rule("persistent_kernel")
SM_COUNTS = {132, 148, 114, 108, 80, 84, 144, 160, 170, 188, 78, 46, 68, 82, 58, 56, 60}
SM_ATOMS = ("sm_count", "occupancy")


def sm_sized(e) -> bool:
    """A value sized from the machine: an SM-count query, an occupancy result, a known SM count."""
    keys = atoms(e)
    return any(k in SM_ATOMS for k in keys) or num(e) in SM_COUNTS or _machine_query(e)


def _machine_query(e) -> bool:
    """The grid is what a library call returns when given no data: no arguments at all, or
    the kernel function itself (occupancy/best-grid helpers)."""
    if isinstance(e, Call) and not short(e.fn).startswith(("ctor:", "dim3")) and "." in e.fn:
        return not e.args or any(isinstance(n, TypeRef) and n.name.startswith("fn:") for a in e.args for n in walk(a))
    return False


def sm_grid_launches(f) -> list:
    return [lf for lf in f.launches if any(sm_sized(g) for g in lf.grid)]


def work_loops(f) -> list:
    """Loops that hand several work units to each block: start at the block index, step by the
    grid size (or a parameter), or a loop fed by an atomic counter."""
    out = []
    for lp in f.loops.values():
        start = atoms(lp.init) if lp.init is not None else frozenset()
        step = atoms(lp.step) if lp.step is not None else frozenset()
        by_grid = any(k.startswith(("gdim.", "nprog.", "param#", "cexpr#")) for k in step)
        if any(k.startswith(("bid.", "pid.")) for k in start) and (by_grid or (lp.step is not None and sm_sized(lp.step))):
            out.append(lp)
        elif counted_grid_stride(f, lp):  # ``for i in range(iters)`` over ``(pid + i * num_programs) * BLOCK``
            out.append(lp)
    for a in f.accesses:
        if a.kind == "atomic" and a.loops and not a.guards:
            out.append(f.loops[a.loops[-1]])
    # a work index computed in the loop: block index + iteration x grid size (however the loop
    # itself counts: ``tile = task_iter * gridDim.x + blockIdx.x``, ``tile_idx += num_programs``)
    for a in f.assigns:
        if not a.loops:
            continue
        lid = a.loops[-1]
        p = P.poly(a.new)
        starts = any(m in ((k,) for k in ("bid.x", "pid.0")) and c == 1 for m, c in p)
        strides = any(f"iter#{lid}" in m and any(k.startswith(GRID_SIZE) for k in m) for m, _ in p)
        carried = any(k.startswith(f"carried#{a.cell}@") for k in P.terms(p)) and any(k.startswith(GRID_SIZE) for m, _ in P.poly(a.rhs) for k in m)
        if (starts and strides) or (carried and a.op in ("+=", "=")):
            out.append(f.loops[lid])
    # a share of the whole work per block: ``iters = ceil(total / gridDim.x)``, block b takes
    # iterations ``iters * b ...`` (stream-K style partitions of a fixed grid)
    for a in f.assigns:
        if a.new is not None and a.loops == () and _per_block_share(a.new) and a.cell is not None:
            users = [u for u in f.assigns if u is not a and u.new is not None and _uses(u.new, a) and
                     reads_block_index(u.new)]
            if users:
                out.append(a)
                break
    return out


def _uses(e, a) -> bool:
    """``e`` reads the value ``a`` assigned (merged into a phi of its cell, or the value itself)."""
    return any(k.startswith(f"phi#{a.cell}@") for k in atoms(e)) or any(n == a.new for n in walk(e))


def _block_share_at(n) -> bool:
    if isinstance(n, Op) and n.op in ("/", "//", "cdiv") and len(n.args) == 2:
        den, numer = atoms(n.args[1]), atoms(n.args[0])
        return bool(den) and all(k.startswith(("gdim.", "nprog.")) for k in den) and any(not k.startswith(("gdim.", "nprog.")) for k in numer)
    return False


# ``x / gridDim.x`` or ``cdiv(x, num_programs)`` with ``x`` not itself the grid size, anywhere in a value
_per_block_share = subtree_has(_block_share_at)


GRID_SIZE = ("gdim.", "nprog.", "param#", "cexpr#")


def _param_step_from_sm(f, lp) -> bool:
    step = atoms(lp.step) if lp.step is not None else frozenset()
    for k in step:
        if k.startswith(("param#", "cexpr#")):
            i = int(k.split("#")[1])
            for lf in f.launches:
                if i < len(lf.bound) and lf.bound[i] is not None and sm_sized(lf.bound[i]):
                    return True
    return False


@RULE.both
def detect(f):
    loops = work_loops(f)
    if not loops:
        return absent("one tile/row per block/program")
    host = sm_grid_launches(f)
    steps = [lp for lp in loops if isinstance(lp, LoopFact)]  # (a per-block share is an assignment)
    if host or any(_param_step_from_sm(f, lp) or (lp.step is not None and sm_sized(lp.step)) for lp in steps):
        return present([lf.loc for lf in host][:1] + loops[:2], "SM-sized grid and a loop over tiles/rows")
    if f.launches:
        return absent("loop over work units, but the grid is sized to the data", loops[:1])
    return absent("loop over work units; no launch shows an SM-sized grid", loops[:1])
