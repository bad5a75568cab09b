"""What library names and calls mean to the interpreter: arithmetic folding, the launch geometry,
memory intrinsics (``__ldg``, atomics, ``cp.async``, ``tl.load``), loop shapes.

Only names the language or a library defines are interpreted here: they are facts about the
platform (``atomicAdd`` writes memory, ``threadIdx.x`` is the thread, ``tl.program_id(1)`` is
the second grid axis). A user's own names never reach this module; the interpreter resolves
them to values first.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

from . import poly as P
from .expr import Attr, Call, Cast, E, Lambda, Load, Name, Num, Op, Ptr, Str, Sym, Tup, TypeRef, atoms, num, order_key, short, walk
from .ir import Assign, Loc, Loop
from .kernel import CallFact, LoopFact
from .types import base_type, size_of

# --- arithmetic -----------------------------------------------------------------------------

_FOLD = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "%": lambda a, b: (a % b) if isinstance(a, int) and isinstance(b, int) else math.fmod(a, b),
    "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b, "&": lambda a, b: a & b, "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
    "//": lambda a, b: a // b, "fdiv": lambda a, b: a / b, "pow": lambda a, b: a ** b,
    "cdiv": lambda a, b: -(-a // b),
}
_COMMUTATIVE = {"+", "*", "&", "|", "^", "==", "!=", "min", "max", "and", "or"}
MAX_FOLD_INT = 1 << 62


def _div(a, b):
    if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b > 0) else -q  # C truncation
    return a / b


def binop(op: str, args: tuple[E, ...]) -> E:
    """Fold and lightly simplify ``op(args)`` (resolved operands)."""
    vals = [num(a) if not (isinstance(a, Num) and isinstance(a.v, bool)) else a.v for a in args]
    if op in ("and", "or"):
        return _logic(op, args)
    if op == "not":
        t = truth(args[0])
        return Num(not t) if t is not None else Op("not", args)
    if op == "neg":
        return Num(-vals[0]) if vals[0] is not None else Op("neg", args)
    if op == "~":
        return Num(~vals[0]) if isinstance(vals[0], int) else Op("~", args)
    if op == "?:":
        t = truth(args[0])
        if t is not None:
            return args[1] if t else args[2]
        return args[1] if args[1] == args[2] else Op("?:", args)
    if op in ("min", "max"):
        if all(v is not None for v in vals):
            return Num(min(vals) if op == "min" else max(vals))  # type: ignore[type-var]
        flat = []
        for a in args:
            flat += list(a.args) if isinstance(a, Op) and a.op == op else [a]
        uniq = tuple(dict.fromkeys(flat))
        return uniq[0] if len(uniq) == 1 else Op(op, tuple(sorted(uniq, key=order_key)))
    if len(args) == 2:
        a, b = args
        va, vb = vals
        if va is not None and vb is not None:
            try:
                if op == "/":
                    r = _div(va, vb)
                elif op in _FOLD:
                    r = _FOLD[op](va, vb)
                else:
                    r = None
                if r is not None and (not isinstance(r, int) or abs(r) < MAX_FOLD_INT):
                    return Num(r)
            except (ZeroDivisionError, ValueError, OverflowError, TypeError):
                pass
        if isinstance(a, Ptr) and op in ("+", "-") and not isinstance(b, Ptr):
            off = b if op == "+" else Op("neg", (b,))
            return Ptr(a.obj, a.elem, binop("+", (a.off, off)), ())
        if isinstance(b, Ptr) and op == "+":
            return Ptr(b.obj, b.elem, binop("+", (b.off, a)), ())
        if op == "+":
            if va == 0:
                return b
            if vb == 0:
                return a
        if op == "-" and vb == 0:
            return a
        if op == "*":
            if va == 1:
                return b
            if vb == 1:
                return a
            if va == 0 or vb == 0:
                return Num(0)
        if op in ("/", "//", "fdiv") and vb == 1:
            return a
    if op in _COMMUTATIVE and len(args) == 2:
        flat: list[E] = []
        for x in args:
            flat += list(x.args) if isinstance(x, Op) and x.op == op and op in ("+", "*", "min", "max") else [x]
        return Op(op, tuple(sorted(flat, key=order_key)))
    return Op(op, tuple(args))


def _logic(op: str, args: tuple[E, ...]) -> E:
    ts = [truth(a) for a in args]
    if op == "and":
        if any(t is False for t in ts):
            return Num(False)
        if all(t is True for t in ts):
            return Num(True)
        rest = tuple(a for a, t in zip(args, ts) if t is not True)
        return rest[0] if len(rest) == 1 else Op("and", rest)
    if any(t is True for t in ts):
        return Num(True)
    if all(t is False for t in ts):
        return Num(False)
    rest = tuple(a for a, t in zip(args, ts) if t is not False)
    return rest[0] if len(rest) == 1 else Op("or", rest)


def truth(e: E) -> bool | None:
    if isinstance(e, Num):
        return bool(e.v)
    if isinstance(e, (Ptr, Str)):
        return True
    return None


# --- loops ------------------------------------------------------------------------------------


def carried_value(value: E, cell_id: int, lid: int) -> E:
    """The value of a loop-carried local inside the loop. A pointer that is advanced in the loop
    keeps its object and the thread-dependent part of its offset (``A += BK`` still points into
    A at the same lanes); anything else becomes an opaque symbol of the loop."""
    sym = Sym(f"carried#{cell_id}@{lid}", atoms(value) | {f"iter#{lid}"})
    if isinstance(value, Ptr):
        return Ptr(value.obj, value.elem, binop("+", (value.off, sym)), value.shape)
    if isinstance(value, Call) and value.fn in ("tl.make_block_ptr", "tl.advance"):
        return Call("tl.advance", (value, sym))  # a block pointer advanced round the loop
    p = P.poly(value)
    if any(m == (k,) and c == 1 and k.startswith("param#") for m, c in p for k in m):  # Triton pointer tensor
        return binop("+", (value, sym))
    return sym


def step_of(interp, st: Assign, cell) -> tuple[E | None, str, E | None]:
    """(additive step, update kind, operand of a multiplicative update) of an induction update
    ``i += s`` / ``i = i + s`` / ``s >>= 1`` (operand 1) / ``k *= 2`` (operand 2)."""
    loc = st.loc
    if st.op in ("+=", "-="):
        v = interp.ev(st.value, loc)
        return (v if st.op == "+=" else binop("neg", (v,))), "add", None
    if st.op in (">>=", "<<=", "*=", "/="):
        kind = {">>=": "shr", "/=": "div"}.get(st.op, "mul")
        return None, kind, interp.ev(st.value, loc)
    if st.op == "=":
        new = interp.ev(st.value, loc)
        old = cell.value
        if isinstance(new, Op) and new.op == "+" and old in new.args:
            rest = [a for a in new.args if a != old]
            return (rest[0] if len(rest) == 1 else Op("+", tuple(rest))), "add", None
        if isinstance(new, Op) and new.op in (">>", "/", "//") and len(new.args) == 2 and new.args[0] == old:
            return None, "shr" if new.op == ">>" else "div", new.args[1]
        if isinstance(new, Op) and new.op in ("*", "<<") and old in new.args:
            rest = [a for a in new.args if a != old]
            return None, "mul", rest[0] if len(rest) == 1 else None
        d = P.add(P.poly(new), P.poly(old), -1)
        if P.constant_of(d) is not None or not P.mentions(d, "carried"):
            if not any(cell_key in k for k in P.terms(d) for cell_key in (f"carried#{cell.id}",)):
                return _from_poly(d), "add", None
        return None, "other", None
    return None, "other", None


def _from_poly(p: P.Poly) -> E:
    terms: list[E] = []
    for m, c in p:
        factors: list[E] = [Num(int(c) if c.denominator == 1 else float(c))] if c != 1 or not m else []
        for k in m:
            factors.append(P.opaque_expr(k) if k.startswith("~") and P.opaque_expr(k) is not None else Sym(k))
        terms.append(factors[0] if len(factors) == 1 else Op("*", tuple(factors)))
    if not terms:
        return Num(0)
    return terms[0] if len(terms) == 1 else Op("+", tuple(terms))


def loop_bound(cond: E, iter_key: str, fact: LoopFact) -> E | None:
    """The side of the loop condition that does not move with the iteration."""
    if isinstance(cond, Op) and cond.op == "and":
        for c in cond.args:
            b = loop_bound(c, iter_key, fact)
            if b is not None:
                return b
        return None
    if isinstance(cond, Op) and cond.op in ("<", "<=", ">", ">=", "!=") and len(cond.args) == 2:
        a, b = cond.args
        ka, kb = iter_key in atoms(a) or _ivar(a, fact), iter_key in atoms(b) or _ivar(b, fact)
        if ka and not kb:
            return Op("<=", (b,)) if cond.op in ("<=", ">=") and False else b
        if kb and not ka:
            return a
    return None


def _ivar(e: E, fact: LoopFact) -> bool:
    return any(a.startswith(("ivar#", "carried#")) and a.endswith(f"@{fact.id}") or a == f"ivar#{fact.id}" for a in atoms(e))


def trip_count(fact: LoopFact) -> int | None:
    s, b, st = num(fact.init), num(fact.bound), num(fact.step)
    if not all(isinstance(x, int) for x in (s, b, st)) or st == 0:
        return None
    n = -(-(b - s) // st) if st > 0 else -(-(s - b) // -st)  # type: ignore[operator]
    return max(int(n), 0)


def range_induction(interp, s: Loop, fact: LoopFact):
    """Python ``for v in range(a, b, s)`` / ``tl.range(...)`` / ``tl.static_range(...)``, and C++
    range-for (``for (auto& x : arr)``: no arithmetic induction)."""
    if s.var is None or s.iterable is None:
        return None
    it = s.iterable
    if not isinstance(it, Call) or short(it.fn) not in ("range", "static_range"):
        if isinstance(s.var, Name):
            cell = interp.lvalue_cell(s.var, s.loc, create=True)
            if cell is not None:
                fact.iterator = it.fn if isinstance(it, Call) else ""
                return cell, Sym(f"elem#{fact.id}", atoms(interp.ev(it, s.loc))), None
        return None
    fact.iterator = {"range": "range"}.get(it.fn, it.fn)
    args = [interp.ev(a, s.loc) for a in it.args]
    fact.kwargs = {k: interp.ev(v, s.loc) for k, v in it.kw}
    start, stop, step = Num(0), None, Num(1)
    if len(args) == 1:
        stop = args[0]
    elif len(args) >= 2:
        start, stop = args[0], args[1]
        if len(args) >= 3:
            step = args[2]
    if "step" in fact.kwargs:
        step = fact.kwargs["step"]
    fact.bound = stop
    fact.update = "add"
    if not isinstance(s.var, Name):
        return None
    cell = interp.lvalue_cell(s.var, s.loc, create=True)
    if cell is None:
        return None
    return cell, start, step


# --- names, attributes, casts -----------------------------------------------------------------

GEOMETRY_NAMES = {"warpSize": Num(32)}
SM_COUNT_ATTRS = {"multiProcessorCount", "multi_processor_count", "multiprocessor_count", "num_sms", "sm_count"}


def library_name(interp, ident: str) -> E:
    interp.lib_names.add(ident.replace("::", "."))
    if ident in GEOMETRY_NAMES:
        return GEOMETRY_NAMES[ident]
    if ident in ("cudaDevAttrMultiProcessorCount", "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"):
        return Sym("lib:sm_count_attr")
    if ident in LIBRARY_CONSTANTS:
        return Num(LIBRARY_CONSTANTS[ident])
    return Sym("lib:" + ident.replace("::", "."))


# values the CUDA / C headers give these names (math_constants.h, math.h, float.h)
LIBRARY_CONSTANTS = {
    "INFINITY": float("inf"), "HUGE_VALF": float("inf"), "HUGE_VAL": float("inf"),
    "CUDART_INF_F": float("inf"), "CUDART_INF": float("inf"),
    "FLT_MAX": 3.4028234663852886e38, "DBL_MAX": 1.7976931348623157e308,
    "CUDART_LOG2E_F": 1.4426950408889634, "M_LOG2E": 1.4426950408889634, "M_LN2": 0.6931471805599453,
}


def attribute(interp, base: E, name: str, loc: Loc) -> E:
    if name in SM_COUNT_ATTRS and (not isinstance(base, Sym) or not base.key.startswith("param#")):
        return Sym("sm_count")
    if isinstance(base, Tup) and name in ("shape",):
        return base
    if isinstance(base, Ptr):
        return Attr(interp.load(base, loc), name)  # p->field
    if isinstance(base, Call) and base.fn in ("torch.cuda.get_device_properties", "torch.cuda.get_device_capability") and name in SM_COUNT_ATTRS:
        return Sym("sm_count")
    if isinstance(base, Call) and VECTOR_MAKER.match(short(base.fn)) and name in VECTOR_FIELDS:
        i = VECTOR_FIELDS.index(name)  # make_uint2(a, b).y is b
        if i < len(base.args):
            return base.args[i]
    return Attr(base, name)


VECTOR_MAKER = re.compile(r"^make_(u?(char|short|int|long|longlong)|float|double|half|bfloat16)[234]$")
VECTOR_FIELDS = ("x", "y", "z", "w")


def cast(interp, type_: str, value: E) -> E:
    t = interp.resolve_type(type_)
    if "*" in t and isinstance(value, (Ptr,)):
        return Ptr(value.obj, base_type(t), _rescale(value, t, interp), ())
    if "*" in t and isinstance(value, (Sym, Attr, Load, Call)) and not (isinstance(value, Call) and value.fn == "__cvta_generic_to_shared"):
        p = interp.implicit_object(value)  # a pointer whose origin is not visible (a struct member, a loaded pointer)
        return Ptr(p.obj, base_type(t), p.off, ())
    if "*" in t and isinstance(value, Call) and value.fn == "__cvta_generic_to_shared":
        return value
    if "*" not in t and _INTEGER_TYPE.search(t):
        if isinstance(value, Num) and isinstance(value.v, (int, float)):
            return Num(int(value.v))
        if not isinstance(value, (Load, Call)):
            return value  # integer conversions do not change index arithmetic
    return Cast(t, value)


def _rescale(p: Ptr, new_type: str, interp) -> E:
    """A pointer's offset in units of the new element type (reinterpret_cast<float4*>(x + 4 * i))."""
    from .types import size_of

    old, new = size_of(p.elem, interp.int_of), size_of(new_type, interp.int_of)
    if old and new and old != new:
        if (old * 1) % new == 0:
            return binop("*", (p.off, Num(old // new)))
        q = P.poly(p.off)
        if all(c * old % new == 0 for _, c in q):
            return _from_poly(tuple((m, c * old / new) for m, c in q))
        if q and len(q) <= P.MAX_TERMS:
            # an exact byte offset in wider units: ``(half*)A + k * 32`` read as uint4 is ``k * 4``
            # per 16 bytes; fractional coefficients keep every index term visible
            return _from_poly(tuple((m, c * old / new) for m, c in q))
        return Op("rescale", (p.off, Num(old), Num(new)))
    return p.off


# --- calls --------------------------------------------------------------------------------------

MAX_FNS = {"max", "fmaxf", "fmax", "std.max", "__hmax", "__hmax2", "cuda.std.max", "tl.maximum", "maximum", "::max", "fmaxf16"}
MIN_FNS = {"min", "fminf", "fmin", "std.min", "__hmin", "__hmin2", "cuda.std.min", "tl.minimum", "minimum"}
ATOMICS = re.compile(r"^(atomic[A-Z]\w*|atomic_\w+|__atomic\w*|red_\w+|atomicAdd_block|atomicAdd_system)$")
LOAD_INTRINSICS = {"__ldg", "__ldcs", "__ldca", "__ldcg", "__ldlu", "__ldcv", "ldg", "__ldg_128"}
STORE_INTRINSICS = {"__stcs", "__stcg", "__stwt", "__stwb"}
ASYNC_COPIES = {"__pipeline_memcpy_async": (0, 1), "memcpy_async": None, "cuda.memcpy_async": None, "cooperative_groups.memcpy_async": None}
TILE_LOADS = {"load_async", "load_async_bulk"}  # tile-library TMA loads: destination tile first
HALF_ARITH = {"__hadd": "+", "__hadd2": "+", "__hsub": "-", "__hsub2": "-", "__hmul": "*", "__hmul2": "*", "__hdiv": "/", "__h2div": "/"}
DIV_FNS = {"__fdividef", "fdividef", "__fdiv_rn", "__fdiv_rz", "__div_rn", "div_rn", "fdiv"}
LANE_FNS = {"__lane_id", "lane_id", "laneid", "cutlass.arch.LaneId", "LaneId"}
WARP_FNS = {"canonical_warp_idx", "canonical_warp_idx_sync", "cutlass.canonical_warp_idx_sync", "cutlass.canonical_warp_idx", "__warp_id"}
WARPGROUP_FNS = {"canonical_warp_group_idx", "cutlass.canonical_warp_group_idx", "warpgroup_id", "warpgroup.groupid"}


def library_call(interp, e: Call, loc: Loc, base: E | None = None) -> E:
    from . import launches

    fn = _canonical(e.fn)
    if fn in launches.LAUNCHERS:
        return launches.record(interp, e, loc)
    if fn.startswith("ctor:"):
        interp.note_type(fn[5:])  # library types constructed as values (CuTe copy / MMA atoms)
    if base is not None:
        args = (base,) + tuple([interp.ev(a, loc) for a in e.args[1:]])  # lists first: no generator frames
    else:
        args = tuple([interp.ev(a, loc) for a in e.args])
    lambdas = [a for a in args if isinstance(a, Lambda)]
    if lambdas:  # code handed to a library (AT_DISPATCH_*, a launcher wrapper) runs: interpret it
        tb = {"scalar_t": TypeRef("|".join(dispatch_types(fn, args)))} if fn.startswith("AT_DISPATCH") else {}
        for lam in lambdas:
            interp.inline_lambda(lam, [], loc, tb)
    kw = tuple([(k, interp.ev(v, loc)) for k, v in e.kw]) if e.kw else ()
    targs = tuple([interp.resolve_typeref(t) if isinstance(t, TypeRef) else interp.ev(t, loc) for t in e.targs]) if e.targs else ()
    s = short(fn)
    if base is None and e.args and s in TILE_DST_OPS and _tile_library(fn):
        value = TILE_DST_OPS[s](args)
        if value is not None:  # ``warp::mul(dst, a, b)``: the destination gets the formula
            interp.assign_value(e.args[0], value, loc)
            return Num(0)
    if s == "sizeof" and len(args) == 1 and isinstance(args[0], Sym) and args[0].key.startswith("lib:") and interp.lang == "cuda":
        # ``sizeof(fp16_t)`` / ``sizeof(__half)`` parse as expressions when the grammar cannot tell
        # the name is a type: a name that is no variable and that the program aliases, or that
        # CUDA's headers define (a size the analyzer knows), is that type
        resolved = interp.resolve_type(args[0].key[4:])
        if resolved != args[0].key[4:] or size_of(resolved):
            args = (TypeRef(resolved),)
    if s == "sizeof" and len(args) == 1 and isinstance(args[0], TypeRef) and "|" not in args[0].name:
        size = size_of(args[0].name)
        if size:
            return Num(size)  # ``16 / sizeof(T)`` with T bound: a constant vector width
    if fn in MAX_FNS or s in ("fmaxf", "fmax", "__hmax"):
        return binop("max", args) if len(args) >= 2 else Op("max", args)
    if fn in MIN_FNS or s in ("fminf", "fmin", "__hmin"):
        return binop("min", args) if len(args) >= 2 else Op("min", args)
    if fn in ("tl.where", "where") and len(args) == 3:
        return binop("?:", args)
    if fn in ("tl.cdiv", "triton.cdiv", "cdiv", "div_up", "ceil_div") and len(args) == 2:
        return binop("cdiv", args)
    if fn == "float" and args and isinstance(args[0], Str):
        try:
            return Num(float(args[0].v))
        except ValueError:
            return args[0]
    if fn in ("int", "float", "tl.multiple_of", "tl.max_contiguous", "tl.max_constancy", "__builtin_assume_aligned", "tl.constexpr", "triton.language.constexpr") and args:
        return args[0]
    if fn == "abs" and args:
        return Op("abs", args[:1])
    if fn == "tl.cast" and len(args) >= 2:
        return cast(interp, _dtype_text(args[1]), args[0])
    # an imported module's ``program_id`` / ``num_programs`` (a project's thin wrapper over Triton's,
    # e.g. one that widens the id to int64) is read as Triton's own: its source is not in view
    wrapper = interp.lang == "triton" and "." in fn and not fn.startswith("tl.")
    if fn in ("tl.program_id", "triton.language.program_id") or (wrapper and s == "program_id"):
        axis = _axis(args, kw)
        return Sym(f"pid.{axis}")
    if fn in ("tl.num_programs",) or (wrapper and s == "num_programs"):
        return Sym(f"nprog.{_axis(args, kw)}")
    if fn == "tl.arange":
        return Sym(f"arange#{loc.line}.{len(interp.f.calls)}", frozenset({"arange"}))
    if fn in LANE_FNS:
        return Sym("lane")
    if fn in WARP_FNS:
        return Sym("warp")
    if fn in WARPGROUP_FNS:
        return Op("//", (Sym("warp"), Num(4)))
    call = Call(fn, args, kw, targs)
    interp.f.calls.append(CallFact(call, loc, tuple(interp.loops), tuple(interp.guards)))
    if s in DIV_FNS and len(args) == 2:
        return binop("/", args)  # __fdividef(a, b) is a / b (the call stays on record for fast_math)
    if s in HALF_ARITH and len(args) == 2:
        return binop(HALF_ARITH[s], args)  # __hadd2(a, b) is a + b on packed halves
    result = _memory_semantics(interp, call, loc)
    if result is not None:
        return result
    if fn == "cudaDeviceGetAttribute" and len(args) >= 2 and isinstance(e.args[0], Op) and e.args[0].op == "addr":
        cell = interp.lvalue_cell(e.args[0].args[0], loc)
        if cell is not None:
            interp.set_value(cell, Sym("sm_count") if args[1] == Sym("lib:sm_count_attr") else Sym("device_attr"))
    if fn in ("cudaOccupancyMaxActiveBlocksPerMultiprocessor", "cudaOccupancyMaxActiveClusters", "cuOccupancyMaxActiveBlocksPerMultiprocessor") and e.args and isinstance(e.args[0], Op) and e.args[0].op == "addr":
        cell = interp.lvalue_cell(e.args[0].args[0], loc)
        if cell is not None:
            interp.set_value(cell, Sym("occupancy"))
    if fn in ("cudaGetDeviceProperties",) and e.args and isinstance(e.args[0], Op) and e.args[0].op == "addr":
        cell = interp.lvalue_cell(e.args[0].args[0], loc)
        if cell is not None:
            interp.set_value(cell, Call("cudaDeviceProp"))
    if s in ("thread_rank",) and base is not None:
        return Sym("lane") if _is_warp_tile(base) else Sym("tid.x")
    if s in ("meta_group_rank",):
        return Sym("warp")
    if s in ("num_threads", "size") and base is not None and _is_warp_tile(base):
        return Num(32)
    if fn in ("tl.full", "tl.zeros", "tl.zeros_like", "tl.full_like") or s == "to" and base is not None:
        if s == "to" and base is not None and len(args) >= 2:
            return Cast(_dtype_text(args[1]), base)
    return call


DISPATCH_BASE = {
    "FLOATING_TYPES": ("float", "double"), "FLOATING_TYPES_AND_HALF": ("float", "double", "c10::Half"),
    "REDUCED_FLOATING_TYPES": ("c10::Half", "c10::BFloat16"), "ALL_TYPES": ("uint8_t", "int8_t", "int16_t", "int", "int64_t", "float", "double"),
    "INTEGRAL_TYPES": ("uint8_t", "int8_t", "int16_t", "int", "int64_t"),
}
SCALAR_TYPES = {"kHalf": "c10::Half", "Half": "c10::Half", "kBFloat16": "c10::BFloat16", "BFloat16": "c10::BFloat16",
                "kFloat": "float", "kDouble": "double", "kFloat8_e4m3fn": "c10::Float8_e4m3fn", "kBool": "bool"}


def dispatch_types(fn: str, args: tuple[E, ...]) -> list[str]:
    """The types ``scalar_t`` takes inside an ``AT_DISPATCH_*`` macro: the macro's base set plus
    the ScalarTypes named in its ``_AND<n>`` arguments (a fact of ATen's dispatch macros)."""
    stem = fn.split("AT_DISPATCH_", 1)[-1]
    stem = stem.rsplit("_AND", 1)[0] if stem.rsplit("_AND", 1)[-1].isdigit() else stem
    out = list(DISPATCH_BASE.get(stem, ("float",)))
    for a in args:
        if isinstance(a, Sym) and a.key.startswith("lib:"):
            t = SCALAR_TYPES.get(a.key[4:].split(".")[-1])
            if t and t not in out:
                out.append(t)
    return out


def _is_warp_tile(e: E) -> bool:
    return isinstance(e, Call) and short(e.fn) in ("tiled_partition",) and any(num(t) == 32 for t in e.targs + e.args[1:])


def _dtype_text(e: E) -> str:
    if isinstance(e, Sym) and e.key.startswith("lib:"):
        return e.key[4:]
    if isinstance(e, Attr):
        return e.name
    if isinstance(e, Call) and short(e.fn) == "pointer_type" and e.args:
        return f"pointer_type({_dtype_text(e.args[0])})"  # tl.pointer_type(tl.bfloat16)
    return repr(e)[:40]


def _axis(args, kw) -> int:
    v = args[0] if args else dict(kw).get("axis", Num(0))
    n = num(v)
    return int(n) if isinstance(n, int) else 0


def writes_first_argument(fn: str) -> bool:
    """A library call that stores its result into its first argument (tile-library ops)."""
    fn = _canonical(fn)
    return short(fn) in TILE_DST_OPS and _tile_library(fn)


def _tile_library(fn: str) -> bool:
    """A register/vector tile operation of a tile library (ThunderKittens' ``warp::`` /
    ``warpgroup::`` / ``group<N>::`` ops): destination first, then the operands."""
    parts = fn.split(".")[:-1]
    return any(p in ("warp", "warpgroup", "group", "kittens") or p.startswith("group<") for p in parts)


def _binary(op: str):
    return lambda a: Op(op, (a[1], a[2])) if len(a) >= 3 else None


def _unary(name: str):
    return lambda a: Call(name, (a[1],)) if len(a) >= 2 else None


def _row_reduce(op: str, name: str):
    """``row_max(dst, src[, acc])``: the row reduction of src, merged into acc when given."""
    return lambda a: (Op(op, (a[2], Call(name, (a[1],)))) if len(a) >= 3 else Call(name, (a[1],))) if len(a) >= 2 else None


TILE_DST_OPS = {
    "copy": lambda a: a[1] if len(a) >= 2 else None,
    "add": _binary("+"), "sub": _binary("-"), "mul": _binary("*"), "div": _binary("/"),
    "add_row": _binary("+"), "sub_row": _binary("-"), "mul_row": _binary("*"), "div_row": _binary("/"),
    "add_col": _binary("+"), "sub_col": _binary("-"), "mul_col": _binary("*"), "div_col": _binary("/"),
    "exp": _unary("exp"), "exp2": _unary("exp2"), "log": _unary("log"), "log2": _unary("log2"),
    "zero": lambda a: Num(0), "one": lambda a: Num(1),
    "neg_infty": lambda a: Num(float("-inf")), "pos_infty": lambda a: Num(float("inf")),
    "row_max": _row_reduce("max", "row_max"), "row_sum": _row_reduce("+", "row_sum"),
    "col_max": _row_reduce("max", "col_max"), "col_sum": _row_reduce("+", "col_sum"),
}


@lru_cache(maxsize=4096)
def _canonical(fn: str) -> str:
    fn = fn.replace("::", ".")
    for prefix in ("nvcuda.", "cooperative_groups.", "cute.", "cutlass.arch.", "std."):
        if fn.startswith(prefix) and prefix in ("nvcuda.",):
            return fn[len(prefix):]
    if fn.startswith("cooperative_groups."):
        return "cg." + fn[len("cooperative_groups."):]
    return fn


_INTEGER_TYPE = re.compile(r"\b(int|long|size_t|unsigned|int32_t|int64_t|uint32_t|uint64_t|short|char|int8_t|uint8_t|index_t|uintptr_t)\b")


def _memory_semantics(interp, call: Call, loc: Loc) -> E | None:
    """Record the accesses a memory intrinsic makes; return its value where it has one."""
    fn, s, args = call.fn, short(call.fn), call.args
    if (fn in LOAD_INTRINSICS or s in LOAD_INTRINSICS) and args:
        ptr = interp.as_ptr(args[0])
        return interp.load(ptr, loc, "api") if ptr is not None else None
    if (fn in STORE_INTRINSICS or s in STORE_INTRINSICS) and len(args) >= 2:
        ptr = interp.as_ptr(args[0])
        if ptr is not None:
            interp.record_access(ptr, "store", loc, value=args[1], via="api")
        return Num(0)
    if ATOMICS.match(s) and args and not fn.startswith("tl."):
        ptr = interp.as_ptr(args[0])
        if ptr is not None:
            interp.record_access(ptr, "atomic", loc, value=args[1] if len(args) > 1 else None, via="api")
        return Sym(f"atomic#{len(interp.f.accesses)}", atoms(args[1]) if len(args) > 1 else frozenset())
    if s in TILE_LOADS and args and isinstance(args[0], Load):
        dst = interp.f.accesses[args[0].access]  # load_async(tile, global, coords, barrier): the tile is written
        interp.record_access(Ptr(dst.obj, dst.elem, dst.off, ()), "store", loc, via="tma" if "tma" in fn else "async")
        return Num(0)
    if s in ("memcpy_async", "__pipeline_memcpy_async", "cp_async") and len(args) >= 2:
        dst_i = 1 if fn.startswith("cg.") and len(args) >= 3 else 0
        dst, src = interp.as_ptr(args[dst_i]), interp.as_ptr(args[dst_i + 1])
        if src is not None:
            interp.record_access(src, "load", loc, via="async")
        if dst is not None:
            interp.record_access(dst, "store", loc, via="async")
        return Num(0)
    if s in ("__cvta_generic_to_shared", "cvta_to_shared", "__cvta_generic_to_global", "smem_u32addr", "cast_smem_ptr_to_uint") and args:
        return _bytes(interp, args[0])
    if s in ("load_matrix_sync",) and len(args) >= 2:
        ptr = interp.as_ptr(args[1])
        if ptr is not None:
            interp.record_access(ptr, "load", loc, via="api")
        return None
    if s in ("store_matrix_sync",) and len(args) >= 1:
        ptr = interp.as_ptr(args[0])
        if ptr is not None:
            interp.record_access(ptr, "store", loc, value=args[1] if len(args) > 1 else None, via="api")
        return None
    if interp.lang == "triton" and (fn.startswith("tl.") or fn.startswith(".")):
        from .triton_memory import triton_memory

        return triton_memory(interp, call, loc)
    return None


# A plain (non-tensor) bulk copy or reduction between global and shared memory: its first operand
# is the destination, its second the source, in the order of the two state spaces it names.
_BULK_COPY = re.compile(r"\bcp(\.reduce)?\.async\.bulk\.(shared|global)\S*\s*\[\s*%(\d+)\s*\]\s*,\s*\[\s*%(\d+)\s*\]")


# A TMA tensor load, cp.async.bulk.tensor.<n>d.shared::cluster.global ... [dst], [tensor map,
# {coordinates}], [barrier]: its first operand is the shared destination; the source is a tensor
# map (no pointer to follow), so only the shared write is recorded.
_TENSOR_LOAD = re.compile(r"\bcp\.async\.bulk\.tensor\.\d+d\.shared::\w+\.global\S*\s*\[\s*%(\d+)\s*\]")


def asm_accesses(interp, s, inputs: list[E]) -> list[E]:
    """Loads/stores an inline-PTX statement makes through its operands: ``cp.async`` reads global
    and writes shared, ``ld.global``/``st.shared`` and friends read or write their address.
    Returns the values the statement's outputs receive, where the PTX defines them (a loaded
    element, an address conversion); empty otherwise."""
    text = s.text
    tensor = _TENSOR_LOAD.search(text)
    if tensor:
        dst = _operand_ptr(interp, inputs, int(tensor.group(1)) - len(s.outputs))
        if dst is not None:
            interp.record_access(dst, "store", s.loc, via="tma", elem="bulk")
        return []
    bulk = _BULK_COPY.search(text)
    if bulk:  # cp.async.bulk.<dst>.<src> [dst], [src], bytes ...: one thread moves a whole span
        dst = _operand_ptr(interp, inputs, int(bulk.group(3)) - len(s.outputs))
        src = _operand_ptr(interp, inputs, int(bulk.group(4)) - len(s.outputs))
        if src is not None:
            interp.record_access(src, "load", s.loc, via="tma", elem="bulk")
        if dst is not None:
            interp.record_access(dst, "rmw" if bulk.group(1) else "store", s.loc, via="tma", elem="bulk")
        return []
    if "cp.async" in text and "bulk" not in text:
        m = re.search(r"\[\s*%(\d+)\s*\]\s*,\s*\[\s*%(\d+)\s*\]\s*(?:,\s*(%\d+|\d+))?", text)
        if m:
            dst = _operand_ptr(interp, inputs, int(m.group(1)) - len(s.outputs))
            src = _operand_ptr(interp, inputs, int(m.group(2)) - len(s.outputs))
            nbytes = _asm_int(m.group(3), inputs, len(s.outputs))
            elem = f"asm{nbytes}" if nbytes in (4, 8, 16) else None  # the copy size: 16 bytes is a 128-bit move
            if src is not None:
                interp.record_access(src, "load", s.loc, via="async", elem=elem)
            if dst is not None:
                interp.record_access(dst, "store", s.loc, via="async", elem=elem)
        return []
    if re.search(r"\bcvta(\.to)?\.shared|\bcvta(\.to)?\.global", text) and len(s.outputs) == 1 and inputs:
        return [_bytes(interp, inputs[0])]  # an address space conversion keeps the address
    values: list[E] = []
    for m in re.finditer(r"\bldmatrix(?:\.\w+)*\s*([^;]*);|\bstmatrix(?:\.\w+)*\s*([^;]*);", text):
        operands = m.group(1) or m.group(2)
        addr = re.search(r"\[\s*%(\d+)", operands)
        ptr = _operand_ptr(interp, inputs, int(addr.group(1)) - len(s.outputs)) if addr else None
        if ptr is not None:
            acc = interp.record_access(ptr, "load" if m.group(1) else "store", s.loc, via="asm", elem="asm16")
            if m.group(1):
                values.append(Load(acc.obj, acc.space, acc.id))
    for m in re.finditer(r"\b(ld|st)\.(global|shared)((?:\.\w+)*)\s*([^;]*);", text):
        addr = re.search(r"\[\s*%(\d+)", m.group(4))
        if not addr:
            continue
        ptr = _operand_ptr(interp, inputs, int(addr.group(1)) - len(s.outputs))
        if ptr is None:
            continue
        width = re.search(r"\.v(\d)\.(?:[bfsu])(\d+)", m.group(0))
        scalar = re.search(r"\.(?:[bfsu])(\d+)\b", m.group(3))
        nbytes = int(width.group(1)) * int(width.group(2)) // 8 if width else (int(scalar.group(1)) // 8 if scalar else None)
        elem = f"asm{nbytes}" if nbytes else None
        acc = interp.record_access(ptr, "load" if m.group(1) == "ld" else "store", s.loc, via="asm", elem=elem)
        if m.group(1) == "ld":
            values.append(Load(acc.obj, acc.space, acc.id))
    return values


# Single-instruction PTX math whose result is a known function of its operand: the value an
# ``asm("ex2.approx.ftz.f32 %0, %1;" ...)`` output receives is exp2 of that input, whatever the
# helper around it is called.
_PTX_UNARY = {"ex2": "exp2", "lg2": "log2", "rsqrt": "rsqrt", "sqrt": "sqrt", "tanh": "tanh", "sin": "sin", "cos": "cos"}
_PTX_UNARY_RX = re.compile(r"^\s*(ex2|lg2|rsqrt|sqrt|tanh|sin|cos|rcp)\.(?:approx|rn|rz|rm|rp)(?:\.ftz)?\.(?:f16x2|bf16x2|f16|bf16|f32|f64)"
                           r"\s+%(\d+)\s*,\s*%(\d+)\s*;?\s*$")


# ``lop3.b32 d, a, b, c, LUT``: the common look-up tables as the bitwise expression they compute,
# so that a nibble mask merged into a magic exponent reads as ``(w & 0x000F000F) | 0x64006400``
# wherever the table and the operands come from (an immediate, ``"n"(kLut)``, a template value).
_LOP3_FORMS = (
    lambda a, b, c: a & b & c, lambda a, b, c: a | b | c, lambda a, b, c: a ^ b ^ c,
    lambda a, b, c: (a & b) | c, lambda a, b, c: a | (b & c), lambda a, b, c: (a & c) | b,
    lambda a, b, c: (a & b) ^ c, lambda a, b, c: a ^ (b & c), lambda a, b, c: a & (b | c),
    lambda a, b, c: (a | b) & c, lambda a, b, c: (a & b) | (~a & c),
)
_LOP3_OPS = {"&": lambda x, y: x & y, "|": lambda x, y: x | y, "^": lambda x, y: x ^ y}
_LOP3_RX = re.compile(r"^\s*lop3\.b32\s+%(\d+)\s*,\s*%(\d+)\s*,\s*%(\d+)\s*,\s*%(\d+)\s*,\s*(%\d+|0[xX][0-9a-fA-F]+|\d+)\s*;?\s*$")


class _Bits:
    """An operand of a look-up-table form: evaluates the form on the truth-table bytes (0xF0,
    0xCC, 0xAA) and, with expressions, builds the expression."""

    def __init__(self, v):
        self.v = v

    def _op(self, op, other):
        a, b = self.v, other.v
        if isinstance(a, int) and isinstance(b, int):
            return _Bits(_LOP3_OPS[op](a, b) & 0xFF)
        return _Bits(binop(op, (a, b)))

    def __and__(self, o):
        return self._op("&", o)

    def __or__(self, o):
        return self._op("|", o)

    def __xor__(self, o):
        return self._op("^", o)

    def __invert__(self):
        return _Bits(~self.v & 0xFF if isinstance(self.v, int) else binop("~", (self.v,)))


_LOP3_TABLE = {form(_Bits(0xF0), _Bits(0xCC), _Bits(0xAA)).v: form for form in _LOP3_FORMS}


def _lop3(text: str, n_outputs: int, inputs: list[E]) -> E | None:
    m = _LOP3_RX.match(text.replace("\\n", "\n"))
    if m is None or n_outputs != 1 or int(m.group(1)) != 0:
        return None
    ops = [int(m.group(i)) - n_outputs for i in (2, 3, 4)]
    if not all(0 <= i < len(inputs) for i in ops):
        return None
    lut_text = m.group(5)
    if lut_text.startswith("%"):
        i = int(lut_text[1:]) - n_outputs
        lut = num(inputs[i]) if 0 <= i < len(inputs) else None
    else:
        lut = int(lut_text, 0)
    form = _LOP3_TABLE.get(lut) if isinstance(lut, int) else None
    if form is None:
        return None
    return form(*(_Bits(inputs[i]) for i in ops)).v


def _asm_int(token: str | None, inputs: list[E], n_outputs: int) -> int | None:
    """An asm operand that is an integer: a literal in the template, or ``%k`` bound to a known
    constant (``"n"(16)``)."""
    if not token:
        return None
    if token.isdigit():
        return int(token)
    i = int(token[1:]) - n_outputs
    v = num(inputs[i]) if 0 <= i < len(inputs) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


_ASM_OPERAND = re.compile(r"(?<!%)%(\d+)")


def asm_with_constants(text: str, n_outputs: int, inputs: list[E]) -> str:
    """The asm template with every input operand whose value is a known integer written in:
    ``"cp.async.wait_group %0;" :: "n"(2)`` is ``cp.async.wait_group 2`` to the assembler, so a
    detector matching the instruction must read it that way."""
    def put(m: re.Match) -> str:
        i = int(m.group(1)) - n_outputs
        v = num(inputs[i]) if 0 <= i < len(inputs) else None
        return str(v) if isinstance(v, int) and not isinstance(v, bool) else m.group(0)
    return _ASM_OPERAND.sub(put, text) if "%" in text else text


def asm_math(text: str, n_outputs: int, inputs: list[E]) -> E | None:
    """The value a one-instruction PTX unary (ex2, lg2, rsqrt, sqrt, tanh, sin, cos, rcp) or a
    ``lop3.b32`` with a known look-up table writes to its one output, or None for any other
    statement."""
    bits = _lop3(text, n_outputs, inputs)
    if bits is not None:
        return bits
    m = _PTX_UNARY_RX.match(text)
    if m is None or n_outputs != 1 or int(m.group(2)) != 0:
        return None
    i = int(m.group(3)) - n_outputs
    if not 0 <= i < len(inputs):
        return None
    if m.group(1) == "rcp":
        return binop("/", (Num(1.0), inputs[i]))
    return Call(_PTX_UNARY[m.group(1)], (inputs[i],))


def _bytes(interp, v: E) -> E:
    """A pointer expressed in bytes (what ``cvta`` / ``__cvta_generic_to_shared`` return)."""
    from .types import size_of

    p = interp.as_ptr(v) if not isinstance(v, Ptr) else v
    if not isinstance(p, Ptr):
        return v
    size = size_of(p.elem, interp.int_of) if p.elem else None
    off = binop("*", (p.off, Num(size))) if size else p.off
    return Ptr(p.obj, "char", off, ())


def _operand_ptr(interp, inputs: list[E], i: int) -> Ptr | None:
    if not 0 <= i < len(inputs):
        return None
    v = inputs[i]
    for n in walk(v):
        if isinstance(n, Ptr):
            return n
    return None


def struct_of(interp, value: E, expr: E) -> str:
    """The user struct a method is called on (``op.apply(a, b)`` on a functor local)."""
    if isinstance(value, TypeRef) and value.name.startswith("struct:"):
        return value.name[7:]
    if isinstance(expr, Name):
        cell = interp.lookup(expr.id)
        if cell is not None and cell.type:
            b = base_type(interp.resolve_type(cell.type)).split("<")[0]
            if interp.p.is_struct(b):
                return b
    return ""


def return_value(returns: list[E], fn) -> E:
    """A helper's value: its single return, or, with early exits (``if (n == 0) return a;``), the
    return that computes the most (the early exits pass a constant or an input through)."""
    if not returns:
        return Num(0)
    if len(returns) == 1 or all(r == returns[0] for r in returns):
        return returns[0]
    from .expr import size

    computed = [r for r in returns if not isinstance(r, Num)]
    if computed:
        return max(computed, key=lambda r: size(r, 1000))
    return Sym(f"ret#{id(fn) & 0xffff}", frozenset().union(*(atoms(r) for r in returns)))


# the host API returning a device's properties as a mapping (Triton's driver utilities, however
# the driver module was reached: ``triton.runtime.driver`` or ``from triton.runtime import driver``)
DEVICE_PROPERTY_MAP = "driver.active.utils.get_device_properties"


def py_index(interp, base: E, idx: list[E], loc: Loc) -> E:
    """Python subscripts on values: broadcasting ``x[:, None]`` keeps ``x``; ``t[i]`` of a tuple;
    ``props["multiprocessor_count"]`` of a device-properties mapping is the SM count."""
    if isinstance(base, Call) and base.fn.endswith(DEVICE_PROPERTY_MAP) and len(idx) == 1 and \
            isinstance(idx[0], Str) and idx[0].v in SM_COUNT_ATTRS:
        return Sym("sm_count")
    if isinstance(base, Tup) and len(idx) == 1 and isinstance(num(idx[0]), int):
        i = num(idx[0])
        return base.items[i] if -len(base.items) <= i < len(base.items) else Sym("index")
    if all(isinstance(i, (Num,)) and i.v is None or (isinstance(i, Sym) and i.key in ("slice", "none")) for i in idx):
        return base
    if isinstance(base, (Sym, Op, Call, Load, Attr)) and all(isinstance(i, Sym) and i.key in ("slice", "none") for i in idx):
        return base
    return Op("[]", (base,) + tuple(idx))


__all__ = ["binop", "truth", "library_call", "library_name", "attribute", "cast", "Fraction"]
