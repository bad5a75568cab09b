"""implicit_gemm: a convolution as a GEMM whose input operand is gathered inside the reduction.

## What it means
The activation operand of a convolution's multiply-accumulate (``tl.dot``, an MMA, or an FMA into
an accumulator) is loaded from the input tensor inside the reduction loop at output-pixel
coordinates plus filter-tap offsets, with bounds checks for the zero padding, instead of being
read from an unfolded (im2col) buffer that another pass wrote to global memory. A direct
convolution (one output per thread, loops over r, s, c) gathers the same way and counts.

## How it is detected
Take the reduction loops of the kernel's multiply-accumulates / dots / MMAs and the loops around
them. A global load inside one of them is a gather when the bounds conditions that guard it (a
``tl.load`` mask, the enclosing ``if`` conditions, or a select around the loaded value) compare at
least two distinct spatial coordinates, each a value that depends both on a position index
(program / block / thread index, ``tl.arange``) and on a loop of the reduction (the tap), and the
load's offset depends on the same atoms. The gathered value must reach the accumulation (it is a
source of the MAC / dot, directly or through a shared or local staging store that the
accumulation reads) and must not be stored to global memory (that is an im2col kernel).

## Not to be confused with
A GEMM with ragged-edge masks (``m < M``, ``k0 + offs_k < K``: only one coordinate mixes the
loop with a position); a 1-D sliding window (one spatial coordinate); an im2col kernel that
gathers patches and stores them to a global buffer, and the GEMM that reads it (its offsets
are affine, its masks one-dimensional); a stencil whose taps are multiplied by constants (no
multiply-accumulate of two loads).
"""

from ..facts import poly as P
from ..facts.expr import Call, E, Load, Op, atoms, walk
from ._base import Rule, absent, present
from ._queries import MMA_CALLS, constant, dots, expand, gemm_loops, loads_in, mac_updates, mma_calls, with_enclosing

RULE = Rule("implicit_gemm")

_CMP = {"<", "<=", ">", ">=", "lt", "le", "gt", "ge"}
_FMA = frozenset({"fma", "fmaf", "__fmaf_rn", "__fma_rn", "__hfma", "__hfma2", "tl.fma"})
_POS = ("pid.", "bid.", "tid.", "arange#", "lane", "warp")


def _loop_of(key: str) -> int | None:
    """The loop an atom belongs to: ``iter#3`` / ``ivar#3`` -> 3, ``carried#12@3`` -> 3."""
    if key.startswith(("iter#", "ivar#")):
        tail = key.split("#", 1)[1]
    elif key.startswith("carried#") and "@" in key:
        tail = key.rsplit("@", 1)[1]
    else:
        return None
    digits = ""
    for ch in tail:
        if not ch.isdigit():
            break
        digits += ch
    return int(digits) if digits else None


def _mixes(e, lids) -> bool:
    """``e`` depends on a reduction loop's index and on a position index."""
    keys = atoms(e)
    return any(_loop_of(k) in lids for k in keys) and any(k.startswith(_POS) for k in keys)


def _lower_bounded(n: Op, lids):
    """The coordinate side of a lower-bound check (``x >= 0``, ``x > -1``, ``0 <= x``) that
    mixes a reduction-loop index with a position index: only padding needs a lower bound (the
    ragged-edge masks of a GEMM, ``k0 + offs_k < K``, have none)."""
    a, b = n.args
    op = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}.get(n.op, n.op)
    if op in (">=", ">") and constant(b) is not None and constant(b) <= 0:
        side = a
    elif op in ("<=", "<") and constant(a) is not None and constant(a) <= 0:
        side = b
    else:
        return None
    return side if _mixes(side, lids) else None


def _coordinates(conds, lids) -> set:
    """Distinct spatial coordinates bounded below in ``conds`` (``h + r - 1 >= 0``), each as its
    polynomial without the constant term, so ``p + r - 1`` and ``p + r`` are one coordinate."""
    out = set()
    for c in conds:
        for n in walk(c):
            if isinstance(n, Op) and n.op in _CMP and len(n.args) == 2:
                side = _lower_bounded(n, lids)
                if side is not None:
                    out.add(tuple(t for t in P.poly(side) if t[0]))
    return out


_SELECTS = ("?:", "select", "where", "ternary")


def _selects(e) -> list:
    return [n for n in walk(e) if isinstance(n, Op) and n.op in _SELECTS]


def _conditions(f, acc, lids) -> list:
    """The guards of ``acc`` and the conditions around the value it loads elsewhere (see
    :func:`_condition_index`)."""
    index = _condition_index(f)
    return list(acc.guards) + index["mask"].get(acc.loc, []) + index["around"].get(acc.id, [])


def _condition_index(f) -> dict:
    """Per kernel, once: ``mask``, the masks of the ``tl.load`` at each location (Triton), and
    ``around``, per loaded access id the selects and guards of the assignments holding its load
    (``ok ? x[...] : 0``) and of the stores staging it to shared/local, in kernel order. Asked
    of every global load of a GEMM, scanning every assignment and store per load would be
    quadratic in the kernel's length."""
    index = f.cache.get("implicit_gemm.conditions")
    if index is not None:
        return index
    mask: dict = {}
    for c in f.calls:
        if c.fn == "tl.load":
            mask.setdefault(c.loc, []).extend(v for k, v in c.call.kw if k == "mask")
    around: dict = {}
    for a in f.assigns:
        ids = {n.access for n in walk(a.new) if isinstance(n, Load)}
        if ids:
            conds = _selects(a.new) + list(a.guards)
            for i in ids:
                around.setdefault(i, []).extend(conds)
    for st, ids in _staged(f):
        conds = list(st.guards) + _selects(st.value)
        for i in ids:
            around.setdefault(i, []).extend(conds)
    index = f.cache["implicit_gemm.conditions"] = {"mask": mask, "around": around}
    return index


def _staged(f) -> list:
    """(store, the ids of the loads its value carries) for every store / read-modify-write with
    a value, once per kernel: :func:`_conditions` and :func:`_feeds` ask it for every load."""
    staged = f.cache.get("implicit_gemm.staged")
    if staged is None:
        staged = f.cache["implicit_gemm.staged"] = [
            (st, _carried(f, st.value)) for st in f.accesses if st.kind in ("store", "rmw") and st.value is not None]
    return staged


def _carried(f, value) -> set:
    """The ids of the loads ``value`` holds, directly or through a merged / loop-carried local
    (``uint4 v = 0; if (ok) v = x[...]; As[...] = v``)."""
    return {n.access for v in expand(f, value) for n in walk(v) if isinstance(n, Load)}


def _feeds(f, acc) -> bool:
    """The loaded value reaches the accumulation, directly or through a staging store."""
    mac_vals = [m.new for m in mac_updates(f)] + [c.call for c in dots(f)] + [c.call for c in mma_calls(f) if hasattr(c, "call")]
    direct = {x.id for v in mac_vals for x in loads_in(f, v)}
    if acc.id in direct:
        return True
    staged = {st.obj for st, ids in _staged(f) if st.space in ("shared", "local") and acc.id in ids}
    if any(f.accesses[i].obj in staged for i in direct):
        return True
    # async copies (cp.async) into shared: the copy's destination object is read by the MMA
    return bool(staged) and bool(mma_calls(f))


def _copied(e, access: int) -> bool:
    """``e`` carries the loaded value itself (possibly cast or selected), not only through a
    product or a dot: what an im2col kernel stores."""
    if isinstance(e, Load):
        return e.access == access
    if isinstance(e, Op) and e.op == "*":
        return False
    if isinstance(e, Call) and (e.fn in ("tl.dot", "tl.dot_scaled") or e.fn.rsplit(".", 1)[-1] in MMA_CALLS | _FMA):
        return False
    return any(_copied(x, access) for x in getattr(e, "args", ()) if isinstance(x, E))


def _stored_globally(f, acc) -> bool:
    return any(st.space == "global" and st.kind in ("store", "atomic") and st.value is not None and _copied(st.value, acc.id)
               for st in f.accesses)


@RULE.both
def detect(f):
    loops = with_enclosing(f, gemm_loops(f))
    if not loops:
        return absent("no multiply-accumulate / dot / MMA reduction loop")
    lids = set(loops)
    for acc in f.accesses:
        if acc.space != "global" or acc.kind not in ("load", "rmw") or not (set(acc.loops) & lids):
            continue
        coords = _coordinates(_conditions(f, acc, lids), lids)
        if len(coords) < 2:
            continue
        if not _mixes(acc.off, lids) or _stored_globally(f, acc) or not _feeds(f, acc):
            continue
        return present([f.loops[min(set(acc.loops) & lids)]], f"load gathered at {len(coords)} spatial coordinates (pixel + tap) with bounds checks, fed to the accumulation")
    return absent("no operand of the reduction is gathered at pixel + tap coordinates with bounds checks")
