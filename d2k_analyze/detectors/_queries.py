"""Questions several detectors ask of the same facts, answered from values, never from names.

Library names (``__shfl_xor_sync``, ``tl.dot``, ``expf``) are facts of the platform and may be
matched; everything the analysed code named itself has been resolved to a value by the
interpreter before a detector sees it.
"""

from __future__ import annotations

from ..facts import poly as P
from ..facts.expr import Call, E, Load, Num, Op, Sym, atoms, flatten, num, operators, rewrite_within, short, subtree_has, walk
from ..facts.kernel import Access, Assignment, CallFact, KernelFacts, LoopFact

# Library exponentials only: a user helper counts by what its body does (inlined, or an inline-PTX
# ex2.approx read as exp2), never by its name.
# (libdevice's fast variants too: Triton's ``tl.math.fast_expf``, ``__nv_fast_expf``)
EXP = frozenset({"exp", "expf", "__expf", "exp2", "exp2f", "__exp2f", "hexp", "h2exp", "hexp2", "h2exp2", "expm1", "expm1f",
                 "fast_expf", "__nv_fast_expf", "__nv_expf", "__nv_exp2f"})
LOG = frozenset({"log", "logf", "__logf", "log2", "log2f", "__log2f", "hlog", "h2log", "log1p", "log1pf",
                 "fast_logf", "fast_log2f", "__nv_fast_logf", "__nv_fast_log2f"})
SHUFFLES = frozenset({"__shfl_xor_sync", "__shfl_down_sync", "__shfl_up_sync", "__shfl_sync", "__shfl_xor", "__shfl_down",
                      "shfl_xor", "shfl_down", "shfl_up", "shfl", "__shfl_down_sync_", "shfl_xor_sync", "shfl_down_sync"})
REDUCING_SHUFFLES = frozenset({"__shfl_xor_sync", "__shfl_down_sync", "__shfl_xor", "__shfl_down", "shfl_xor", "shfl_down",
                               "shfl_xor_sync", "shfl_down_sync", "__shfl_up_sync", "shfl_up"})
TL_REDUCTIONS = frozenset({"sum", "max", "min", "reduce", "argmax", "argmin", "xor_sum", "cumsum", "cumprod", "associative_scan", "prod"})
MMA_CALLS = frozenset({"mma_sync", "mma", "wgmma", "umma", "mma_AB", "mma_ABt", "mma_AtB", "mma_AtBt", "gemm", "mma_async"})
MMA_ASM = ("mma.sync", "wgmma.", "tcgen05.mma", "mma.sp")


def is_call(e: E, names: frozenset[str] | set[str]) -> bool:
    if type(e) is not Call:  # the detectors' most frequent question, asked of every node
        return False
    fn = e.fn
    return fn in names or ("." in fn and fn.rsplit(".", 1)[1] in names)


def is_exp(e: E) -> bool:
    return is_call(e, EXP)


# whether a value computes an exponential anywhere (memoised per node)
has_exp = subtree_has(is_exp)


def exps_in(e: E) -> list[Call]:
    return [n for n in operators(e) if is_exp(n)]  # type: ignore[misc]


def loads_in(f: KernelFacts, e: E) -> list[Access]:
    return [f.accesses[n.access] for n in walk(e) if isinstance(n, Load) and n.access < len(f.accesses)]


def swept_down(f: KernelFacts) -> set[int]:
    """Shared objects a Blelloch down-sweep walks: inside a loop, an element is overwritten by a
    plain copy of another element of the same array a thread-independent distance away
    (``t = s[j]; s[j] = s[j + d]; s[j + d] += t``). A reduction tree only ever combines into an
    element; a scan's down-sweep also moves partial sums back down."""
    out: set[int] = set()
    for a in f.accesses:
        if a.space != "shared" or a.kind != "store" or not a.loops or not isinstance(a.value, Load):
            continue
        src = f.accesses[a.value.access] if a.value.access < len(f.accesses) else None
        if src is None or src.obj != a.obj:
            continue
        d = P.add(src.poly, a.poly, -1)
        if d and not P.mentions(d, "tid") and not P.mentions(d, "lane"):
            out.add(a.obj)
    return out


def triton_reductions(f: KernelFacts) -> list[CallFact]:
    return [c for c in f.calls if c.fn.startswith("tl.") and c.short in TL_REDUCTIONS]


def dots(f: KernelFacts) -> list[CallFact]:
    return [c for c in f.calls if c.fn in ("tl.dot", "tl.dot_scaled")]


def mma_calls(f: KernelFacts) -> list:
    calls = [c for c in f.calls if c.short in MMA_CALLS]  # user functions are inlined: these are library MMAs
    asm = [a for a in f.asm if any(m in a.text for m in MMA_ASM)]
    return calls + asm


def in_loop(f: KernelFacts, rec, loop_id: int) -> bool:
    return loop_id in rec.loops


def loops_of(rec) -> tuple[int, ...]:
    return rec.loops


def shared_objects(f: KernelFacts) -> list[int]:
    return [o.id for o in f.objects.values() if o.space == "shared"]


def accesses_to(f: KernelFacts, obj: int, kind: str | None = None) -> list[Access]:
    return [a for a in f.accesses if a.obj == obj and (kind is None or a.kind == kind or (kind == "load" and a.kind == "rmw") or (kind == "store" and a.kind in ("rmw", "atomic")))]


def cell_of(e: E) -> int | None:
    """The cell a loop-carried / merged symbol stands for (``carried#12@3`` -> 12)."""
    if isinstance(e, Sym) and (e.key.startswith("carried#") or e.key.startswith("phi#")):
        try:
            return int(e.key.split("#", 1)[1].split("@", 1)[0])
        except ValueError:
            return None
    return None


def defs_of(f: KernelFacts, cell: int) -> list[Assignment]:
    idx = f.cache.get("defs")
    if idx is None:
        idx = {}
        for a in f.assigns:
            if a.cell is not None:
                idx.setdefault(a.cell, []).append(a)
        f.cache["defs"] = idx
    return idx.get(cell, [])


def expand(f: KernelFacts, e: E, depth: int = 3) -> list[E]:
    """``e`` and the values its loop-carried / merged symbols are assigned (dataflow across loops)."""
    out = [e]
    seen: set[int] = set()
    frontier = [e]
    for _ in range(depth):
        nxt = []
        for x in frontier:
            for n in walk(x):
                c = cell_of(n)
                if c is not None and c not in seen:
                    seen.add(c)
                    for a in defs_of(f, c):
                        out.append(a.new)
                        nxt.append(a.new)
        frontier = nxt
    return out


def grid_atoms(e: E) -> set[str]:
    return {a for a in atoms(e) if a.startswith(("bid.", "pid.", "cid."))}


def thread_atoms(e: E) -> set[str]:
    return {a for a in atoms(e) if a.startswith(("tid.", "lane", "warp"))}


def mac_updates(f: KernelFacts) -> list[Assignment]:
    """Multiply-accumulates inside loops: ``acc += a * b`` / ``acc = fma(a, b, acc)`` where ``a`` and
    ``b`` come from two different loads (different objects or different offsets). A dot product
    of two vectors at the same offset, or a sum of squares, does not count."""
    cached = f.cache.get("mac")
    if cached is not None:
        return cached
    out = []
    for a in f.assigns:
        if not a.loops or a.old is None:
            continue
        if not _accumulates(a):
            continue
        for prod in _products(a.new, a.old):
            left, right = prod
            la, lb = loads_in(f, left), loads_in(f, right)
            if {x.id for x in la} & {y.id for y in lb}:
                continue  # a square (x - m) * (x - m): one operand, not two
            if la and lb and _different_operands(la, lb):
                out.append(a)
                break
    f.cache["mac"] = out
    return out


def _accumulates(a: Assignment) -> bool:
    if a.op in ("+=", "-="):
        return True
    terms = flatten("+", a.new)
    return a.old in terms or any(isinstance(t, Call) and short(t.fn) in ("fma", "fmaf", "__fmaf_rn", "__fma_rn", "__hfma", "__hfma2") and a.old in t.args for t in terms) \
        or (isinstance(a.new, Call) and short(a.new.fn) in ("fma", "fmaf", "__fmaf_rn", "__hfma", "__hfma2") and a.old in a.new.args)


def products_of(a: Assignment):
    """The (left, right) factor pairs of an accumulating assignment's products."""
    return _products(a.new, a.old)


def _products(new: E, old: E):
    for n in walk(new):
        if isinstance(n, Op) and n.op == "*" and len(n.args) >= 2:
            factors = [x for x in n.args if x != old]
            if len(factors) >= 2:
                yield factors[0], Op("*", tuple(factors[1:])) if len(factors) > 2 else factors[1]
        if isinstance(n, Call) and short(n.fn) in ("fma", "fmaf", "__fmaf_rn", "__fma_rn", "__hfma", "__hfma2") and len(n.args) >= 2:
            yield n.args[0], n.args[1]


def _different_operands(la: list[Access], lb: list[Access]) -> bool:
    """Two operands read at different offsets (a tile row times a tile column); the same offset
    in two arrays (``x[i] * y[i]``) is an elementwise product, not a GEMM."""
    for x in la:
        for y in lb:
            if x.id != y.id and x.poly != y.poly:
                return True
    return False


def sources(f: KernelFacts, e: E, depth: int = 3) -> list[Access]:
    """Every load whose value flows into ``e``, following values parked in local arrays (register
    fragments) back to where they were loaded from: ``a_frag[i] = As[...]; acc += a_frag[i] * b``
    has the shared loads of ``As`` among its sources."""
    out: list[Access] = []
    frontier = loads_in(f, e)
    seen: set[int] = set()
    for _ in range(depth + 1):
        nxt: list[Access] = []
        for acc in frontier:
            if acc.id in seen:
                continue
            seen.add(acc.id)
            out.append(acc)
            if acc.space == "local":
                for st in stores_to(f, acc.obj):
                    if st.value is not None:
                        nxt += loads_in(f, st.value)
        frontier = nxt
    return out


def stores_to(f: KernelFacts, obj: int) -> list[Access]:
    idx = f.cache.get("stores_by_obj")
    if idx is None:
        idx = {}
        for a in f.accesses:
            if a.kind in ("store", "rmw"):
                idx.setdefault(a.obj, []).append(a)
        f.cache["stores_by_obj"] = idx
    return idx.get(obj, [])


def mac_sources(f: KernelFacts) -> list[Access]:
    """Loads feeding the kernel's multiply-accumulates and MMAs (through register fragments)."""
    cached = f.cache.get("mac_sources")
    if cached is None:
        cached = []
        for m in mac_updates(f):
            cached += sources(f, m.new)
        for c in mma_calls(f):
            if hasattr(c, "call"):
                cached += sources(f, c.call)
        f.cache["mac_sources"] = cached
    return cached


def reduction_loop(f: KernelFacts, a: Assignment) -> int | None:
    """The loop a multiply-accumulate reduces over: the innermost loop that carries the
    accumulator (a local updated across its iterations), or, for an accumulator element in
    memory, the innermost loop whose iteration does not select the element (k, not i or j)."""
    if a.cell is not None:
        for lid in reversed(a.loops):
            if a.cell in f.loops[lid].carried:
                return lid
        return None  # a local set afresh in each iteration (``g = ...; g += a * b``) sums nothing up
    if a.access is not None:
        target = atoms(f.accesses[a.access].off)
        for lid in reversed(a.loops):
            if f"iter#{lid}" not in target and f"ivar#{lid}" not in target:
                return lid
    return None


def gemm_loops(f: KernelFacts) -> list[int]:
    """Reduction loops of GEMM-like accumulations: the loop a multiply-accumulate reduces over,
    or the innermost loop around a ``tl.dot`` / tensor-core MMA."""
    cached = f.cache.get("gemm_loops")
    if cached is not None:
        return cached
    ids: list[int] = []
    for a in mac_updates(f):
        lid = reduction_loop(f, a)
        if lid is not None:
            ids.append(lid)
    for c in list(dots(f)) + list(mma_calls(f)):
        if c.loops:
            ids.append(c.loops[-1])
    out = sorted(set(ids))
    f.cache["gemm_loops"] = out
    return out


def is_gemm(f: KernelFacts) -> bool:
    return bool(gemm_loops(f)) or bool(dots(f)) or bool(mma_calls(f))


def stage_values(f: KernelFacts) -> tuple[bool, set[object]]:
    """(explicit?, values) of ``num_stages`` for a Triton unit: every autotune config sets it, a
    launch passes it, or a ``tl.range(..., num_stages=)`` loop sets it."""
    values: set[object] = set()
    explicit = False
    if f.configs and all("num_stages" in cfg for cfg in f.configs):
        explicit = True
        values |= {v for cfg in f.configs for v in cfg["num_stages"]}
    for launch in f.launches:
        if "num_stages" in launch.kwargs:
            explicit = True
            values.add(num(launch.kwargs["num_stages"]) if num(launch.kwargs["num_stages"]) is not None else "?")
    for lp in loops_with_loads(f):
        v = lp.kwargs.get("num_stages")
        if v is not None:
            explicit = True
            values.add(num(v) if num(v) is not None else "?")
    return explicit, values


def loops_with_loads(f: KernelFacts) -> list[LoopFact]:
    ids = {lid for a in f.accesses if a.kind in ("load", "rmw") and a.space == "global" for lid in a.loops}
    return [f.loops[i] for i in sorted(ids)]


def stages_decision(f: KernelFacts):
    """Triton's shared convention for multistage_pipeline and async_copy."""
    from ._base import absent, not_applicable, present

    loops = [lp for lp in loops_with_loads(f) if lp.iterator != "tl.static_range"]
    if not loops:
        return absent("no loop that loads: nothing to pipeline")
    explicit, values = stage_values(f)
    if not explicit:
        return not_applicable("loop without explicit num_stages: the compiler default decides")
    known = [v for v in values if isinstance(v, int)]
    if known and max(known) >= 2:
        return present(loops[:1], f"explicit num_stages {sorted(set(known))} on a loop that loads")
    if known and max(known) < 2:
        return absent(f"num_stages={max(known)}: no pipelining")
    return not_applicable("num_stages given but not a constant")


def coefficient(p: P.Poly, key: str) -> P.Poly:
    return P.coeff(p, key)


def constant(e: E | None) -> int | float | None:
    if e is None:
        return None
    c = P.constant_of(P.poly(e))
    return int(c) if c is not None and c.denominator == 1 else (float(c) if c is not None else num(e))


__all__ = [n for n in dir() if not n.startswith("_")] + ["Num"]


def located(f: KernelFacts, e: E) -> E:
    """``e`` with every load replaced by the location it reads (object and offset), so that two
    reads of one location compare equal: statistics kept in memory through a pointer
    (``*mean += (x - *mean) / n``) are read by several loads of the same place."""
    if not has_load(e):
        return e
    memo = f.cache.get("located")
    if memo is None:  # one per kernel: the values of its assignments share their subtrees
        memo = f.cache["located"] = {}

    def location(n: E) -> E:
        if isinstance(n, Load) and n.access < len(f.accesses):
            return Sym(f"at:{n.obj}:{P.show(f.accesses[n.access].poly)}")
        return n
    return rewrite_within(e, location, has_load, memo)


# whether a value reads memory anywhere (memoised per node): values rewritten load by load
# keep their load-free parts as they are
has_load = subtree_has(lambda n: type(n) is Load)


def with_enclosing(f: KernelFacts, ids: list[int]) -> list[int]:
    """Loops and every loop around them: an MMA's innermost loop walks the k-steps of a shared
    tile while the loop that loads from global memory (the one a split or a causal bound
    restricts) encloses it."""
    out: list[int] = []
    for lid in ids:
        while lid is not None and lid not in out:
            out.append(lid)
            lid = f.loops[lid].parent
    return out


BLOCK_INDEX = ("bid.", "pid.")


def block_indexed(keys) -> bool:
    """Whether the atoms ``keys`` include the block/program index."""
    return any(k.startswith(BLOCK_INDEX) for k in keys)


def _block_index_at(n: E) -> bool:
    return type(n) is Sym and (n.key.startswith(BLOCK_INDEX) or block_indexed(n.deps))


# ``block_indexed(atoms(e))`` memoised per node and built from the children's answers (the
# atoms of a value are its symbols' keys and deps): asked of every assignment's value, it
# scans each symbol once instead of every value's whole atom set
reads_block_index = subtree_has(_block_index_at)


def _same_size(bound, dim) -> bool:
    """Whether a launch argument is the size of a grid dimension: the same value, the value a
    ``min``/``max`` clamps (``grid = min(sms, rows)`` with a stride of ``sms``). Sharing an atom
    is not enough: a K step ``BLOCK_K`` and a grid axis ``cdiv(K, BLOCK_K * SPLIT)`` both contain
    ``BLOCK_K``, and a chunk width from ``x.shape[1]`` and a grid of ``x.shape[0]`` rows both
    contain ``x``'s shape."""
    if bound == dim:
        return True
    return isinstance(dim, Op) and dim.op in ("min", "max") and any(_same_size(bound, a) for a in dim.args)


def grid_sized(keys, f: KernelFacts) -> bool:
    """Whether the atoms ``keys`` include the grid size: ``gridDim``/``tl.num_programs``, or a
    kernel parameter (or constexpr) that a launch binds to a grid dimension."""
    if any(k.startswith(("gdim.", "nprog.")) for k in keys):
        return True
    for k in keys:
        if k.startswith(("param#", "cexpr#")):
            i = int(k.split("#")[1])
            if any(i < len(lf.bound) and lf.bound[i] is not None and any(_same_size(lf.bound[i], g) for g in lf.grid)
                   for lf in f.launches):
                return True
    return False


def counted_grid_stride(f: KernelFacts, lp: LoopFact) -> bool:
    """A counted loop (``for i in range(iters)``) walking the grid: a global access in it whose
    offset depends on the block/program index and advances by a multiple of the grid size per
    iteration (``(pid + i * num_programs) * BLOCK``)."""
    it = f"iter#{lp.id}"
    return any(block_indexed(P.terms(a.poly)) and grid_sized(P.terms(P.coeff(a.poly, it)), f) for a in global_accesses_in(f, lp.id))


def global_accesses_in(f: KernelFacts, lid: int) -> list[Access]:
    """The global accesses inside loop ``lid`` (at any depth), indexed once per kernel."""
    by_loop = f.cache.get("global_by_loop")
    if by_loop is None:
        by_loop = f.cache["global_by_loop"] = {}
        for a in f.accesses:
            if a.space == "global":
                for l in set(a.loops):
                    by_loop.setdefault(l, []).append(a)
    return by_loop.get(lid, [])


WARP = 32


def _lane_key(key: str) -> bool:
    """A term that is the lane within a warp (or within a group of lanes): ``lane``,
    ``threadIdx.x % 32``, ``threadIdx.x & 1``."""
    if key == "lane":
        return True
    n = P.opaque_expr(key) if key.startswith("~") else None
    if not (isinstance(n, Op) and len(n.args) == 2 and n.op in ("%", "&")):
        return False
    width = num(n.args[1])
    width = width + 1 if n.op == "&" and width is not None else width
    return width is not None and 0 < width <= WARP and atoms(n.args[0]) <= {"tid.x"}


def same_in_every_warp(acc) -> bool:
    """The read's address depends on the thread only through its lane: every warp reads the
    same elements, the case of a vector cached in shared memory that all warps share (a GEMV's
    x), not of a 2-D operand tile whose rows or columns differ between warps."""
    thread_keys = _thread_keys(acc.poly)
    return bool(thread_keys) and all(_lane_key(k) for k in thread_keys)


def _thread_keys(poly: P.Poly) -> set[str]:
    """The terms of an offset that move with the thread: its index, lane or warp, directly or
    inside an opaque term (``(threadIdx.x / 8)``)."""
    return {k for k in P.terms(poly) if k.startswith(("tid", "lane", "warp")) or (k.startswith("~") and any(
        a.startswith(("tid", "lane", "warp")) for a in atoms(P.opaque_expr(k) or Num(0))))}


def cached_vector(f: KernelFacts, obj: int) -> bool:
    """A shared object every warp reads alike: each load of it is the same for all threads (a
    broadcast) or depends on the thread only through its lane. It caches a vector (a GEMV's x),
    it does not hold a 2-D operand tile."""
    reads = [a for a in f.accesses if a.obj == obj and a.kind == "load"]
    return bool(reads) and all(same_in_every_warp(r) or not thread_dependent(r) for r in reads)


def one_element_per_thread(f: KernelFacts, acc) -> bool:
    """Each thread reads its own element: the address moves with the thread indices by constant
    strides that never let two threads of a block meet (``ws[threadIdx.x]`` in a 1-D block,
    ``tile[threadIdx.x][threadIdx.y]`` in a 32 x 32 block with a row pitch of 34), for every block
    shape the kernel is launched with. Such a read shares nothing between threads."""
    if not f.launches:
        return False
    keys = _thread_keys(acc.poly)
    if not keys or not keys <= {"tid.x", "tid.y", "tid.z"}:
        return False
    strides = {k: P.constant_of(P.coeff(acc.poly, k)) for k in keys}
    if any(v is None or v == 0 or v != int(v) for v in strides.values()):
        return False  # a stride known only at run time, or a fractional one, may let threads meet
    for lf in f.launches:
        if not lf.block:
            return False  # a block shape not seen at this launch may be anything
        extents = [num(d) for d in lf.block] + [1] * (3 - len(lf.block))
        dims = [(abs(strides.get(k, 0)), e) for k, e in zip(("tid.x", "tid.y", "tid.z"), extents) if e != 1]
        if any(st == 0 for st, _ in dims):
            return False  # a thread dimension the address ignores (or may ignore): its threads share the element
        span = 1
        for i, (st, e) in enumerate(sorted(dims, key=lambda d: d[0])):
            # mixed radix: each stride clears the range of the smaller ones; the extent of the
            # largest-stride dimension does not matter
            if st < span or (i < len(dims) - 1 and not isinstance(e, int)):
                return False
            span = st * e if isinstance(e, int) else span
    return True


def thread_dependent(acc) -> bool:
    """The access's address moves with the thread (its index, lane or warp)."""
    return any(P.mentions(acc.poly, k) for k in ("tid", "lane", "warp"))
