"""The expression IR both front ends lower to, and the values the interpreter computes.

Lowered code (``Name``, ``Index``, ``Attr``...) mentions identifiers; the interpreter
(:mod:`.interp`) replaces every identifier by what it *is*: an atom of the launch geometry
(``Sym("tid.x")``), a kernel parameter by position (``Sym("param#2")``), a loop iteration
(``Sym("iter#4")``), a memory object (``Ptr``), a value read from memory (``Load``) or the
defining expression of a local. Detectors only ever see resolved values, so a variable called
``mean`` and one called ``q`` are the same thing when they hold the same value.

Nodes are immutable and hashable: structural equality is how detectors recognise that the
``mean`` in ``mean + (x - mean) / n`` is the same value twice. They are not declared ``frozen``
only because a frozen dataclass's constructor is several times slower and the interpreter builds
millions of nodes: nothing assigns to a node's fields after construction (the memoised hash,
``_hash``, is set once through ``object.__setattr__`` and is not part of equality).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import wraps
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")


class E:
    """Base of every expression node."""

    __slots__ = ()


def _memo_hash(node, key: tuple) -> int:
    """The structural hash of a compound node, computed once. Resolved values are deep trees
    used as dictionary keys and set members again and again (polynomial forms, memo tables);
    a dataclass hash would walk the whole tree every time. Nodes are immutable, so the first
    hash stays right; ``_hash`` is excluded from equality."""
    h = node._hash
    if not h:
        h = hash((type(node), key)) or 1
        object.__setattr__(node, "_hash", h)
    return h


@dataclass(slots=True, unsafe_hash=True)
class Num(E):
    v: int | float | bool


@dataclass(slots=True, unsafe_hash=True)
class Str(E):
    v: str


@dataclass(slots=True, unsafe_hash=True)
class Name(E):
    """An identifier as written (lowered code only; never in resolved values). ``targs`` keeps
    the template arguments of a function named as a value (``cudaLaunchKernelEx(cfg, k<C>, ...)``)."""

    id: str
    targs: tuple[E, ...] = ()


@dataclass(slots=True, unsafe_hash=True)
class Sym(E):
    """An opaque value: a launch-geometry atom, a parameter, a loop iteration, a variable whose
    value depends on control flow. ``deps`` lists the atoms it is derived from (for taint
    questions such as "does this depend on blockIdx?")."""

    key: str
    deps: frozenset[str] = frozenset()

    def atoms(self) -> frozenset[str]:
        return self.deps | {self.key}


@dataclass(slots=True)
class Op(E):
    """Operators: + - * / // % << >> & | ^ < <= > >= == != and or not neg ~ ?: min max pow."""

    op: str
    args: tuple[E, ...]
    _hash: int = field(default=0, compare=False, repr=False)

    def __hash__(self) -> int:
        return _memo_hash(self, (self.op, self.args))


@dataclass(slots=True)
class Call(E):
    """A call. ``fn`` is canonical for library functions (``__shfl_xor_sync``, ``tl.dot``,
    ``wmma.mma_sync``); user functions are inlined by the interpreter and never stay a Call."""

    fn: str
    args: tuple[E, ...] = ()
    kw: tuple[tuple[str, E], ...] = ()
    targs: tuple[E, ...] = ()
    _hash: int = field(default=0, compare=False, repr=False)

    def __hash__(self) -> int:
        return _memo_hash(self, (self.fn, self.args, self.kw, self.targs))

    def kwarg(self, key: str) -> E | None:
        return next((v for k, v in self.kw if k == key), None)


@dataclass(slots=True)
class Index(E):
    base: E
    idx: tuple[E, ...]
    _hash: int = field(default=0, compare=False, repr=False)

    def __hash__(self) -> int:
        return _memo_hash(self, (self.base, self.idx))


@dataclass(slots=True)
class Attr(E):
    base: E
    name: str
    _hash: int = field(default=0, compare=False, repr=False)

    def __hash__(self) -> int:
        return _memo_hash(self, (self.base, self.name))


@dataclass(slots=True)
class Cast(E):
    type: str
    arg: E
    _hash: int = field(default=0, compare=False, repr=False)

    def __hash__(self) -> int:
        return _memo_hash(self, (self.type, self.arg))


@dataclass(slots=True)
class Tup(E):
    items: tuple[E, ...]
    _hash: int = field(default=0, compare=False, repr=False)

    def __hash__(self) -> int:
        return _memo_hash(self, (self.items,))


@dataclass(slots=True, unsafe_hash=True)
class TypeRef(E):
    """A type used as a value (``Op()`` functor construction, ``sizeof(float4)``)."""

    name: str


@dataclass(slots=True, unsafe_hash=True)
class Lambda(E):
    """A C++ or Python lambda (lowered body; ``node`` keys the interpreter's closure)."""

    params: tuple[str, ...]
    body: object = field(compare=False, hash=False)
    key: int = 0


@dataclass(slots=True)
class Ptr(E):
    """A pointer into memory object ``obj`` at ``off`` elements of ``elem`` (resolved values only).
    ``shape`` holds the extents still to index for a multi-dimensional array (``As[BM][BK]``
    indexed once is a row pointer with shape ``(BK,)``)."""

    obj: int
    elem: str
    off: E
    shape: tuple[E, ...] = ()
    _hash: int = field(default=0, compare=False, repr=False)

    def __hash__(self) -> int:
        return _memo_hash(self, (self.obj, self.elem, self.off, self.shape))


@dataclass(slots=True, unsafe_hash=True)
class Load(E):
    """A value read from memory (resolved values only): which object, space and access id."""

    obj: int
    space: str
    access: int



def _state_without_hash(self) -> list:
    """Pickled state of a node with a memoised hash: the hash is left out (string hashes differ
    between processes, and analyses cross process boundaries), so it is recomputed on use."""
    return [0 if name == "_hash" else getattr(self, name) for name in self.__dataclass_fields__]


def _set_state(self, state: list) -> None:
    for name, value in zip(self.__dataclass_fields__, state):
        object.__setattr__(self, name, value)


for _cls in (Op, Call, Index, Attr, Cast, Tup, Ptr):
    _cls.__getstate__ = _state_without_hash  # type: ignore[method-assign]
    _cls.__setstate__ = _set_state  # type: ignore[attr-defined]


_REPR_FIELDS: dict[type, tuple[str, ...]] = {
    cls: tuple(f.name for f in cls.__dataclass_fields__.values() if f.repr)
    for cls in (Num, Str, Name, Sym, Op, Call, Index, Attr, Cast, Tup, TypeRef, Ptr, Load)
}

ZERO = Num(0)
ONE = Num(1)
# The callee of a call whose function the analyzer cannot see (a module-level value made at run time,
# ``rsqrt = find_op("rsqrt")``): the call keeps its arguments, never the name it is reached by.
UNKNOWN_CALLEE = "<unknown>"


_CHILDREN: dict[type, Callable[[E], tuple[E, ...]]] = {}


def children(e: E) -> tuple[E, ...]:
    get = _CHILDREN.get(type(e))
    return get(e) if get is not None else ()


def rewrite(e: E, fn: Callable[[E], E], memo: dict | None = None) -> E:
    """``e`` rebuilt bottom-up with ``fn`` applied to every node (children first). With a
    ``memo`` (kept by the caller for one ``fn``), a node met again, in this value or in another
    one built from it, is rebuilt once: its result is reused, as the same object."""
    if memo is not None:
        hit = memo.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1]
        out = _rewrite_node(e, lambda c: rewrite(c, fn, memo), fn)
        memo[id(e)] = (e, out)
        return out
    return _rewrite_node(e, lambda c: rewrite(c, fn), fn)


def rewrite_within(e: E, fn: Callable[[E], E], touches: Callable[[E], bool], memo: dict | None = None) -> E:
    """Like :func:`rewrite`, for an ``fn`` that changes only nodes inside subtrees where
    ``touches`` holds (a memoised :func:`subtree_has`, e.g. "holds a load"): every other subtree
    is kept as it is, the same object, instead of being rebuilt node by node into an equal copy.
    Sharing is kept as :func:`rewrite` with a memo keeps it, and the kept nodes' per-node memos
    stay valid for the result."""
    return _RewriteWithin(fn, touches, {} if memo is None else memo).sub(e)


class _RewriteWithin:
    """The recursion of :func:`rewrite_within`, as a method rather than a nested function: a
    nested function that calls itself is a reference cycle (function -> closure cell ->
    function), so it and all it holds (the memo, ``fn`` and whatever ``fn`` closes over, such
    as a kernel's facts) would outlive the call until the cyclic garbage collector finds them.
    Freed on return instead, they neither wait in memory nor make every collection slower."""

    __slots__ = ("fn", "touches", "memo")

    def __init__(self, fn: Callable[[E], E], touches: Callable[[E], bool], memo: dict):
        self.fn = fn
        self.touches = touches
        self.memo = memo

    def sub(self, n: E) -> E:
        if not self.touches(n):
            return n
        hit = self.memo.get(id(n))
        if hit is not None and hit[0] is n:
            return hit[1]
        out = _rewrite_node(n, self.sub, self.fn)
        self.memo[id(n)] = (n, out)
        return out


def _rewrite_node(e: E, sub: Callable[[E], E], fn: Callable[[E], E]) -> E:
    """One node rebuilt from its children's rewrites (``sub``), then ``fn`` applied."""
    if isinstance(e, Op):
        e = Op(e.op, tuple(sub(a) for a in e.args))
    elif isinstance(e, Call):
        e = Call(e.fn, tuple(sub(a) for a in e.args), tuple((k, sub(v)) for k, v in e.kw), e.targs)
    elif isinstance(e, Index):
        e = Index(sub(e.base), tuple(sub(i) for i in e.idx))
    elif isinstance(e, Attr):
        e = Attr(sub(e.base), e.name)
    elif isinstance(e, Cast):
        e = Cast(e.type, sub(e.arg))
    elif isinstance(e, Tup):
        e = Tup(tuple(sub(i) for i in e.items))
    elif isinstance(e, Ptr):
        e = Ptr(e.obj, e.elem, sub(e.off), e.shape)
    return fn(e)


_NODES_LIMIT = 100_000


_MEMOS: list[dict] = []
_CACHES: list[Callable[[], None]] = []  # ``cache_clear`` of other memos keyed by expressions


def forget_nodes() -> None:
    """Empty every per-node memo. Expressions belong to one submission's analysis: kept after
    it, the memos would hold its whole value graph alive (memory, and objects the cyclic
    collector scans again and again) for nothing, since no later submission shares a node."""
    for memo in _MEMOS:
        memo.clear()
    for clear in _CACHES:
        clear()


def forget_with_nodes(clear: Callable[[], None]) -> None:
    """Have :func:`forget_nodes` also call ``clear``: for a cache keyed by expression *values*
    (an ``lru_cache`` of a pure function of the expression). Such a cache would otherwise keep
    up to its size in expressions and results of earlier submissions alive for the whole run,
    objects every later garbage collection must scan again; a later submission rarely meets an
    equal value, and recomputing it gives the same answer."""
    _CACHES.append(clear)


def per_node(fn: Callable[[E], T]) -> Callable[[E], T]:
    """Memoise a function of one expression per expression *object*: detectors and the
    interpreter ask the same questions of the same resolved values again and again, and these
    trees are deep. The memo holds the expression itself, so an id is never reused while it is
    cached; it is emptied when it grows past ``_NODES_LIMIT`` entries."""
    memo: dict[int, tuple[E, T]] = {}
    _MEMOS.append(memo)

    @wraps(fn)
    def cached(e: E) -> T:
        hit = memo.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1]
        result = fn(e)
        if len(memo) >= _NODES_LIMIT:
            memo.clear()
        memo[id(e)] = (e, result)
        return result

    cached.memo = memo  # type: ignore[attr-defined]  # for recursions that read it inline (subtree_has, atoms)
    return cached


@per_node
def nodes(e: E) -> tuple[E, ...]:
    """Every node of ``e`` in pre-order (walking them once is most of a detector's time)."""
    out: list[E] = []
    stack = [e]
    get = _CHILDREN.get
    listed = _NODES_MEMO.get
    while stack:
        n = stack.pop()
        hit = listed(id(n)) if n is not e else None
        if hit is not None and hit[0] is n:  # a subtree listed before: its pre-order, copied in C
            out.extend(hit[1])
            continue
        out.append(n)
        kids = get(type(n))
        if kids is not None:
            stack.extend(reversed(kids(n)))
    return tuple(out)


_NODES_MEMO: dict = nodes.memo  # type: ignore[attr-defined]


def walk(e: E) -> Iterator[E]:
    """Pre-order walk of an expression tree."""
    hit = _NODES_MEMO.get(id(e))  # most values were walked already: no call of the memo wrapper
    return iter(hit[1] if hit is not None and hit[0] is e else nodes(e))


@per_node
def operators(e: E) -> tuple[E, ...]:
    """The operator and call nodes of ``e`` (pre-order): formula recognisers only look at these."""
    return tuple([n for n in nodes(e) if type(n) is Op or type(n) is Call])  # a list first: faster than a generator


@per_node
def order_key(e: E) -> str:
    """A deterministic sort key for operands of commutative operators (``max(a, b)`` and
    ``max(b, a)`` become one value): the node's text, exactly ``repr(e)``. The same running
    values are re-sorted at every step of a loop; built from the children's memoised keys, so a
    value made of values already keyed costs one string join, not a walk of the whole tree."""
    names = _REPR_FIELDS.get(type(e))
    if names is None:
        return repr(e)
    return f"{type(e).__name__}(" + ", ".join([f"{n}={_field_text(getattr(e, n))}" for n in names]) + ")"


def _field_text(v) -> str:
    if isinstance(v, E):
        hit = _ORDER_MEMO.get(id(v))  # the memo read here: most fields were keyed already
        return hit[1] if hit is not None and hit[0] is v else order_key(v)
    if type(v) is tuple:
        return "(" + ", ".join([_field_text(x) for x in v]) + ("," if len(v) == 1 else "") + ")"
    return repr(v)


_ORDER_MEMO: dict = order_key.memo  # type: ignore[attr-defined]


@per_node
def _node_count(e: E) -> int:
    """Counted from the children's counts: a new value is mostly made of values already
    counted, so no tree is walked twice."""
    get = _CHILDREN.get(type(e))
    if get is None:
        return 1
    try:
        total = 1
        counted = _COUNT_MEMO.get
        for c in get(e):
            hit = counted(id(c))  # the memo read here: most children were counted already
            total += min(hit[1] if hit is not None and hit[0] is c else _node_count(c), 10_000)
        return total
    except RecursionError:
        return len(nodes(e))


_COUNT_MEMO: dict = _node_count.memo  # type: ignore[attr-defined]


def size(e: E, cap: int = 10_000) -> int:
    """The number of nodes of ``e``, at most ``cap`` (the interpreter asks it of every value it
    builds, to keep values small)."""
    hit = _COUNT_MEMO.get(id(e))
    return min(hit[1] if hit is not None and hit[0] is e else _node_count(e), cap)


def subtree_has(pred: Callable[[E], bool]) -> Callable[[E], bool]:
    """``has(e)``: whether some node of ``e`` satisfies ``pred``, memoised per node and built from
    the children's answers. Detectors ask it of every assignment's value, and those values
    nest (each is made of earlier ones): walking each whole tree would make the question
    quadratic in the kernel's length. ``pred`` must depend on the node alone."""

    @per_node
    def has(e: E) -> bool:
        try:
            if pred(e):
                return True
            kids = _CHILDREN.get(type(e))
            if kids is None:
                return False
            get = memo.get
            for c in kids(e):  # a loop, not any(generator): this runs for every node
                hit = get(id(c))  # the memo read here: most children were asked already
                if hit is not None and hit[0] is c:
                    if hit[1]:
                        return True
                elif has(c):
                    return True
            return False
        except RecursionError:
            return any(pred(n) for n in walk(e))

    memo = has.memo
    return has


def has_within(e: E, pred: Callable[[E], bool], memo: dict) -> bool:
    """Whether some node of ``e`` satisfies ``pred``, memoised in the caller's ``memo`` (one per
    ``pred``): :func:`subtree_has` for a predicate that depends on more than the node (a set of
    cells of one kernel), so it cannot live in a module-wide memo. Asked of many values that
    share subtrees, each shared node is judged once."""
    hit = memo.get(id(e))
    if hit is not None and hit[0] is e:
        return hit[1]
    try:
        found = bool(pred(e)) or any(has_within(c, pred, memo) for c in children(e))
    except RecursionError:
        found = any(pred(n) for n in walk(e))
    memo[id(e)] = (e, found)
    return found


def any_node(e: E, pred: Callable[[E], bool]) -> bool:
    return any(pred(n) for n in walk(e))


def calls_in(e: E, *names: str) -> list[Call]:
    """Library calls inside ``e`` whose canonical name (or last segment) is one of ``names``."""
    wanted = set(names)
    return [n for n in walk(e) if isinstance(n, Call) and (n.fn in wanted or short(n.fn) in wanted)]


def short(fn: str) -> str:
    return fn.rsplit(".", 1)[-1]


SPACE_MARKERS = {"make_smem_ptr": "space:shared", "make_gmem_ptr": "space:global", "make_tmem_ptr": "space:tmem", "make_rmem_ptr": "space:local"}


@per_node
def atoms(e: E) -> frozenset[str]:
    """Every atom key ``e`` depends on: Sym keys and their deps, loads as ``load:<space>`` and
    ``obj#<n>``, pointers as ``obj#<n>``, CuTe-style pointer makers as ``space:<space>``.
    Built from the children's memoised sets (values are mostly made of values already asked
    about), walking the tree only when it is too deep to recurse."""
    try:
        acc = _own_atoms(e)
        kids = _CHILDREN.get(type(e))
        get = _ATOMS_MEMO.get
        for c in kids(e) if kids is not None else ():
            hit = get(id(c))  # the memo read here, not through the wrapper: most children were asked already
            s = hit[1] if hit is not None and hit[0] is c else atoms(c)
            if s is acc or not s or s <= acc:
                continue
            acc = s if not acc or acc <= s else acc | s  # a new set only when both add keys
        return acc
    except RecursionError:
        return _walked_atoms(e)


_ATOMS_MEMO: dict = atoms.memo  # type: ignore[attr-defined]
_NO_ATOMS: frozenset[str] = frozenset()


def _own_atoms(n: E) -> frozenset[str]:
    if isinstance(n, Sym):
        return n.deps | {n.key}
    if isinstance(n, Load):
        return frozenset(("load:" + n.space, f"obj#{n.obj}"))
    if isinstance(n, Ptr):
        return frozenset((f"obj#{n.obj}",))
    if isinstance(n, Call) and short(n.fn) in SPACE_MARKERS:
        return frozenset((SPACE_MARKERS[short(n.fn)],))
    return _NO_ATOMS


def _walked_atoms(e: E) -> frozenset[str]:
    out: set[str] = set()
    for n in walk(e):
        out |= _own_atoms(n)
    return frozenset(out)


def depends_on(e: E, prefix: str) -> bool:
    """Whether an atom whose key starts with ``prefix`` (``tid``, ``bid``, ``iter#3``) feeds ``e``."""
    return any(a.startswith(prefix) for a in atoms(e))


def loads_in(e: E) -> list[Load]:
    return [n for n in walk(e) if isinstance(n, Load)]


def flatten(op: str, e: E) -> list[E]:
    """Operands of a chain of the same associative operator: a + (b + c) -> [a, b, c]."""
    if isinstance(e, Op) and e.op == op:
        out: list[E] = []
        for a in e.args:
            out += flatten(op, a)
        return out
    return [e]


def num(e: E | None) -> int | float | None:
    return e.v if isinstance(e, Num) and not isinstance(e.v, bool) else None


def show(e: E, depth: int = 0) -> str:
    """A short human-readable form (evidence details, test failure messages)."""
    if depth > 6:
        return "…"
    d = depth + 1
    if isinstance(e, Num):
        return repr(e.v)
    if isinstance(e, Str):
        return repr(e.v)
    if isinstance(e, (Name,)):
        return e.id
    if isinstance(e, Sym):
        return e.key
    if isinstance(e, Op):
        if len(e.args) == 1:
            return f"{e.op}({show(e.args[0], d)})"
        if e.op == "?:":
            return f"({show(e.args[0], d)} ? {show(e.args[1], d)} : {show(e.args[2], d)})"
        if e.op in ("min", "max", "pow"):
            return f"{e.op}({', '.join(show(a, d) for a in e.args)})"
        return "(" + f" {e.op} ".join(show(a, d) for a in e.args) + ")"
    if isinstance(e, Call):
        return f"{e.fn}({', '.join(show(a, d) for a in e.args[:4])}{', …' if len(e.args) > 4 else ''})"
    if isinstance(e, Index):
        return f"{show(e.base, d)}[{', '.join(show(i, d) for i in e.idx)}]"
    if isinstance(e, Attr):
        return f"{show(e.base, d)}.{e.name}"
    if isinstance(e, Cast):
        return f"({e.type}){show(e.arg, d)}"
    if isinstance(e, Tup):
        return "(" + ", ".join(show(i, d) for i in e.items) + ")"
    if isinstance(e, Ptr):
        return f"&obj{e.obj}[{show(e.off, d)}]"
    if isinstance(e, Load):
        return f"ld.{e.space}#{e.access}"
    if isinstance(e, TypeRef):
        return e.name
    if isinstance(e, Lambda):
        return "lambda"
    return type(e).__name__


_CHILDREN.update({
    Op: lambda e: e.args,
    Call: lambda e: e.args + tuple(v for _, v in e.kw) if e.kw else e.args,
    Index: lambda e: (e.base,) + e.idx,
    Attr: lambda e: (e.base,),
    Cast: lambda e: (e.arg,),
    Tup: lambda e: e.items,
    Ptr: lambda e: (e.off,),
})
