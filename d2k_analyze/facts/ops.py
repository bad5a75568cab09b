"""Operation recognition by dataflow: which logically separate operations a kernel performs.

Kernel fusion is two or more operations in one kernel, so it needs to know *what* a kernel
computes, from formulas rather than names: a multiply-accumulate over a reduction axis is a GEMM
whether it runs on tensor cores or scalars; ``exp(x - max)`` normalised by a sum of exponentials
is a softmax; ``x · rsqrt(mean(x²) + eps)`` is a normalisation; ``x / (1 + exp(-x))`` is SiLU
whatever it is called. Each recogniser returns the places that show its operation.
"""

from __future__ import annotations

import re
from typing import Callable

from . import poly as P
from .expr import UNKNOWN_CALLEE, Attr, Call, Cast, E, Load, Num, Op, Sym, TypeRef, atoms, children, flatten, has_within, num, operators, short, subtree_has, walk
from .kernel import Access, Assignment, KernelFacts

EXP = {"exp", "expf", "__expf", "exp2", "exp2f", "__exp2f", "hexp", "h2exp", "hexp2", "h2exp2"}
RSQRT = {"rsqrt", "rsqrtf", "__frsqrt_rn", "hrsqrt", "h2rsqrt"}
SQRT = {"sqrt", "sqrtf", "__fsqrt_rn", "hsqrt"}
TANH = {"tanh", "tanhf", "htanh"}
ERF = {"erf", "erff", "erfc", "erfcf"}
LOG = {"log", "logf", "__logf", "log2", "log2f", "__log2f", "log1p", "log1pf"}
SIGMOID = {"sigmoid"}
RAND = {"curand_uniform", "curand_uniform4", "curand", "curand_normal", "rand", "randn", "randint", "philox", "rand4x", "randint4x"}
NEG_LARGE = -1.0e4
RECIPROCAL = {"__frcp_rn", "__fdividef", "fdividef", "rcp"}
# the heads of every node :func:`_is_activation` can accept
ACTIVATION_HEADS = SIGMOID | TANH | ERF | LOG | RECIPROCAL | {"gelu", "silu", "relu", "/", "fdiv", "max", "?:"}


def _fn(e: E, names: set[str]) -> bool:
    return isinstance(e, Call) and short(e.fn) in names


def values(f: KernelFacts) -> list[tuple[object, E]]:
    """Every value the kernel computes that is kept: assigned locals, stored data, call arguments
    (listed once per kernel: the node index and several recognisers read them; not to be mutated)."""
    out = f.cache.get("ops.values")
    if out is None:
        out = [(a, a.new) for a in f.assigns]
        out += [(a, a.value) for a in f.accesses if a.value is not None]
        out += [(c, c.call) for c in f.calls]
        f.cache["ops.values"] = out
    return out


class ValueIndex:
    """The operator and call nodes of every kept value, indexed once per kernel.

    Values nest: an assigned local reappears, as the same object, inside every later value
    built from it, so scanning each value's whole tree per recogniser tests the same nodes many
    times. Here each distinct node is listed once under its head (``+``, ``?:``, ``exp``...), so
    a recogniser tests only the nodes of the heads it cares about, each once. Which values hold
    a node is found by walking up from it (each distinct node knows the nodes built on it): a
    table of every node's holders would cost the sum of all values' sizes, which grows with
    the square of a kernel's length when each value is built on the one before."""

    def __init__(self, f: KernelFacts):
        self.records = values(f)
        self.by_head: dict[str, list[E]] = {}
        self._parents: dict[int, list[E]] = {}  # id(node) -> the distinct nodes that have it as a child
        self._values: dict[int, list[int]] = {}  # id(value) -> positions of the records whose value it is
        expanded: set[int] = set()
        for i, (_, v) in enumerate(self.records):
            if not isinstance(v, E):
                continue
            self._values.setdefault(id(v), []).append(i)
            if id(v) in expanded:
                continue
            expanded.add(id(v))
            stack = [v]
            while stack:
                n = stack.pop()
                if type(n) is Op or type(n) is Call:
                    self.by_head.setdefault(_head(n), []).append(n)
                for c in children(n):
                    self._parents.setdefault(id(c), []).append(n)
                    if id(c) not in expanded:
                        expanded.add(id(c))
                        stack.append(c)

    def holders(self, nodes: list[E]) -> set[int]:
        """Positions of the records whose value holds one of ``nodes`` (the node itself or a
        node built on it): one walk up from all of them, each ancestor visited once."""
        out: set[int] = set()
        stack = list(nodes)
        seen = {id(n) for n in nodes}
        while stack:
            m = stack.pop()
            out.update(self._values.get(id(m), ()))
            for p in self._parents.get(id(m), ()):
                if id(p) not in seen:
                    seen.add(id(p))
                    stack.append(p)
        return out


def _head(n: E) -> str:
    return n.op if type(n) is Op else short(n.fn)  # type: ignore[union-attr]


_INDEX: list[tuple[KernelFacts, ValueIndex]] = []


def value_index(f: KernelFacts) -> ValueIndex:
    """The index of the kernel's values (the last two kernels' are kept: detectors ask of one
    kernel at a time)."""
    for g, index in _INDEX:
        if g is f:
            return index
    index = ValueIndex(f)
    _INDEX.append((f, index))
    del _INDEX[:-2]
    return index


def containing(f: KernelFacts, pred: Callable[[E], object], heads: set[str] | frozenset[str]) -> list:
    """The kept values (their records, in kernel order) that hold an operator or call node whose
    head is one of ``heads`` and that satisfies ``pred``."""
    index = value_index(f)
    hits = [n for head in heads for n in index.by_head.get(head, ()) if pred(n)]
    return [index.records[i][0] for i in sorted(index.holders(hits))] if hits else []


def holds(f: KernelFacts, pred: Callable[[E], object], heads: set[str] | frozenset[str]) -> bool:
    """Whether some kept value holds an operator or call node whose head is one of ``heads``
    and that satisfies ``pred``: a cheap test, each distinct node once, before a detector's
    own walk of every value (which visits shared nodes once per value holding them)."""
    index = value_index(f)
    return any(pred(n) for head in heads for n in index.by_head.get(head, ()))


def _exps(e: E) -> list[Call]:
    return [n for n in walk(e) if _fn(n, EXP)]  # type: ignore[misc]


# Library functors that make a generic reduction a maximum: cub::BlockReduce(...).Reduce(x,
# cub::Max()), cg::reduce(group, x, cg::greater<float>()), ::cuda::maximum{}.
MAX_FUNCTORS = {"cub.Max", "cuda.maximum", "cuda.std.maximum", "thrust.maximum", "cg.greater", "cooperative_groups.greater"}
_has_max_functor = subtree_has(lambda m: type(m) is Call and m.fn.removeprefix("ctor:").split("<")[0] in MAX_FUNCTORS)


def _is_max_like(f: KernelFacts, e: E) -> bool:
    if isinstance(e, Op) and e.op == "*":  # a maximum with a scale folded in (log2(e) · softmax scale)
        rest = [t for t in flatten("*", e) if num(t) is None]
        if len(rest) == 1:
            e = rest[0]
    if isinstance(e, Op) and e.op == "max":
        return True
    if isinstance(e, Call) and short(e.fn) in ("row_max", "col_max"):
        return True
    if isinstance(e, Call) and short(e.fn) in ("max", "reduce_max", "warp_max") and e.fn.startswith(("tl.", "cg.")):
        return True
    if isinstance(e, Call) and short(e.fn) in ("Reduce", "reduce", "AllReduce") and any(_has_max_functor(a) for a in e.args):
        return True
    if isinstance(e, Sym) and e.key.startswith(("carried#", "phi#")):
        from ..detectors._queries import cell_of, defs_of

        c = cell_of(e)
        return c is not None and any(d.new != e and _is_max_like(f, d.new) for d in defs_of(f, c) if not isinstance(d.new, Sym))
    return False


def softmax(f: KernelFacts) -> list:
    """exp(x - m) with m a maximum (elementwise max, tl.max, a running/shuffled max). Asked by
    two detectors (kernel_fusion, split_kv): found once per kernel."""
    found = f.cache.get("ops.softmax")
    if found is None:
        found = f.cache["ops.softmax"] = _softmax(f)
    return found


def _softmax(f: KernelFacts) -> list:
    def shifted_exp(x: E) -> bool:
        return _fn(x, EXP) and any(isinstance(n, Op) and n.op == "-" and len(n.args) == 2 and
                                   (_is_max_like(f, n.args[1]) or _renormalised_scores(n.args[0], n.args[1])) for n in walk(x))

    return containing(f, shifted_exp, EXP)


def _renormalised_scores(scores: E, normaliser: E) -> bool:
    """``exp(q.k - lse)``: scores of a matrix product brought to probabilities by a log-sum-exp
    read back from memory (an attention backward recomputing P from the forward's normaliser)."""
    stored = source_load(normaliser) or source_load(without_constant_scale(normaliser))
    return stored is not None and any(type(n) is Call and short(n.fn) in ("dot", "mma", "mma_sync") for n in walk(scores))


def without_constant_scale(e: E) -> E:
    """``l * log2e`` -> ``l``: a folded constant (log2(e), a softmax scale) does not change which
    value it is."""
    if isinstance(e, Op) and e.op == "*":
        rest = [t for t in flatten("*", e) if num(t) is None]
        if len(rest) == 1:
            return rest[0]
    return e


def normalization(f: KernelFacts) -> list:
    """x · rsqrt(s + eps) or (x - mean) / sqrt(s + eps): a row statistic rescaling the data. A
    function the analyzer cannot see (``rsqrt = find_op(...)`` made at run time) counts when
    what it is applied to is the formula's: a reduction of the data plus an epsilon."""
    return containing(f, _is_normalizer, RSQRT | {"/", "fdiv", UNKNOWN_CALLEE})


def _is_normalizer(n: E) -> bool:
    if _unknown_of_statistic(n):
        return True  # f(s + eps), f unseen: multiplied by it, the data is normalised
    if isinstance(n, Op) and n.op in ("/", "fdiv") and _unknown_of_statistic(n.args[1]):
        return True  # x / f(s + eps)
    inverse = _fn(n, RSQRT) or (isinstance(n, Op) and n.op in ("/", "fdiv") and _fn(n.args[1], SQRT))
    if not inverse:
        return False
    root = n if _fn(n, RSQRT) else n.args[1]  # type: ignore[union-attr]
    # an epsilon added, or a statistic reduced over the data (``rsqrt(E[x^2] - mean^2)`` of a block
    # reduction, with no epsilon at all)
    return any(isinstance(m, Op) and m.op == "+" and any(_epsilon(t) for t in m.args) for m in walk(n)) \
        or any(_reduces_data(a) for a in getattr(root, "args", ()))


def _unknown_of_statistic(e: E) -> bool:
    """A function the analyzer cannot see applied to a reduction of the data plus an epsilon."""
    return type(e) is Call and e.fn == UNKNOWN_CALLEE and len(e.args) == 1 and _statistic_plus_epsilon(e.args[0])


def _statistic_plus_epsilon(e: E) -> bool:
    """``s + eps`` with ``s`` a reduction over the data (a ``tl.sum``, a shuffle, or a
    loop-carried accumulator) and ``eps`` a small constant or a parameter."""
    terms = flatten("+", e)
    return any(_epsilon(t) for t in terms) and any(_reduces_data(t) for t in terms if not _epsilon(t))


def _reduces_data(e: E) -> bool:
    """A reduction: a sum, shuffle or block-reduce call (cub's ``BlockReduce(...).Reduce``), or a
    value accumulated round a loop."""
    return any((isinstance(n, Call) and (short(n.fn).startswith("__shfl") or short(n.fn).lower() in ("sum", "reduce", "allreduce")))
               or (isinstance(n, Sym) and n.key.startswith("carried#")) for n in walk(e))


def _epsilon(t: E) -> bool:
    """A small positive constant, or a value the caller passes in (an ``eps`` parameter)."""
    v = num(t)
    return (isinstance(v, float) and 0 < v < 1e-2) or (isinstance(t, Sym) and t.key.startswith(("param#", "cexpr#")))


def _sigmoid_of(e: E) -> E | None:
    """The argument x of 1 / (1 + exp(-x)), x / (1 + exp(-x)) (SiLU), or tl.sigmoid(x)."""
    if _fn(e, SIGMOID):
        return e.args[0] if e.args else None  # type: ignore[union-attr]
    if isinstance(e, Op) and e.op in ("/", "fdiv"):
        den = e.args[1]
        for t in flatten("+", den):
            if _fn(t, EXP) and t.args and (x := _negated(t.args[0])) is not None:  # type: ignore[union-attr]
                return x
    if isinstance(e, Call) and short(e.fn) in RECIPROCAL:
        return _sigmoid_of(Op("/", (Num(1),) + e.args[-1:]))
    return None


def activations(f: KernelFacts) -> list:
    """SiLU / sigmoid, GELU (erf or tanh forms), tanh, ReLU / leaky ReLU, softplus."""
    return containing(f, _is_activation, ACTIVATION_HEADS | {"*"})


# The tanh approximation of GELU, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), is known by its
# cubic coefficient whatever computes the tanh (a library call, a project helper the analyzer
# cannot see into, or exp arithmetic): a product of elementwise data that holds 0.044715.
GELU_CUBIC = 0.044715
_has_gelu_cubic = subtree_has(lambda m: type(m) is Num and isinstance(m.v, float) and abs(m.v - GELU_CUBIC) < 1e-7)


def _gelu_tanh_argument(n: E) -> bool:
    return type(n) is Op and n.op == "*" and _has_gelu_cubic(n) and _elementwise_data(n)


def _is_activation(n: E) -> bool:
    if _sigmoid_of(n) is not None or _fn(n, TANH) or _fn(n, ERF) or _fn(n, {"gelu", "silu", "relu"}):
        return True
    if _gelu_tanh_argument(n):
        return True
    if isinstance(n, Op) and n.op == "max" and any(num(a) == 0 for a in n.args) and any(_elementwise_data(a) for a in n.args if num(a) != 0):
        return True  # ReLU of data (not a clamp of an index or of a statistic)
    if isinstance(n, Op) and n.op == "?:" and isinstance(n.args[0], Op) and n.args[0].op in (">", ">=", "<", "<=") and \
            any(num(a) == 0 for a in n.args[0].args) and (num(n.args[2]) == 0 or num(n.args[1]) == 0 or _scaled(n.args[2], n.args[1])):
        return True  # (leaky) ReLU as a select
    # softplus: log(1 + exp(x))
    return bool(_fn(n, LOG) and n.args and any(_fn(t, EXP) for t in flatten("+", n.args[0])) and any(num(t) == 1 for t in flatten("+", n.args[0])))  # type: ignore[union-attr]


def _elementwise_data(e: E) -> bool:
    """A value computed elementwise from loaded data: it reads memory and involves no reduction
    (no shuffle, no tl.sum/max, no loop-carried running value)."""
    if not any(isinstance(n, Load) for n in walk(e)):
        return False
    for n in walk(e):
        if isinstance(n, Call) and (short(n.fn).startswith("__shfl") or (n.fn.startswith("tl.") and short(n.fn) in ("sum", "max", "min", "reduce"))):
            return False
        if isinstance(n, Sym) and n.key.startswith(("carried#", "phi#")):
            return False
    return True


def _scaled(a: E, b: E) -> bool:
    return isinstance(a, Op) and a.op == "*" and b in a.args


def gated(f: KernelFacts) -> list:
    """act(a) · b with a and b read from different places (SwiGLU / GeGLU)."""
    if not holds(f, _is_activation_node, ACTIVATION_HEADS | {"*"}):
        return []  # no activation anywhere in the kept values: no product can gate one

    def gate(n: E) -> bool:
        if not (isinstance(n, Op) and n.op == "*"):
            return False
        fs = flatten("*", n)
        # a factor merged at a join (``act(x)`` chosen among several activations by a constexpr
        # the launch does not fix) stands for each value it merges
        acts = [x for x in fs if _has_activation(x)] or [x for x in fs if any(map(_has_activation, _merged_values(f, x)))]
        if not acts:
            return False
        act_src = [l for v in (acts[0], *_merged_values(f, acts[0])) for l in walk(v) if isinstance(l, Load)]
        others = [l for x in fs if x is not acts[0] for l in walk(x) if isinstance(l, Load)]
        if act_src and any(all(_different(f, o, s) for s in act_src) for o in others):
            return True
        # a factor computed from other inputs (``out *= z * sigmoid(z)`` with ``out`` a reduction
        # of other tensors, merged by a run-time flag): its merged symbol names what it read. The
        # activation's input may itself be a load through a pointer the flag chose (no object).
        read = {s.obj for s in act_src} | {o for n in walk(acts[0]) if type(n) is Sym for o in _objects_of(n)}
        loads_data = act_src or any(type(n) is Sym and "load:global" in n.deps for n in walk(acts[0]))
        return bool(loads_data) and any(_reads_global(x, read) for x in fs if x is not acts[0])

    return containing(f, gate, {"*"})


def _merged_values(f: KernelFacts, e: E) -> list[E]:
    """The values assigned to the cell a merged symbol stands for (one level: the arms of the
    join); none for any other value."""
    from ..detectors._queries import cell_of, defs_of

    c = cell_of(e)
    return [d.new for d in defs_of(f, c) if d.new is not None and d.new != e] if c is not None else []


def _is_activation_node(m: E) -> bool:
    return _sigmoid_of(m) is not None or _fn(m, TANH) or _fn(m, ERF) or _gelu_tanh_argument(m)


_has_activation = subtree_has(_is_activation_node)


def _different(f: KernelFacts, a: Load, b: Load) -> bool:
    if a.obj != b.obj:
        return True
    return f.accesses[a.access].poly != f.accesses[b.access].poly


def _negated(a: E) -> E | None:
    """x of -x, or of -x scaled by a positive constant (exp2(-x * log2 e) is exp(-x)), or of x
    scaled by a negative constant; a conversion around it (``expf(float(-x))``) is no change."""
    if isinstance(a, Cast):
        return _negated(a.arg)
    if isinstance(a, Op) and a.op == "neg":
        return a.args[0]
    if not (isinstance(a, Op) and a.op == "*"):
        return None
    factors = flatten("*", a)
    consts = [num(t) for t in factors if isinstance(num(t), (int, float))]
    rest = [t for t in factors if not isinstance(num(t), (int, float))]
    given = [t for t in rest if isinstance(t, Sym) and t.key.startswith(("param#", "cexpr#"))]
    if len(rest) - len(given) == 1 and given and not consts:
        # ``exp(-x * beta)``: a swish whose slope the caller passes is still a sigmoid of x
        core = next(t for t in rest if t not in given)
        return core.args[0] if isinstance(core, Op) and core.op == "neg" else None
    if len(rest) != 1 or not consts:
        return None
    negative = sum(1 for c in consts if c < 0) % 2 == 1
    if isinstance(rest[0], Op) and rest[0].op == "neg":
        return rest[0].args[0] if not negative else None
    return rest[0] if negative else None


def elementwise_add(f: KernelFacts) -> list:
    """x + y of two tensors read from different global objects (a residual or bias add), also
    when each was first unpacked into a local array (``unpack8(xv[v], a); ... a[e] + b[e]``)."""
    if len({a.obj for a in f.accesses if a.space == "global"}) < 2:
        return []  # every load is an access: fewer than two global objects cannot be two inputs
    return containing(f, lambda n: _adds_two_inputs(f, n), {"+"})


def _adds_two_inputs(f: KernelFacts, n: E) -> bool:
    if not (isinstance(n, Op) and n.op == "+"):
        return False
    srcs = [_input_load(f, t) for t in n.args]
    return len({s.obj for s in srcs if s is not None and s.space == "global"}) >= 2


def _input_load(f: KernelFacts, e: E) -> Load | None:
    """The global load behind ``e``: through conversions and vector components, and through a
    local array every element of which was unpacked from one global object."""
    src = _component_load(e)
    if src is None or src.space != "local":
        return src
    key = ("ops.filled", src.obj, src.access)
    if key not in f.cache:
        f.cache[key] = _filled_from(f, src.obj, src.access)
    return f.cache[key]


def _filled_from(f: KernelFacts, obj: int, at: int) -> Load | None:
    """The global load a local array holds where access ``at`` reads it, when every store that can
    reach that read is a conversion of a load of one global object. The stores that reach it are
    the earlier ones (the interpreter numbers accesses in program order) and those in a loop
    around the read; a buffer refilled later from another tensor (``copy(&gamma[i], buf)`` after
    ``buf`` held the skip input) does not change what the earlier read sees. A store that updates
    the array from its own elements (``x[i] += r[i]``: a residual added in place) does not change
    where it was filled from."""
    read = f.accesses[at] if 0 <= at < len(f.accesses) else None
    loops = set(read.loops) if read is not None else set()
    loads = []
    for a in f.accesses:
        if a.obj != obj or a.space != "local" or a.kind not in ("store", "rmw"):
            continue
        if read is not None and a.id > read.id and not loops & set(a.loops):
            continue  # written after this read, and no loop brings it round
        if a.value is not None and any(type(n) is Load and n.obj == a.obj for n in walk(a.value)):
            continue
        loads.append(_component_load(a.value) if a.value is not None else None)
    if loads and all(g is not None and g.space == "global" for g in loads) and len({g.obj for g in loads}) == 1:
        return loads[0]
    return None


def source_load(e: E) -> Load | None:
    """A load reached through conversions only (``float(x[i])``, ``Tcompute(x[i])``,
    ``x.to(tl.float32)``)."""
    while True:
        if isinstance(e, Cast):
            e = e.arg
        elif isinstance(e, Call) and e.fn == "()" and len(e.args) == 2 and isinstance(e.args[0], TypeRef):
            e = e.args[1]  # a functional cast to a (resolved) type: T(x)
        elif isinstance(e, Call) and e.fn.startswith("ctor:") and len(e.args) == 1:
            e = e.args[0]  # a value built from one other, ``T const w(x[i]);``: a conversion
        elif isinstance(e, Call) and short(e.fn) in ("to", "__half2float", "__bfloat162float", "float", "to_float"):
            e = e.args[0] if e.args else Num(0)
        else:
            return e if isinstance(e, Load) else None


def residual_add(f: KernelFacts) -> list:
    """A tensor read at the output's own element, added to a value computed from other inputs and
    stored there (``y = f(x) + r``, a residual or a residual branch's gradient added after the
    operation). A bias or a norm's affine shift is read per column, not at the output's element;
    an in-place ``C += ...`` reads the output itself: neither is this."""
    return _stores_adding(f, lambda load, store: not P.add(load.poly, store.poly, -1))


def bias_vector_add(f: KernelFacts) -> list:
    """A vector broadcast over the output and added to it (``y[r, c] = t[r, c] + b[c]``): an
    addend loaded from a kernel argument at a subset of the output's coordinates (its offset
    reads only index atoms the store's offset reads, and is not the same element), next to
    another input. A linear layer's bias added in an epilogue kernel: its own operation beside a
    residual add or an activation."""
    return _stores_adding(f, lambda load, store: bool(P.add(load.poly, store.poly, -1)) and atoms(load.off) < atoms(store.off))


def _stores_adding(f: KernelFacts, placed: Callable[[Access, Access], bool]) -> list:
    """Global stores into a kernel argument whose value adds a load of another kernel argument,
    read where ``placed(load, store)`` says (an optional input, ``b ? b[c] : 0``, counts as its
    load), to terms computed from other global data. Kernel arguments, not registers
    reinterpreted as pairs; never the output itself (an in-place ``C += ...``)."""
    def tensor(obj: int) -> bool:
        return f.objects[obj].origin.startswith("param#") if obj in f.objects else False

    def adds(store: Access, n: E) -> bool:
        if type(n) is not Op or n.op != "+":
            return False
        terms = flatten("+", n)
        for t in terms:
            src = _component_load(_unless_absent(t))
            if src is None or src.space != "global" or src.obj == store.obj or not tensor(src.obj):
                continue
            if not placed(f.accesses[src.access], store):
                continue
            if any(_reads_global(u, {src.obj, store.obj}) for u in terms if u is not t):
                return True
        return False

    return [st for st in f.accesses if st.space == "global" and st.kind == "store" and st.value is not None
            and tensor(st.obj) and any(adds(st, n) for n in operators(st.value))]


def _unless_absent(e: E) -> E:
    """``b == nullptr ? 0 : b[c]``: an optional input, the load when it is given."""
    if isinstance(e, Cast):
        return Cast(e.type, _unless_absent(e.arg))
    if isinstance(e, Op) and e.op == "?:" and len(e.args) == 3:
        zero = [x for x in e.args[1:] if num(_uncast(x)) == 0]
        given = [x for x in e.args[1:] if x not in zero]
        if len(given) == 1 and zero:
            return given[0]
    return e


def _uncast(e: E) -> E:
    """``(T)0.0f``, ``T(0.0f)``: the value under its conversions."""
    while True:
        if isinstance(e, Cast):
            e = e.arg
        elif isinstance(e, Call) and e.fn == "()" and len(e.args) == 2 and isinstance(e.args[0], TypeRef):
            e = e.args[1]
        else:
            return e


_INTEGER_ELEMENT = re.compile(r"\b(u?int(8|16|32)_t|(unsigned )?(char|int)|char[24]|int[24]|u?char4|u?int4)\b")


def integer_dequant(f: KernelFacts) -> list:
    """Integers read from memory (an int8 / int32 GEMM output) converted to floating point and
    multiplied by a scale that is not a constant: dequantisation, an operation of its own."""
    def scaled(n: E) -> bool:
        if type(n) is not Op or n.op != "*":
            return False
        factors = flatten("*", n)
        ints = [x for x in factors if isinstance(x, Cast) and _integer_load(f, x.arg)]
        return bool(ints) and any(x not in ints and num(x) is None for x in factors)
    return containing(f, scaled, {"*"})[:1]


def _integer_load(f: KernelFacts, e: E) -> bool:
    src = _component_load(e)
    if src is None or src.space != "global" or src.access >= len(f.accesses):
        return False
    return bool(_INTEGER_ELEMENT.search(f.accesses[src.access].elem))


PAIR_CONVERSIONS = {"__bfloat1622float2", "__half22float2", "__nv_cvt_bfloat162_float2"}


def _component_load(e: E) -> Load | None:
    """A load reached through conversions or a vector component (``r4.x`` of ``float4 r4 = R[i]``,
    ``__bfloat1622float2(p[k]).y``)."""
    if isinstance(e, Attr) and e.name in ("x", "y", "z", "w"):
        e = e.base
        if isinstance(e, Call) and short(e.fn) in PAIR_CONVERSIONS and e.args:
            e = e.args[0]
    return source_load(e)


def _reads_global(e: E, exclude: set[int]) -> bool:
    """Whether ``e`` is computed from a global object other than ``exclude`` (directly or through a
    merged local whose dependencies say so)."""
    for n in walk(e):
        if type(n) is Load and n.space == "global" and n.obj not in exclude:
            return True
        if type(n) is Sym and "load:global" in n.deps and _objects_of(n) - exclude:
            return True
    return False


def _objects_of(sym: Sym) -> set[int]:
    """The memory objects a merged or opaque symbol says it read (its ``obj#<id>`` dependencies)."""
    return {int(d[4:]) for d in sym.deps if d.startswith("obj#") and d[4:].isdigit()}


QUANT_LIMITS = {127.0, 128.0, 255.0, 7.0, 8.0, 15.0, 448.0, 57344.0}
ROUNDING = {"floorf", "floor", "roundf", "round", "rintf", "rint", "nearbyintf", "nearbyint", "lrintf", "llrintf",
            "__float2int_rn", "__float2uint_rn", "__float2int_rz", "__float2char_rz", "__float2uchar_rz"}


def quantization(f: KernelFacts) -> list:
    """A value rounded to an integer grid and clamped to a low-bit range (``min(max(round(x /
    scale), -127), 127)``, 0..255, the int4 or fp8 limits): quantisation is its own operation,
    and fused after a norm or an activation it saves writing the wide result."""
    return containing(f, _is_quantize, {"min", "max", "?:", "clamp", "tl.clamp"})


def _is_quantize(n: E) -> bool:
    """A clamp (``min``/``max``, ``clamp``, or ``v > 127 ? 127 : v``) with a low-bit limit on one
    side and a rounded value on the other."""
    if not isinstance(n, (Op, Call)):
        return False
    sides = n.args[1:] if isinstance(n, Op) and n.op == "?:" else n.args
    if not any(isinstance(a, Num) and isinstance(a.v, (int, float)) and abs(float(a.v)) in QUANT_LIMITS for a in sides):
        return False
    return any(_fn(m, ROUNDING) and m.args and not isinstance(m.args[0], Num) for a in sides for m in walk(a))


def masking(f: KernelFacts) -> list:
    """Scores replaced by -inf / a large negative where a position condition holds (a causal or
    window mask compares two positions) or where a loaded mask says so; a bounds guard that
    compares an index with a size is not a mask."""
    return containing(f, _is_mask_select, {"?:"})


def _is_mask_select(n: E) -> bool:
    return isinstance(n, Op) and n.op == "?:" and any(isinstance(num(a), float) and (num(a) <= NEG_LARGE) for a in n.args[1:]) and \
        (_positional(n.args[0]) or any(isinstance(m, Load) for m in walk(n.args[0])))


def _guarded_masks(f: KernelFacts) -> list:
    """``if (col > row) s = -INFINITY;``: a large negative assigned under a positional (or loaded)
    condition; the branch merges into a phi, so the ``?:`` form never appears."""
    out = []
    for a in f.assigns:
        v = num(a.new)
        if isinstance(v, float) and v <= NEG_LARGE and any(_positional(g) or any(isinstance(m, Load) for m in walk(g)) for g in a.guards):
            out.append(a)
    return out


def _zeroed_probabilities(f: KernelFacts) -> list:
    """``p[col] = col <= row ? exp(x - m) : 0``: a mask applied after the exponential, as a zero
    stored where a position condition holds to the same memory that receives exp values."""
    exp_objs = {a.obj for a in f.accesses if a.kind == "store" and a.value is not None and any(_fn(m, EXP) for m in walk(a.value))}
    return [a for a in f.accesses if a.kind == "store" and a.obj in exp_objs and a.value is not None and _zero(a.value)
            and any(_positional(g) for g in a.guards)][:1]


def _zero(v: E) -> bool:
    """0, or 0 converted to the element type (``T(0)``, ``(half)0``, ``__float2half(0.f)``)."""
    if num(v) == 0:
        return True
    if isinstance(v, Cast):
        return _zero(v.arg)
    if isinstance(v, Call) and v.args and all(isinstance(a, TypeRef) or num(a) == 0 for a in v.args):
        return any(num(a) == 0 for a in v.args)
    return False


def _positional(cond: E) -> bool:
    """A comparison of two positions (both sides depend on block / thread / arange indices)."""
    for n in walk(cond):
        if isinstance(n, Op) and n.op in ("<", "<=", ">", ">=") and len(n.args) == 2:
            sides = [atoms(a) for a in n.args]
            if all(any(k.startswith(("pid.", "bid.", "tid.", "arange", "iter#", "lane", "warp")) for k in side) for side in sides):
                return True
    return False


def loss(f: KernelFacts) -> list:
    """log of a sum of exponentials next to a value gathered at an index read from memory."""
    gathers = [a for a in f.accesses if a.kind == "load" and _reads_memory(a.off)]
    if not gathers:
        return []
    hits = containing(f, _is_log, LOG)[:1]  # the first kept value holding a log
    return hits + gathers[:1] if hits else []


def _is_log(n: E) -> bool:
    return _fn(n, LOG)


_reads_memory = subtree_has(lambda n: type(n) is Load)


def gradient(f: KernelFacts) -> list:
    """The softmax cross-entropy gradient stored: a value made of ``exp(...)`` (the probability)
    and a one-hot test of a position against an index read from memory (``p - (col == target)``)."""
    from ..detectors._queries import expand

    hits = []
    for a in f.accesses:
        if a.kind != "store" or a.value is None:
            continue
        # a value merged at a join (``g = g * dtanh`` under a run-time flag, twice over for two
        # flags) stands for its arms, also where it is only a factor of what is stored
        for v in expand(f, a.value, depth=2):
            if _exps(v) and _one_hot_test(v):
                hits.append(a)
                break
    return hits


def _one_hot_test(e: E) -> bool:
    """``col == target`` (or ``col != target``, its other arm): a moving position compared with
    an index read from memory."""
    for n in walk(e):
        if isinstance(n, Op) and n.op in ("==", "!=") and len(n.args) == 2:
            sides = [any(isinstance(m, Load) for m in walk(x)) for x in n.args]
            moving = [any(k.startswith(("arange", "tid.", "iter#", "lane")) for k in atoms(x)) for x in n.args]
            if (sides[0] and moving[1]) or (sides[1] and moving[0]):
                return True
    return False


def bias_add(f: KernelFacts) -> list:
    """A GEMM result plus another input tensor (bias, residual) before it is stored."""
    from ..detectors._queries import mac_updates

    results = {a.cell for a in mac_updates(f) if a.cell is not None}
    # the locals holding a dot result, read off the kernel's node index (each dot node once)
    results |= {a.cell for a in containing(f, _is_dot, {"dot"}) if isinstance(a, Assignment) and a.cell is not None}
    if not results and not any(c.short == "dot" for c in f.calls):
        return []  # no GEMM result to add a bias to

    def adds_input_to_result(n: E) -> bool:
        if not (isinstance(n, Op) and n.op == "+" and len(n.args) >= 2):
            return False
        loads = [t for t in n.args if source_load(t) is not None and source_load(t).space == "global"]  # type: ignore[union-attr]
        return bool(loads) and any(has_within(t, is_gemm_node, seen) for t in n.args)

    seen: dict = {}  # GEMM-ness per node for this kernel's ``results``: the "+" nodes share operands
    is_gemm_node = _gemm_node(results)
    return containing(f, adds_input_to_result, {"+"})


def _is_dot(n: E) -> bool:
    return _fn(n, {"dot"})


def _gemm_node(cells: set) -> Callable[[E], bool]:
    """A node that is a dot or stands for one of ``cells`` (the locals holding a GEMM result)."""
    from ..detectors._queries import cell_of

    return lambda n: _is_dot(n) or cell_of(n) in cells


NIBBLE_MASKS = {0xF, 0xFF, 0x3, 0x7, 0xF0, 0x0F0F0F0F, 0x000F000F, 0x00F000F0, 0x3FF, 0x1F}


def dequantize(f: KernelFacts) -> list:
    """Packed low-bit weights unpacked from loaded integers: a bit field of loaded data
    (``(w >> s) & 0xF``), or PTX ``lop3``/``prmt`` bit tricks inside the kernel's loops (the
    magic-number int4 -> half conversion). Dequantisation is its own operation: fused into a
    GEMM it saves writing the dequantised matrix."""
    hits = containing(f, _is_bit_field_of_data, {"&"})
    if hits:
        return hits[:1]
    return [a for a in f.asm if a.loops and ("lop3" in a.text or "prmt" in a.text)][:1]


def _is_bit_field_of_data(n: E) -> bool:
    """``(w >> s) & 0xF``-shaped: a low-bit field of loaded data, its mask a nibble/byte constant,
    or a mask the caller passes in (``unpack_mask``, set from the bit width) applied to the data
    shifted by a position."""
    if not (isinstance(n, Op) and n.op == "&" and len(n.args) == 2) or not any(isinstance(m, Load) for a in n.args for m in walk(a)):
        return False
    if any(num(a) in NIBBLE_MASKS for a in n.args):
        return True
    shifted = [a for a in n.args if isinstance(a, Op) and a.op == ">>" and num(a.args[1]) != 0]
    given = [a for a in n.args if isinstance(a, Sym) and a.key.startswith(("param#", "cexpr#"))]
    return bool(shifted) and bool(given)


def dropout(f: KernelFacts) -> list:
    return [c for c in f.calls if c.short in RAND or "philox" in c.fn or "curand" in c.fn]


def _tile_softmax(f: KernelFacts) -> list:
    """Softmax written with a tile library's row operations (ThunderKittens ``row_max`` then
    ``exp2`` on the tile): the library's API names are the formula."""
    row_max = [c for c in f.calls if c.short in ("row_max", "row_reduce_max")]
    exps = [c for c in f.calls if c.short in EXP and c.call.args and not isinstance(c.call.args[0], Num)]
    return row_max[:1] + exps[:1] if row_max and exps else []


def contractions(f: KernelFacts) -> list:
    """Loop-free contractions: ``tl.sum(x * w, axis)`` over the product of two tensors loaded from
    different objects (a GEMV step of one program: a block of K against a block of weights).
    A sum of squares, or of one tensor's own terms, reads one object and is not one."""
    out = []
    for c in f.calls:
        if not (c.fn.startswith("tl.") and c.short == "sum" and c.call.args):
            continue
        for n in walk(c.call.args[0]):
            if isinstance(n, Op) and n.op == "*":
                factors = flatten("*", n)
                if any(_fn(m, EXP) for x in factors for m in walk(x)):
                    continue  # weights exp(m_i - max): a softmax weighting or a merge of partials
                objs = [objects_read(x) for x in factors]
                loaded = [o for o in objs if o]
                if len(loaded) >= 2 and len(set().union(*loaded)) >= 2 and not any(a & b for i, a in enumerate(loaded) for b in loaded[i + 1:]) \
                        and _different_index_sets(f, loaded):
                    out.append(c)
                    break
    return out


def _different_index_sets(f: KernelFacts, groups: list[set[int]]) -> bool:
    """The operands are indexed over different tile axes (a vector against a matrix: ``x[k]``
    against ``w[k, n]``). Two tensors of one shape multiplied element by element and summed over
    rows (a norm's weight gradient, ``sum(dy * x_hat)``) read the same axes: no contraction."""
    axes = []
    for group in groups:
        terms = {k for a in f.accesses if a.obj in group and a.kind == "load" for k in P.terms(a.poly) if k.startswith("arange#")}
        axes.append(frozenset(terms))
    return len(set(axes)) >= 2


def rotations(f: KernelFacts) -> list:
    """A rotary embedding: a stored value ``x0 * c - x1 * s`` (or ``x0 * s + x1 * c``) whose
    ``x0`` and ``x1`` are two different elements of one tensor and whose ``c`` and ``s`` come from
    other tensors (the cos/sin tables): each pair of features turned by a position's angle."""
    return [a for a in f.accesses if a.space == "global" and a.kind in ("store", "rmw") and a.value is not None and _rotated(f, a.value)]


def _rotated(f: KernelFacts, v: E) -> bool:
    if not (isinstance(v, Op) and v.op in ("+", "-") and len(v.args) == 2):
        return False
    pairs = []
    for t in v.args:
        t = t.args[0] if isinstance(t, Op) and t.op == "neg" else t
        if not (isinstance(t, Op) and t.op == "*" and len(t.args) == 2):
            return False
        loads = [source_load(x) for x in t.args]
        if any(l is None for l in loads):
            return False
        pairs.append(loads)
    (a0, a1), (b0, b1) = pairs
    for x0, c in ((a0, a1), (a1, a0)):
        for x1, s in ((b0, b1), (b1, b0)):
            if x0.obj == x1.obj and x0 != x1 and c.obj != x0.obj and s.obj != x0.obj and \
                    f.accesses[x0.access].poly != f.accesses[x1.access].poly:
                return True
    return False


def indexed_scatter(f: KernelFacts) -> list:
    """Stores whose address goes through an index read from memory (a block table, a slot
    mapping): writing into a paged cache or a routed buffer is its own operation beside what
    produced the value."""
    out = []
    for a in f.accesses:
        if a.space != "global" or a.kind != "store" or a.off is None:
            continue
        if any("load:global" in n.deps for n in walk(a.off) if isinstance(n, Sym)) or any(isinstance(n, Load) and n.space == "global" for n in walk(a.off)):
            out.append(a)
    return out


def objects_read(e: E) -> set[int]:
    """The memory objects a value reads: its loads, and those a merged symbol names."""
    out = {m.obj for m in walk(e) if isinstance(m, Load)}
    for m in walk(e):
        if isinstance(m, Sym):
            out |= {int(d[4:]) for d in m.deps if d.startswith("obj#") and d[4:].isdigit()}
    return out


def operations(f: KernelFacts) -> dict[str, list]:
    """Operation family -> evidence, for every family recognised in the kernel."""
    from ..detectors._queries import gemm_loops

    found = {
        "gemm": [f.loops[i] for i in gemm_loops(f)] or (contractions(f) if f.language == "triton" else []),
        "bias": bias_add(f),
        "softmax": softmax(f) or _tile_softmax(f),
        "norm": normalization(f),
        "activation": activations(f),
        "gated": gated(f),
        "add": elementwise_add(f),
        "mask": masking(f) or _guarded_masks(f) or _zeroed_probabilities(f),
        "gradient": gradient(f),
        "loss": loss(f),
        "dropout": dropout(f),
        "dequant": dequantize(f),
        "residual": residual_add(f),
        "bias_vector": bias_vector_add(f),
        "int_dequant": integer_dequant(f),
        "quant": quantization(f),
        "rotary": rotations(f),
        "scatter": indexed_scatter(f),
    }
    return {k: v for k, v in found.items() if v}


__all__ = ["operations", "atoms", "source_load"]
