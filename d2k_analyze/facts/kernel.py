"""What detectors read: the facts of one kernel unit, as the interpreter found them.

Every record is about what the code *does*: memory objects and the accesses to them (space,
element type and width, the offset as a resolved expression), assignments with their resolved
values, loops with resolved bounds and steps, library calls with resolved arguments, barriers,
inline PTX, and the launches that reach the kernel. Names the code chose appear nowhere a
detector could match them: locals are resolved to their values, parameters are numbered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from . import poly as P
from .expr import E, Call, Load, Sym, atoms, short, walk
from .ir import Loc


@dataclass
class Obj:
    """A memory object: a pointer parameter, a ``__shared__`` array, a local array."""

    id: int
    space: str  # global | shared | local | constant
    elem: str  # element type as declared ("float", "half2", "T" resolved when known)
    dims: tuple[int | None, ...]  # resolved extents (shared/local arrays); () for pointers
    loc: Loc
    origin: str  # param#<i> | shared | extern_shared | local | global_var
    dim_exprs: tuple[E | None, ...] = ()  # extents as resolved expressions (padding questions)

    @property
    def size(self) -> int | None:
        if not self.dims or any(d is None for d in self.dims):
            return None
        n = 1
        for d in self.dims:
            n *= d  # type: ignore[operator]
        return n


@dataclass
class Access:
    id: int
    obj: int
    space: str
    kind: str  # load | store | atomic | rmw
    off: E  # offset in elements of ``elem`` from the object's start
    elem: str  # element type of the access (float4 for a reinterpret_cast<float4*> load)
    width: int | None  # bytes per access when the element type is known
    loc: Loc
    loops: tuple[int, ...]  # enclosing loops, outermost first
    guards: tuple[E, ...]  # conditions of enclosing branches
    value: E | None = None  # the stored value (stores, atomics)
    via: str = "subscript"  # subscript | deref | async | tma | asm | tl.load | tl.store | block_ptr | descriptor | api
    unit: int | None = None  # bytes per step of ``off`` where it differs from ``width`` (a 16-byte cp.async of halves: 2)

    @cached_property
    def poly(self) -> P.Poly:
        return P.poly(self.off)

    def thread_stride(self) -> P.Poly:
        """Coefficient of the lane (threadIdx.x, or lane = tid % 32) in the offset."""
        p = self.poly
        c = P.coeff(p, "tid.x")
        return c if c else P.coeff(p, "lane")


@dataclass
class Assignment:
    """A write to a local (``cell``) or to memory (``access``): ``target op= rhs`` with ``old`` the
    value before and ``new`` the value after, all resolved."""

    loc: Loc
    cell: int | None
    access: int | None
    op: str
    rhs: E
    old: E | None
    new: E
    loops: tuple[int, ...]
    guards: tuple[E, ...]
    type: str = ""  # declared type of the local, when a local


@dataclass
class LoopFact:
    id: int
    kind: str  # for | while | do | range
    loc: Loc
    parent: int | None
    iterator: str = ""  # Python: range | tl.range | tl.static_range; C++: ""
    init: E | None = None  # induction start
    bound: E | None = None  # the other side of the condition
    step: E | None = None  # additive step per iteration (None: not additive)
    update: str = "none"  # add | mul | shr | div | other | none
    factor: E | None = None  # the operand of a mul / shr / div update (``offset >>= 1``: 1)
    trips: int | None = None
    pragmas: tuple[str, ...] = ()
    kwargs: dict[str, E] = field(default_factory=dict)  # tl.range(..., num_stages=...)
    carried: tuple[int, ...] = ()  # cells updated across iterations
    var_cell: int | None = None


@dataclass
class CallFact:
    call: Call  # resolved
    loc: Loc
    loops: tuple[int, ...]
    guards: tuple[E, ...]

    def __post_init__(self) -> None:
        # the last segment of the name, once: detectors ask it of every call again and again
        self.short: str = short(self.call.fn)  # an attribute, not a field: equality and repr stay the fields'

    @property
    def fn(self) -> str:
        return self.call.fn


@dataclass
class AsmFact:
    """An inline asm statement: its template text and the resolved values of its input operands
    (a constant passed as ``"r"(kMask)`` is the constant, whatever it is called)."""

    text: str
    loc: Loc
    loops: tuple[int, ...]
    guards: tuple[E, ...]
    operands: tuple[E, ...] = ()
    # the template with each input operand that resolved to an integer written in
    # (``cp.async.wait_group %0`` with ``"n"(2)`` reads ``cp.async.wait_group 2``)
    resolved: str = ""


@dataclass
class LaunchFact:
    """A launch of the kernel: grid and block (resolved in the host code), the values passed to
    each parameter (by position), keyword arguments (Triton: num_warps, num_stages ...)."""

    loc: Loc
    grid: tuple[E, ...]
    block: tuple[E, ...] = ()
    smem: E | None = None
    args: tuple[E | None, ...] = ()
    kwargs: dict[str, E] = field(default_factory=dict)
    attributes: tuple[str, ...] = ()  # launch attributes set on the way (cluster dims, PDL ...)
    targs: tuple[E, ...] = ()  # template arguments at a C++ launch
    bound: tuple[E | None, ...] = ()  # the value each kernel parameter gets (positional and keyword arguments matched)
    host: str = ""  # the host function that launches
    host_names: frozenset[str] = frozenset()  # library names that host code uses (cluster attributes, TMA swizzles)
    guards: tuple[E, ...] = ()  # the host conditions the launch is under (``if (m == 1)``)
    # the conditions that choose this launch over another launch of the same host code: a guard
    # whose negation another launch is under (``if (m <= 16) small<<<>>> else big<<<>>>``)
    exclusive: tuple[E, ...] = ()


@dataclass
class KernelFacts:
    """Facts of one kernel unit (the kernel with its inlined helpers)."""

    name: str
    language: str  # cuda | triton
    file: str
    loc: Loc
    n_params: int = 0
    objects: dict[int, Obj] = field(default_factory=dict)
    accesses: list[Access] = field(default_factory=list)
    assigns: list[Assignment] = field(default_factory=list)
    loops: dict[int, LoopFact] = field(default_factory=dict)
    calls: list[CallFact] = field(default_factory=list)
    asm: list[AsmFact] = field(default_factory=list)
    returns: list[E] = field(default_factory=list)
    launches: list[LaunchFact] = field(default_factory=list)
    attributes: tuple[str, ...] = ()  # __launch_bounds__(...), __cluster_dims__(...)
    cell_types: dict[int, str] = field(default_factory=dict)
    template_types: dict[str, tuple[str, ...]] = field(default_factory=dict)  # type params -> instantiations
    # Triton: autotune configs (key -> values), decorators, constexpr values per launch env.
    configs: list[dict[str, list[object]]] = field(default_factory=list)
    decorators: list[Call] = field(default_factory=list)
    constexprs: dict[int, tuple[object, ...]] = field(default_factory=dict)  # param index -> values
    host_calls: list[CallFact] = field(default_factory=list)  # library calls in the host code around launches
    host_asm: list[str] = field(default_factory=list)
    host_names: set[str] = field(default_factory=set)  # library names the launching host code uses
    lib_names: set[str] = field(default_factory=set)  # library names (identifiers, types) the kernel's live code uses
    warnings: list[str] = field(default_factory=list)
    lines: set[tuple[str, int]] = field(default_factory=set)  # live code lines (file, line)
    file_lines: dict[str, list[str]] = field(default_factory=dict, repr=False)
    cache: dict = field(default_factory=dict, repr=False)

    # --- queries ---------------------------------------------------------------------------
    def lib_names_used(self) -> set[str]:
        return self.lib_names

    def extent_names(self) -> set[str]:
        """Unresolved names the kernel uses as array extents (``__shared__ float r[_N_]``). C++
        allows only constant expressions there, so such a name is fixed when the kernel is built
        (an ``nvcc -D`` flag, a macro of a header that is not here), never a run-time value."""
        return {a for o in self.objects.values() for d in o.dim_exprs if d is not None
                for a in atoms(d) if a.startswith("lib:")}

    def calls_named(self, *names: str) -> list[CallFact]:
        """Library calls whose canonical name or last segment is one of ``names``."""
        wanted = set(names)
        return [c for c in self.calls if c.fn in wanted or c.short in wanted]

    def host_calls_named(self, *names: str) -> list[CallFact]:
        wanted = set(names)
        return [c for c in self.host_calls if c.fn in wanted or c.short in wanted]

    def asm_matching(self, pattern: str) -> list[AsmFact]:
        import re

        rx = re.compile(pattern)
        return [a for a in self.asm if rx.search(a.resolved or a.text)]

    def accesses_in(self, space: str | None = None, kind: str | None = None) -> list[Access]:
        return [a for a in self.accesses if (space is None or a.space == space) and (kind is None or a.kind == kind or (kind == "load" and a.kind == "rmw"))]

    def loop_chain(self, loop_id: int) -> list[LoopFact]:
        out = []
        cur: int | None = loop_id
        while cur is not None:
            lp = self.loops[cur]
            out.append(lp)
            cur = lp.parent
        return out

    def inner_loops(self, loop_id: int) -> list[LoopFact]:
        return [lp for lp in self.loops.values() if loop_id in [p.id for p in self.loop_chain(lp.id)[1:]]]

    def uses_value(self, e: E, key: str) -> bool:
        return key in atoms(e)

    def barriers(self) -> list[CallFact]:
        return [c for c in self.calls if c.short in BARRIERS or (c.fn.startswith(".") and c.short in ("sync", "arrive_and_wait", "barrier_sync"))]

    def snippet(self, file: str, start: int, end: int | None = None) -> str:
        lines = self.file_lines.get(file) or []
        end = end or start
        chunk = lines[max(start - 1, 0): min(end, start + 4, len(lines))]
        return "\n".join(s.rstrip() for s in chunk)[:400]

    def access(self, i: int) -> Access:
        return self.accesses[i]

    def load_sources(self, e: E) -> list[Access]:
        """The accesses whose loaded values flow into ``e``."""
        return [self.accesses[n.access] for n in walk(e) if isinstance(n, Load) and n.access < len(self.accesses)]


BARRIERS = frozenset({"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or", "__barrier_sync", "sync", "barrier_sync", "bar_sync", "arrive_and_wait", "tl.debug_barrier", "debug_barrier"})


def is_geometry(key: str, *kinds: str) -> bool:
    return any(key == k or key.startswith(k + ".") for k in kinds)


def sym_key(e: E) -> str | None:
    return e.key if isinstance(e, Sym) else None
