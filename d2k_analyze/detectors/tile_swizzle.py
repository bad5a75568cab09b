"""tile_swizzle: block/program ids remapped for L2 reuse.

## What it means
The tile a block computes is not the row-major order of its id: ``GROUP_SIZE_M`` grouping
(``pid_m = first_pid_m + (pid % group) % group_size``), ``tl.swizzle2d``, super-tile /
log-tile rasterisation (bits of one block index moved into another), serpentine order.

## How it is detected
A tile coordinate used in the global offsets (or in the coordinates of a TMA copy) is a sum
whose terms come from *both* a quotient
and a remainder (or shifted / masked bits) of block indices with different divisors, or from two
different grid axes mixed through bit operations; or ``tl.swizzle2d``. A grouping factor that
resolves to 1 makes the remainder vanish and earns nothing.

## Not to be confused with
Row-major decomposition (``pid // n``, ``pid % n``), batch decomposition of a linear id; a
per-thread or per-element index split into a tiled data layout (its dividend reads ``threadIdx``
or ``tl.arange``).
"""

from ..facts import poly as P
from ..facts.expr import Op, Ptr, atoms, num, walk
from ._base import Rule, absent, present
from ._queries import expand, reads_block_index

RULE = Rule("tile_swizzle")


def _grid_dep(e, tile_iters: frozenset[str]) -> bool:
    """Depends on the block/program index, or on the tile index of a persistent tile loop (its
    iteration, or a tile counter carried round it that started from the block index)."""
    return any(k.startswith(("bid.", "pid.")) or k in tile_iters or k.split("@")[0] in tile_iters for k in atoms(e))


def _at_most_one(e) -> bool:
    return num(e) == 1 or (isinstance(e, Op) and e.op == "min" and any(num(x) == 1 for x in e.args))


THREAD_INDEX = ("tid.", "lane", "warp", "arange")  # per thread in CUDA, per element in Triton


def _per_block(e) -> bool:
    """A value every thread of the block shares: a tile coordinate. One that reads the thread
    index (``(blockIdx.x * blockDim.x + threadIdx.x) / n``), or in Triton the block's element
    range (``(pid * BLOCK + tl.arange(0, BLOCK)) // n``), splits an element index into a data
    layout, which is not a visiting order of tiles."""
    return not any(k.startswith(THREAD_INDEX) for k in atoms(e))


def _grid_kind(key: str, tile_iters) -> tuple[str, str] | None:
    """(kind, divisor) of an opaque offset term computed from a block index: q (quotient, shift),
    r (remainder, mask), x (xor of two grid values)."""
    n = P.opaque_expr(key) if key.startswith("~") else None
    if not (isinstance(n, Op) and len(n.args) == 2 and _grid_dep(n.args[0], tile_iters)) or _at_most_one(n.args[1]):
        return None
    if not _per_block(n.args[0]):
        return None
    if n.op in ("/", "//", ">>", "<<"):
        return ("q", repr(n.args[1]))  # a shift left moves an index into higher bits alike
    if n.op in ("%", "&") and num(n.args[1]) not in (0, 1):
        return ("r", repr(n.args[1]))
    if n.op == "^" and _grid_dep(n.args[1], tile_iters):
        return ("x", "")
    return None


def _static_ratio(a: P.Poly, b: P.Poly) -> bool:
    """``a`` and ``b`` differ by a compile-time factor (``BM * G`` and ``BM``): the two terms move
    the same tile coordinate. Strides of different coordinates differ by a runtime size."""
    rest = P.quotient(a, b) if len(a) == 1 and len(b) == 1 and len(a[0][0]) >= len(b[0][0]) else P.quotient(b, a)
    return rest is not None and all(k.startswith(P.COMPILE_TIME) for k in rest)


def _remapped(value, grid_kind) -> bool:
    """A quotient and a remainder of block indices (different divisors) added into one tile
    coordinate: their coefficients differ by a compile-time factor. ``grid_kind``: the kernel's
    :func:`_grid_kind` of a term key (the same terms recur in many of its values)."""
    poly = P.poly(value.off if isinstance(value, Ptr) else value)
    parts = [(k, kind) for k in P.terms(poly) if (kind := grid_kind(k)) is not None]
    if any(kind[0] == "x" for _, kind in parts):
        return True
    for k1, (kind1, d1) in parts:
        for k2, (kind2, d2) in parts:
            if kind1 == "q" and kind2 == "r" and d1 != d2 and _static_ratio(P.coeff(poly, k1), P.coeff(poly, k2)):
                return True
    return False


@RULE.both
def detect(f):
    calls = [c for c in f.calls if c.short in ("swizzle2d",)]
    if calls:
        return present(calls, "tl.swizzle2d")
    tile_iters = frozenset(f"iter#{lp.id}" for lp in f.loops.values() if lp.init is not None and reads_block_index(lp.init))
    tile_iters |= frozenset(f"ivar#{lp.id}" for lp in f.loops.values())
    tile_iters |= frozenset(f"{kind}#{a.cell}" for a in f.assigns if a.cell is not None and a.new is not None
                            and reads_block_index(a.new) for kind in ("carried", "phi"))
    used = {k for a in f.accesses if a.space == "global" for k in P.terms(a.poly)}
    # a tile coordinate merged from branches (``if packed: linear order else: grouped order``)
    # reaches the offsets as one merged symbol: what each branch assigned reaches them too
    used |= {k for a in f.accesses if a.space == "global" and a.off is not None
             for v in expand(f, a.off, 1)[1:] for k in P.terms(P.poly(v))}
    used |= {k for op in _tma_coordinates(f) for k in P.terms(P.poly(op))}
    kinds: dict[str, tuple[str, str] | None] = {}

    def grid_kind(key: str) -> tuple[str, str] | None:
        if key not in kinds:
            kinds[key] = _grid_kind(key, tile_iters)
        return kinds[key]

    hits = []
    for rec, value in [(a, a.new) for a in f.assigns] + [(a, a.off) for a in f.accesses if a.space == "global"]:
        if value is not None and _remapped(value, grid_kind) and _feeds(value.off if isinstance(value, Ptr) else value, used):
            hits.append(rec)
            break
    if hits:
        return present(hits, "tile coordinates remapped from the block id (grouped / swizzled order)")
    return absent("tiles visited in plain row-major order")


def _tma_coordinates(f) -> list:
    """The tile coordinates of TMA copies (``cp.async.bulk.tensor [smem], [map, {x, y}]``, a
    library ``tma::load_async(..., {y, x})``): with TMA a tile's position reaches global memory
    as copy coordinates, not as an offset of a load."""
    out = [op for a in f.asm if "cp.async.bulk.tensor" in a.text for op in a.operands]
    return out + [arg for c in f.calls if "tma" in c.fn.lower() for arg in c.call.args]


def _feeds(e, used: set[str]) -> bool:
    """Part of ``e`` (its quotient / remainder sub-terms) reaches a global memory offset."""
    if P.terms(P.poly(e)) & used:
        return True
    return any(isinstance(n, Op) and n.op in ("%", "/", "//", "&", ">>", "^") and P.opaque_key(n) in used for n in walk(e))
