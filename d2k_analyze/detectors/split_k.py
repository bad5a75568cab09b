"""split_k: the GEMM K dimension split across blocks/programs, partials combined.

## What it means
A GEMM-like reduction loop whose K range is chosen by a grid index (one block/program per K
slice), with the partial results combined through atomics or a workspace and a second pass.

## How it is detected
In a loop carrying a multiply-accumulate / ``tl.dot`` / MMA, both operands' loads (or the loop's
bounds) depend on a grid index, and that index enters the K offset of both operands alike (a
K-slice) rather than one operand's row or column; partials go out through an atomic or a store
indexed by the same grid index. A split factor that resolves to 1 at every launch leaves no
slice index (it folds away) and earns nothing.

## Not to be confused with
Batched GEMM (the batch index also reaches both operands, but not as a K offset, and the output
is stored per batch without atomics); atomics used for something else.
"""

from ..facts import poly as P
from ..facts.expr import Num, atoms
from ._base import Rule, absent, present
from ._queries import gemm_loops, loads_in

RULE = Rule("split_k")


def _grid(keys) -> set[str]:
    return {k for k in keys if k.startswith(("bid.", "pid."))}


def _k_slice_atoms(f, lid: int) -> set[str]:
    lp = f.loops[lid]
    bounds = _grid(atoms(lp.init) if lp.init is not None else ()) | _grid(atoms(lp.bound) if lp.bound is not None else ())
    loads = [a for a in f.accesses if lid in a.loops and a.kind in ("load", "rmw") and a.space in ("global",)]
    operands = {}
    for a in loads:
        operands.setdefault(a.obj, []).append(a)
    if len(operands) < 2:
        return bounds
    it = f"iter#{lid}"
    shared_k: set[str] | None = None
    for accs in operands.values():
        here: set[str] = set()
        for a in accs:
            k_coeff = P.coeff(a.poly, it)
            for g in _grid(atoms(a.off)):
                g_coeff = P.coeff(a.poly, g)
                if k_coeff and g_coeff and _proportional(g_coeff, k_coeff):
                    here.add(g)
        shared_k = here if shared_k is None else shared_k & here
    return bounds | (shared_k or set())


def _proportional(a: P.Poly, b: P.Poly) -> bool:
    """``a`` and ``b`` differ by a constant factor or share a non-constant factor (the K stride)."""
    ta, tb = P.terms(a), P.terms(b)
    if P.constant_of(a) is not None and P.constant_of(b) is not None:
        return True
    return bool(ta & tb)


def _one_split(f, atom: str) -> bool:
    """Every launch gives the slicing grid axis one block/program: no split."""
    axis = {"x": 0, "y": 1, "z": 2}.get(atom.split(".")[1], None) if atom.startswith("bid.") else int(atom.split(".")[1])
    if axis is None or not f.launches:
        return False
    return all(axis < len(lf.grid) and lf.grid[axis] == Num(1) or axis >= len(lf.grid) for lf in f.launches)


@RULE.both
def detect(f):
    for lid in gemm_loops(f):
        slices = {s for s in _k_slice_atoms(f, lid) if not _one_split(f, s)}
        if not slices:
            continue
        combine = [a for a in f.accesses if a.space == "global" and (a.kind == "atomic" or (a.kind == "store" and slices & atoms(a.off)))]
        if combine:
            return present([f.loops[lid]] + combine[:1], "K loop sliced by a grid index; partials combined")
    return absent("each tile's K loop runs in one block/program")
