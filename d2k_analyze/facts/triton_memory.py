"""Triton's memory operations as accesses: ``tl.load``/``tl.store``/``tl.atomic_*`` on pointer
tensors, block pointers (``tl.make_block_ptr``/``tl.advance``) and tensor descriptors (TMA).

A Triton pointer is a kernel parameter plus offsets. The parameter is found by value: the term
``param#k`` with coefficient 1 in the pointer's polynomial form; the rest is the offset.
"""

from __future__ import annotations

from . import poly as P
from .builtins import _from_poly
from .expr import Call, Cast, E, Load, Num, Op, Ptr, Sym, Tup, atoms, short
from .ir import Loc

DESCRIPTOR_MAKERS = ("tl.make_tensor_descriptor", "tl._experimental_make_tensor_descriptor", "TensorDescriptor.from_tensor")
BLOCK_POINTER_MAKERS = ("tl.make_block_ptr",)


def decompose(interp, ptr: E) -> tuple[Ptr | None, str]:
    """(the object and offset a pointer expression addresses, how it was formed)."""
    if isinstance(ptr, Ptr):
        return ptr, "ptr"
    if isinstance(ptr, Call) and ptr.fn in BLOCK_POINTER_MAKERS:
        base = ptr.kwarg("base") or (ptr.args[0] if ptr.args else None)
        inner, _ = decompose(interp, base) if base is not None else (None, "")
        offs = ptr.kwarg("offsets") or (ptr.args[3] if len(ptr.args) > 3 else Num(0))
        if inner is not None:
            return Ptr(inner.obj, inner.elem, _sum(offs), ()), "block_ptr"
        return None, "block_ptr"
    if isinstance(ptr, Call) and ptr.fn == "tl.advance" and ptr.args:
        inner, how = decompose(interp, ptr.args[0])
        if inner is not None:
            return Ptr(inner.obj, inner.elem, P_add(inner.off, _sum(ptr.args[1]) if len(ptr.args) > 1 else Num(0)), ()), how
        return None, how
    if isinstance(ptr, Call) and ptr.fn in DESCRIPTOR_MAKERS:
        base = ptr.args[0] if ptr.args else ptr.kwarg("base")
        inner, _ = decompose(interp, base) if base is not None else (None, "")
        return inner, "descriptor"
    p = P.poly(ptr)
    for m, c in p:
        if len(m) == 1 and c == 1 and m[0].startswith("param#"):
            key = m[0]
            rest = P.add(p, P.term(key), -1)
            return Ptr(_param_object(interp, key), "", _from_poly(rest), ()), "tl"
    if _loaded_pointer(ptr):  # a pointer loaded from memory: ``tl.load(ptrs + g).to(tl.pointer_type(T))``
        return Ptr(interp.implicit_object(ptr).obj, _pointee(ptr), Num(0), ()), "tl"
    if isinstance(ptr, Op) and ptr.op == "+":
        bases = [a for a in ptr.args if _loaded_pointer(a)]
        if len(bases) == 1:
            rest = [a for a in ptr.args if a is not bases[0]]
            return Ptr(interp.implicit_object(bases[0]).obj, _pointee(bases[0]), rest[0] if len(rest) == 1 else Op("+", tuple(rest)), ()), "tl"
    return None, "unknown"


TRITON_DTYPES = ("bfloat16", "float16", "float8e4nv", "float8e5", "float8_e4m3fn", "float8_e5m2", "float32", "float64", "int8")


def _pointee(e: E) -> str:
    """The element type a ``tl.pointer_type(T)`` cast names ("" when it cannot be read)."""
    text = e.type if isinstance(e, Cast) else repr(e)
    return next((f"tl.{t}" for t in TRITON_DTYPES if t in text), "")


def _loaded_pointer(e: E | None) -> bool:
    if isinstance(e, Cast):  # ``x.to(tl.pointer_type(T))`` lowers to a cast to that type
        return "pointer_type" in e.type
    return isinstance(e, Call) and short(e.fn) == "to" and any(
        isinstance(a, Call) and short(a.fn) == "pointer_type" for a in e.args[1:] + tuple(v for _, v in e.kw))


def _param_object(interp, key: str) -> int:
    oid = interp.param_objs.get(key)
    if oid is None:
        oid = interp.new_obj("global", "", (), interp.f.loc, key)
        interp.param_objs[key] = oid
    return oid


def P_add(a: E, b: E) -> E:
    from .builtins import binop

    return binop("+", (a, b))


def _sum(e: E) -> E:
    """Block-pointer offsets are a tuple per dimension; their sum keeps every atom."""
    if isinstance(e, Tup):
        out: E = Num(0)
        for i in e.items:
            out = P_add(out, i)
        return out
    return e


def triton_memory(interp, call: Call, loc: Loc) -> E | None:
    fn, args = call.fn, call.args
    if fn in ("tl.load", "tl._experimental_descriptor_load", "tl.load_tensor_descriptor") or (fn == ".load" and args):
        target = args[0] if args else call.kwarg("pointer")
        if target is None:
            return None
        via = "tl.load"
        if fn == ".load" or fn != "tl.load":
            ptr, how = _descriptor(interp, target, args[1] if len(args) > 1 else None)
            via = "descriptor"
        else:
            ptr, how = decompose(interp, target)
            via = {"block_ptr": "block_ptr", "descriptor": "descriptor"}.get(how, "tl.load")
        if ptr is None:
            return Sym(f"tl.load#{loc.line}", atoms(target) | {"load:global"})
        acc = interp.record_access(ptr, "load", loc, via=via)
        return Load(ptr.obj, acc.space, acc.id)
    if fn in ("tl.store", "tl._experimental_descriptor_store", "tl.store_tensor_descriptor") or (fn == ".store" and args):
        target = args[0] if args else call.kwarg("pointer")
        value = args[-1] if len(args) >= 2 else call.kwarg("value")
        if fn == ".store" or fn != "tl.store":
            ptr, how = _descriptor(interp, target, args[1] if len(args) > 2 else None)
            via = "descriptor"
        else:
            ptr, how = decompose(interp, target)
            via = {"block_ptr": "block_ptr", "descriptor": "descriptor"}.get(how, "tl.store")
        if ptr is not None:
            interp.record_access(ptr, "store", loc, value=value, via=via)
        return Num(0)
    if fn.startswith("tl.atomic_") and args:
        ptr, _ = decompose(interp, args[0])
        if ptr is not None:
            interp.record_access(ptr, "atomic", loc, value=args[-1] if len(args) > 1 else None, via="tl.atomic")
        return Sym(f"atomic#{loc.line}", atoms(args[-1]) if len(args) > 1 else frozenset())
    return None


def _descriptor(interp, target: E, offsets: E | None = None) -> tuple[Ptr | None, str]:
    """A descriptor load/store: the descriptor's tensor, at the block offsets it is given."""
    ptr, how = decompose(interp, target)
    if ptr is not None:
        off = P_add(ptr.off, _sum(offsets)) if offsets is not None else ptr.off
        return Ptr(ptr.obj, ptr.elem, off, ()), "descriptor"
    return None, "descriptor"
