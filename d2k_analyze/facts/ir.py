"""Statements of the lowered IR: what a function body does, in order, for both languages.

The front ends (:mod:`.lower_cuda`, :mod:`.lower_python`) turn tree-sitter trees into these
records; the interpreter (:mod:`.interp`) runs over them. Every statement keeps its location so
that evidence points at real lines; nothing keeps comments, strings or dead branches.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .expr import E


@dataclass(frozen=True, slots=True)
class Loc:
    file: str
    line: int
    end_line: int


@dataclass(slots=True)
class Stmt:
    loc: Loc


@dataclass(slots=True)
class Decl(Stmt):
    """One declarator: ``__shared__ float As[BM][BK + 1]`` or ``const float* p = x + i``."""

    name: str
    type: str  # the declared type as written, qualifiers and pointer stars included
    quals: frozenset[str] = frozenset()  # __shared__ extern const constexpr static register __constant__
    dims: tuple[E | None, ...] = ()  # array extents (None for [])
    init: E | None = None
    ref: bool = False  # a C++ reference (binds to the initialiser's storage)
    pointer: int = 0  # pointer depth of the declarator


@dataclass(slots=True)
class Assign(Stmt):
    target: E  # Name / Index / Attr / Op('deref', ...) / Tup (Python unpacking)
    op: str  # "=", "+=", "*=", ...
    value: E


@dataclass(slots=True)
class ExprStmt(Stmt):
    expr: E


@dataclass(slots=True)
class If(Stmt):
    cond: E
    then: list[Stmt]
    orelse: list[Stmt]


@dataclass(slots=True)
class Loop(Stmt):
    """``for``/``while``/``do`` (C++), range-for, Python ``for``/``while``.

    C++ ``for``: ``init`` statements, ``cond``, ``update`` statements. Range-for and Python
    ``for``: ``var`` (target) over ``iterable`` (``range(a, b, s)``, ``tl.range(...)``...).
    ``pragmas``: the ``#pragma``/``_Pragma`` texts directly before the loop."""

    kind: str  # for | while | do | range
    body: list[Stmt]
    init: list[Stmt] = field(default_factory=list)
    cond: E | None = None
    update: list[Stmt] = field(default_factory=list)
    var: E | None = None
    iterable: E | None = None
    pragmas: tuple[str, ...] = ()


@dataclass(slots=True)
class Return(Stmt):
    value: E | None


@dataclass(slots=True)
class Asm(Stmt):
    """Inline PTX: the instruction text, and the C++ operands (outputs first, as written)."""

    text: str
    outputs: tuple[E, ...] = ()
    inputs: tuple[E, ...] = ()


@dataclass(slots=True)
class Pragma(Stmt):
    text: str


@dataclass
class Param:
    name: str
    type: str = ""
    default: E | None = None
    ref: bool = False
    pointer: int = 0
    constexpr: bool = False  # Triton tl.constexpr


@dataclass
class Func:
    """A lowered function: a kernel, a device/jit helper, a host function, a lambda or functor."""

    name: str
    params: list[Param]
    body: list[Stmt]
    loc: Loc
    language: str  # cuda | triton | python
    kind: str = "device"  # kernel | device | host | lambda | jit
    tparams: list[tuple[str, E | None]] = field(default_factory=list)  # template parameters (name, default)
    qualifiers: frozenset[str] = frozenset()
    attributes: tuple[str, ...] = ()  # __launch_bounds__(...), __cluster_dims__(...) as written
