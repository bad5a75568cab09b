"""split_k: the GEMM K dimension split across blocks/programs, partials combined.

## What it means
A GEMM-like reduction loop whose K range is chosen by a grid index (one block/program per K
slice), with the partial results combined through atomics or a workspace and a second pass.

## How it is detected
In a loop carrying a multiply-accumulate / ``tl.dot`` / MMA, both operands' loads (or the loop's
bounds) depend on a grid index, and that index enters the K offset of both operands alike (a
K-slice) rather than one operand's row or column; partials go out through an atomic or a store
indexed by the same grid index, or onto the output at the address it was read from (slices
serialised by a lock). A grid index scaled by ``K / S`` in a loop that runs ``K / BK / S`` times is
a slice index too, whatever the stride is called. A split factor that resolves to 1 at every
launch leaves no slice index (it folds away) and earns nothing. A grid index only in the loop's
end that an operand takes as a batch, row or column (``min(chunk, seqlen - pid_c * chunk)``) bounds
a ragged last tile and slices nothing. A loop-free GEMV step (``tl.sum(x * w)`` over one block of
K) counts when a grid index picks the K block of both operands but not the output's position,
and the programs add their partial rows into the output with atomics: the grid is the K loop.

## Not to be confused with
A block walking its own sequence (``for (t = b*T*C; t < (b+1)*T*C; t += C)``), where every tensor
is read at one position (``x[t]``, ``g[t + 2*C]``): the grid index is in both ends of the loop, but
no GEMM's operands move together like that. Attention split along the sequence (``split_kv``: the
loop's scores go through ``exp``); a loop that stores one result per iteration instead of
accumulating; a grid-stride loop over rows; batched GEMM (the batch index also reaches both operands, but not as a K offset, and the output
is stored per batch without atomics); atomics used for something else.
"""

from ..facts import poly as P
from ..facts.expr import Num, Op, Sym, atoms, num, walk
from ..facts.ops import contractions, objects_read
from ._base import Rule, absent, present
from ._queries import defs_of, gemm_loops, with_enclosing, is_call, is_exp, mac_updates, mma_calls, reduction_loop

RULE = Rule("split_k")


def _grid(keys) -> set[str]:
    return {k for k in keys if k.startswith(("bid.", "pid."))}


def _grid_terms(poly: P.Poly) -> set[str]:
    """Grid indices of an offset: block/program ids, and opaque terms computed from them alone
    (``blockIdx.x / tiles``: a slice index folded into a 1-D grid)."""
    out = set()
    for k in P.terms(poly):
        if k.startswith(("bid.", "pid.")):
            out.add(k)
        elif k.startswith("~"):
            keys = atoms(P.opaque_expr(k)) if P.opaque_expr(k) is not None else frozenset()
            if _grid(keys) and not any(x.startswith(("tid.", "iter#", "ivar#", "lane", "warp", "carried#")) for x in keys):
                out.add(k)
    return out


def _k_slice_atoms(f, lid: int) -> set[str]:
    lp = f.loops[lid]
    starts = _grid(atoms(lp.init) if lp.init is not None else ())
    ends = _grid(atoms(lp.bound) if lp.bound is not None else ()) - starts
    bounds = starts | ends
    if lp.step is not None and any(k.startswith(("gdim.", "nprog.")) for k in atoms(lp.step)):
        bounds = set()  # a grid-stride loop over rows/tiles, not a K slice
    loads = [a for a in f.accesses if lid in a.loops and a.kind in ("load", "rmw") and a.space in ("global",)]
    operands = {}
    for a in loads:
        operands.setdefault(a.obj, []).append(a)
    if len(operands) < 2:
        return bounds
    if len({_position(a.poly) for a in loads}) == 1:
        return set()  # every tensor read at one position: a walk along one sequence, no GEMM operands
    it = f"iter#{lid}"
    sliced: dict[str, int] = {}  # grid index -> operands it offsets along K
    hidden: dict[str, int] = {}  # grid index -> operands it reaches only through a non-linear term
    rows: set[str] = set()  # grid indices some operand uses as a row/column (not a K slice)
    for accs in operands.values():
        here, there = set(), set()
        for a in accs:
            poly = _closed_form(f, a.poly, lid)
            k_coeff = P.coeff(poly, it) or _carried_step(f, poly, lid)
            for g in _grid(atoms(a.off)) | _grid(P.terms(poly)) | _grid_terms(poly):
                g_coeff = P.coeff(poly, g)
                if k_coeff and g_coeff and (_proportional(g_coeff, k_coeff) or bool(P.quotient(k_coeff, g_coeff))
                                            or _split_stride(g_coeff, lp)):
                    here.add(g)
                elif not g_coeff:
                    there.add(g)  # ``(pid_k * BK + offs) // 8`` for packed int4 weights
                elif k_coeff:
                    rows.add(g)
        for g in here:
            sliced[g] = sliced.get(g, 0) + 1
        for g in there - here:
            hidden[g] = hidden.get(g, 0) + 1
    # a K slice: the same grid index offsets two operands along K (one may reach it through a
    # packed-index division), and no operand takes it as a row or column. A grid index only in the
    # loop's end, which an operand takes as a row, column or batch, bounds a ragged last tile
    # (``range(0, cdiv(min(chunk, seqlen - pid_c * chunk), BK))``): it starts no slice of K.
    return (bounds - (ends & rows)) | {g for g, n in sliced.items() if n + hidden.get(g, 0) >= 2 and g not in rows}


_MOVING = ("iter#", "ivar#", "carried#", "tid.", "lane", "warp", "bid.", "pid.", "~")


def _position(poly: P.Poly) -> tuple:
    """An offset without its fixed shift (the terms that move with no loop, thread or grid index):
    ``x[t]`` and ``gy[t + 2 * C]`` read one sequence at the same position, two steps apart. The
    operands of a GEMM never do: A moves with the output's row, B with its column."""
    return tuple(sorted((m, c) for m, c in poly if any(k.startswith(_MOVING) for k in m)))


def _divisors(e) -> list:
    """The divisor of every division in ``e``, but the constant 1."""
    return [n.args[1] for n in walk(e) if isinstance(n, Op) and n.op in ("/", "//") and len(n.args) == 2
            and n.args[1] != Num(1)]


def _split_stride(g_coeff: P.Poly, lp) -> bool:
    """A grid index scaled by ``K / S`` (``part * (K / SPLITS)``) in a loop whose trip count is
    built from the same ``K`` and also divided by ``S`` (``K / BK / SPLITS``): the index picks one
    of S slices of the loop's range, whatever the stride is called."""
    if lp.bound is None or len(P.terms(g_coeff)) != 1:
        return False
    key = next(iter(P.terms(g_coeff)))
    stride = P.opaque_expr(key) if key.startswith("~") else None
    if stride is None or g_coeff != P.poly(Sym(key)) or not isinstance(stride, Op) or stride.op not in ("/", "//"):
        return False
    extent, split = stride.args
    bound_atoms = atoms(lp.bound)
    return bool(atoms(extent)) and atoms(extent) <= bound_atoms and split in _divisors(lp.bound)


def _closed_form(f, poly: P.Poly, lid: int) -> P.Poly:
    """An offset whose index is carried round loop ``lid`` written in closed form, start + iter *
    step: ``rk = pid_k * BK + arange`` before the loop and ``rk += BK * SPLIT`` in it put the
    grid index ``pid_k`` into every load's offset, which the carried symbol alone hides."""
    start_line = f.loops[lid].loc.line
    for key in sorted(P.terms(poly)):
        if not key.startswith("carried#") or not key.endswith(f"@{lid}"):
            continue
        cell = int(key.split("#", 1)[1].split("@", 1)[0])
        defs = defs_of(f, cell)
        before = [d for d in defs if lid not in d.loops and d.loc.line <= start_line]
        steps = [d for d in defs if lid in d.loops]
        if not before or len(steps) != 1 or steps[0].op != "+=":
            continue
        c = P.coeff(poly, key)
        closed = P.add(P.poly(before[-1].new), P.mul(P.term(f"iter#{lid}"), P.poly(steps[0].rhs)))
        poly = P.add(P.add(poly, P.mul(c, P.term(key)), -1), P.mul(c, closed))
    return poly


def _carried_step(f, poly: P.Poly, lid: int) -> P.Poly:
    """The per-iteration advance of a pointer carried round the loop (``a_ptrs += BK * stride``):
    the increment its ``+=`` adds inside loop ``lid``."""
    for key in P.terms(poly):
        if not key.startswith("carried#") or not key.endswith(f"@{lid}"):
            continue
        cell = int(key.split("#", 1)[1].split("@", 1)[0])
        for d in defs_of(f, cell):
            if d.op == "+=" and lid in d.loops:
                return P.poly(d.rhs)
    return ()


def _proportional(a: P.Poly, b: P.Poly) -> bool:
    """``a`` and ``b`` differ by a constant factor or share a non-constant factor (the K stride)."""
    ta, tb = P.terms(a), P.terms(b)
    if P.constant_of(a) is not None and P.constant_of(b) is not None:
        return True
    return bool(ta & tb)


def _one_split(f, atom: str) -> bool:
    """Every launch gives the slicing grid axis one block/program: no split."""
    if not atom.startswith(("bid.", "pid.")):
        return False
    axis = {"x": 0, "y": 1, "z": 2}.get(atom.split(".")[1], None) if atom.startswith("bid.") else int(atom.split(".")[1])
    if axis is None or not f.launches:
        return False
    return all(axis < len(lf.grid) and lf.grid[axis] == Num(1) or axis >= len(lf.grid) for lf in f.launches)


def _reduces(f, lid: int) -> bool:
    """The loop accumulates its products (a K loop), rather than storing one result per
    iteration (a loop over key blocks that writes each block's scores)."""
    if any(reduction_loop(f, a) == lid for a in mac_updates(f)) or any(lid in c.loops for c in mma_calls(f)):
        return True
    carried = f.loops[lid].carried
    if any(lid in a.loops and a.cell in carried for a in mac_updates(f)):
        return True  # the loop over K tiles around a multiply-accumulate over one shared tile
    return any(a.cell in carried and lid in a.loops and any(is_call(n, {"tl.dot", "tl.dot_scaled"}) for n in walk(a.new))
               for a in f.assigns)


def _adds_onto(f, store) -> bool:
    """The store writes back a value read from the same global address: each slice adds its
    partial onto the output (serialised by a lock or a semaphore) instead of using atomics."""
    return any(a.kind == "load" and a.space == "global" and a.obj == store.obj and a.poly == store.poly
               for a in f.accesses)


@RULE.both
def detect(f):
    for lid in with_enclosing(f, gemm_loops(f)):
        if not _reduces(f, lid) or _guard_loop(f.loops[lid]):
            continue
        if any(lid in c.loops and is_exp(c.call) for c in f.calls):
            continue  # scores through exp: attention split along the sequence (split_kv), not a K split
        slices = {s for s in _k_slice_atoms(f, lid) if not _one_split(f, s)}
        if not slices:
            continue
        combine = [a for a in f.accesses if a.space == "global" and (a.kind in ("atomic", "rmw") or (a.kind == "store" and (
            slices & (atoms(a.off) | P.terms(a.poly)) or _adds_onto(f, a))))]
        if combine:
            return present([f.loops[lid]] + combine[:1], "K loop sliced by a grid index; partials combined")
    gridded = _gridded_contraction(f)
    if gridded:
        return present(gridded, "each program contracts one grid-chosen K block; partials added atomically")
    return absent("each tile's K loop runs in one block/program")


def _guard_loop(lp) -> bool:
    """``for _ in range(0, flag)`` with ``flag`` a 0-or-1 select: a conditional written as a loop
    (it runs at most once), not a K loop a grid index could slice."""
    bound = lp.bound
    if not (isinstance(bound, Op) and bound.op == "?:" and len(bound.args) == 3):
        return False
    arms = [num(a) for a in bound.args[1:]]
    return all(isinstance(v, int) and 0 <= v <= 1 for v in arms) and num(lp.init) == 0


def _gridded_contraction(f) -> list:
    """A loop-free GEMV step (``tl.sum(x * w)`` over one block of K) whose K block a grid axis
    picks for both operands, the programs' partial rows added into the output with atomics
    (the output's offset does not take that axis): the grid is the K loop."""
    sums = contractions(f)
    if not sums:
        return []
    objs = {o for c in sums for o in objects_read(c.call.args[0])}
    loads = [a for a in f.accesses if a.space == "global" and a.kind == "load" and a.obj in objs]
    by_axis: dict[str, set[int]] = {}
    for a in loads:
        for g in _grid_terms(a.poly):
            by_axis.setdefault(g, set()).add(a.obj)
    shared = {g for g, seen in by_axis.items() if len(seen) >= 2 and not _one_split(f, g)}
    # a grid index both operands take that the output does not (the output keeps its row and
    # column indices): the K block, summed over programs by the atomics
    atomics = [a for a in f.accesses if a.space == "global" and a.kind in ("atomic", "rmw") and shared - _grid_terms(a.poly)]
    return sums[:1] + atomics[:1] if atomics else []
