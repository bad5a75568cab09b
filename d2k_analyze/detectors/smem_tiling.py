"""smem_tiling: operand tiles staged in shared memory and reused by several threads.

## What it means
Data is copied from global into shared memory (plain stores of loaded values, ``cp.async``,
TMA) and then read many times: as operands of a multiply-accumulate or an MMA, or by several
threads reading overlapping elements (a stencil / convolution halo).

## How it is detected
A shared object filled from global memory whose loads, inside a loop, feed a multiply-accumulate,
an MMA / fragment load (also inline ``mma`` / ``wgmma`` / ``ldmatrix`` asm whose operands are the
tile's address, a descriptor built from it, or fragments loaded from it), or overlap across threads (a lane stride of one with a small constant
step per iteration). Triton: not decidable with ``tl.dot`` (the compiler stages operands),
else 0.

## Not to be confused with
Shared memory used only to reorder data (a transpose), to cache one row that each thread reads
back once or that every warp reads alike (a GEMV's vector: the read address depends on the
thread only through its lane), or as reduction scratch; arrays never read; a thread reading back
its own element (``w[threadIdx.x]``, or ``tile[threadIdx.x][threadIdx.y]`` read transposed: no
two threads of the launched block meet there).
"""

from ..facts import poly as P
from ..facts.expr import Load, atoms, walk
from ..compiled.ttgir import Reading, TritonIR
from ._base import Rule, Signature, absent, not_applicable, present
from ._queries import dots, expand, mac_sources, mma_calls, one_element_per_thread, same_in_every_warp, sources, thread_dependent

def _compiled(ir: TritonIR) -> Reading:
    """Triton with tl.dot: the dot's operand tiles are staged in shared memory (``ttg.local_alloc``
    of a tile that wgmma / tcgen05 / ldmatrix then read)."""
    dots = ir.dot_ops()
    if not dots:
        return Reading(None, (), "no dot")
    tiles = ir.lines(r"ttg\.local_alloc\b[^\n]*!ttg\.memdesc<\d+x\d+x(?!i64)", "ttgir", 2)
    if tiles:
        return Reading(True, tiles + dots[:1], "dot operands staged in shared memory")
    return Reading(False, dots[:1], "dot operands stay in registers")


RULE = Rule("smem_tiling", Signature(triton=_compiled))
FRAGMENT_LOADS = ("load_matrix_sync", "ldmatrix", "copy", "load", "load_async", "mma_sync", "mma", "gemm", "wgmma")
TILE_COPIES = ("copy", "cp_async", "copy_if")


def in_shared(f, e) -> bool:
    """``e`` refers to shared memory: a shared object's pointer or load, a CuTe smem pointer."""
    shared = {f"obj#{o.id}" for o in f.objects.values() if o.space == "shared"}
    keys = atoms(e)
    return bool(keys & shared) or "space:shared" in keys


def filled_from_global(f, obj: int) -> list:
    """Stores into ``obj`` of data loaded from global memory (directly, through registers, or by
    an asynchronous copy / TMA)."""
    out = []
    for a in f.accesses:
        if a.obj != obj or a.kind not in ("store", "rmw"):
            continue
        if a.via in ("async", "tma", "api", "asm") or (a.value is not None and _from_global(f, a.value)):
            out.append(a)
    return out


def _from_global(f, value) -> bool:
    """Data loaded from global memory reaches ``value``, directly, through register arrays, or
    through a register carried across iterations (``ra = A[...]`` at the top of one iteration,
    ``As[next][...] = ra`` at its end: register-staged double buffering)."""
    if any(x.space == "global" for x in sources(f, value)):
        return True
    return any(any(x.space == "global" for x in sources(f, v)) for v in expand(f, value)[1:])


def _reused(f, obj: int) -> list:
    reads = [a for a in f.accesses if a.obj == obj and a.kind == "load"]
    mac_loads = {x.id for x in mac_sources(f)}
    # operands whose element depends on the thread: a 2-D tile shared by rows/columns of threads;
    # a chunk every thread reads in full (one cached row) is not a tile
    # (a read of each thread's own element shares nothing)
    out = [r for r in reads if r.id in mac_loads and thread_dependent(r) and not same_in_every_warp(r)
           and not one_element_per_thread(f, r)]
    for c in f.calls:
        if c.short in FRAGMENT_LOADS:
            for n in walk(c.call):
                if isinstance(n, Load) and n.obj == obj:
                    out.append(f.accesses[n.access])
    out += [r for r in reads if r.via == "api"]  # wmma::load_matrix_sync / fragment loads from the tile
    tile = f"obj#{obj}"
    for a in f.asm:
        if any(m in a.text for m in ("ldmatrix", "wgmma", "mma")):
            out += [r for r in reads if r.loc.line == a.loc.line]
            # a wgmma descriptor or an ldmatrix address built from the tile's own address, or
            # fragment words read from the tile (``*(uint32_t*)&As[...]``): the MMA consumes the
            # tile for the whole warp(group)
            if any(tile in atoms(op) for op in a.operands):
                out.append(a)
            # fragment words parked in a register array first (``frag[j] = *(uint32_t*)&As[..]``,
            # the MMA reading ``frag[j]``): followed back to the tile
            out += [x for op in a.operands for x in sources(f, op) if x.obj == obj and x.kind == "load"]
    for r in reads:
        if not r.loops:
            continue
        stride = P.constant_of(r.thread_stride())
        step = P.constant_of(P.coeff(r.poly, f"iter#{r.loops[-1]}"))
        if stride == 1 and step is not None and 0 < abs(step) <= 16:
            out.append(r)  # neighbouring threads read overlapping windows
    return out


@RULE.cuda
def cuda(f):
    shared = sorted({a.obj for a in f.accesses if a.space == "shared"})
    if not shared and not any(o.space == "shared" for o in f.objects.values()):
        return absent("no shared memory")
    for obj in shared:
        fills = filled_from_global(f, obj)
        if not fills:
            continue
        reuse = _reused(f, obj)
        if reuse:
            return present(fills[:1] + reuse[:2], "global tiles staged in shared memory and reused")
    mma_from_shared = [c for c in mma_calls(f) if hasattr(c, "call") and in_shared(f, c.call)]
    copies_in = [c for c in f.calls if c.short in TILE_COPIES and c.call.args and in_shared(f, c.call.args[-1]) or c.short in ("load", "load_async") and c.call.args and in_shared(f, c.call.args[0])]
    if mma_from_shared and (copies_in or any(a.space == "shared" and a.kind == "store" for a in f.accesses)):
        return present(mma_from_shared[:1] + copies_in[:1], "MMA operands read from shared-memory tiles filled from global memory")
    return absent("shared memory only reorders, caches data read once, or holds reduction scratch")


@RULE.triton
def triton(f):
    if dots(f):
        return not_applicable("tl.dot: the compiler stages operands in shared memory")
    return absent("Triton source without tl.dot has no shared-memory tiles")
