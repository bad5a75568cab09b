"""An abstract interpreter over the lowered IR: resolves what every name holds and records facts.

It runs a kernel body once, in program order, with each local bound to its current value:
straight-line code is exact, a branch whose condition folds to a constant takes one side, the
two sides of an unknown branch are merged (a value both agree on stays, others become an opaque
``phi``), and a loop is entered once with its loop-carried locals bound to opaque symbols (so
``m = max(m, x)`` reads as an update of ``carried#c`` by itself) and its induction variable
bound to ``start + step * iter`` (so ``x[i]`` with ``i = threadIdx.x + k * blockDim.x`` has a
unit thread stride). Calls of user functions, functors and lambdas are inlined with their
parameters bound to the caller's values (a helper that receives ``threadIdx.x`` or a shared
array as an argument is analysed with exactly that), and reference parameters alias the
caller's locals. Work is bounded (statements, inlining depth, expression size) so that the
analysis stays linear in the size of the code.

Language specifics (what a library call does to memory, which names are geometry atoms) live
in :mod:`.builtins`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Callable, Protocol

from . import builtins
from .expr import (ONE, UNKNOWN_CALLEE, ZERO, Attr, Call, Cast, E, Index, Lambda, Load, Name, Num, Op, Ptr, Str, Sym, Tup, TypeRef,
                   atoms, flatten, num, order_key, rewrite, short, size, walk)
from .ir import Asm, Assign, Decl, ExprStmt, Func, If, Loc, Loop, Return, Stmt
from .kernel import Access, AsmFact, Assignment, KernelFacts, LoopFact, Obj
from .types import base_type, size_of, top_level_arguments, vector_members

MAX_STATEMENTS = 40_000  # per kernel unit, inlined code included
MAX_DEPTH = 8  # inlining depth
MAX_EXPR = 400  # nodes; larger values become opaque symbols (with their atoms kept as deps)


class Program(Protocol):
    """What the interpreter needs to know about the code around a kernel (one submission)."""

    language: str

    def function(self, name: str, nargs: int, near: str = "") -> Func | None:
        """The user function a call reaches; ``near``: the caller's file, whose own definition
        a bare name means when several files define one."""
        ...

    def method(self, owner: str, name: str) -> Func | None: ...

    def constant(self, name: str) -> E | None: ...

    def is_struct(self, name: str) -> bool: ...

    def type_alias(self, name: str) -> str | None: ...

    def member_type(self, struct: str, args: tuple[str, ...], member: str) -> str | None: ...


class Cell:
    """Storage of one local (or one field of a struct local)."""

    __slots__ = ("id", "value", "fields", "type")

    def __init__(self, cid: int, value: E, type_: str = ""):
        self.id = cid
        self.value = value
        self.fields: dict[str, Cell] = {}
        self.type = type_


def _function_ref(v: E) -> bool:
    """A function named by reference, a null pointer, or a choice between such."""
    if isinstance(v, TypeRef):
        return v.name.startswith("fn:")
    if isinstance(v, Num):
        return v.v == 0
    return isinstance(v, Op) and v.op == "?:" and len(v.args) == 3 and _function_ref(v.args[1]) and _function_ref(v.args[2])


def _member(value: E, name: str, members: list[str]) -> E:
    """Member ``name`` of a struct value: the item of a brace initialiser in the member's
    declaration position, through a conditional of initialisers (an early ``return {m, 0.f}``)."""
    if isinstance(value, Tup) and name in members and len(value.items) == len(members):
        return value.items[members.index(name)]
    if isinstance(value, Op) and value.op == "?:" and len(value.args) == 3:
        a, b = _member(value.args[1], name, members), _member(value.args[2], name, members)
        if not (isinstance(a, Attr) and a.base is value.args[1]) or not (isinstance(b, Attr) and b.base is value.args[2]):
            return Op("?:", (value.args[0], a, b))
    return Attr(value, name)


@dataclass
class Frame:
    func: Func | None
    scopes: list[dict[str, Cell]]
    tbind: dict[str, E] = field(default_factory=dict)
    returns: list[E] = field(default_factory=list)
    return_guards: list[tuple[E, ...]] = field(default_factory=list)  # host code: the conditions each return was under
    guard_base: int = 0  # len(Interp.guards) when the frame was entered


class Interp:
    def __init__(self, program: Program, facts: KernelFacts):
        self.p = program
        self.f = facts
        self.lang = program.language
        self.frames: list[Frame] = []
        self.loops: list[int] = []
        self.guards: list[E] = []
        self.cells = 0
        self.steps = 0
        self.active: list[int] = []  # ids of the functions being inlined: the recursion guard (a same-named
        # method of another class or module is not recursion)
        self.const_cache: dict[str, E] = {}
        self.const_active: set[str] = set()
        self.param_objs: dict[str, int] = {}  # opaque pointer base -> implicit global object
        # local arrays of pointers (``T* bufs[STAGES]``): object id -> (index, pointer) per store
        self.ptr_tables: dict[int, list[tuple[E, Ptr] | None]] = {}  # None: a store of something else
        self.globals: dict[str, Cell] = {}
        self.cell_index: dict[int, Cell] = {}  # cell id -> cell (pointers to locals: ``addr#<id>``)
        self.trail: list[tuple[Cell, E]] = []  # (cell, value before) of every write, for branch merging
        self.host_launches: list = []  # (kernel name, LaunchFact) met while interpreting host code
        self.launching_functions: set[int] = set()  # id of the lowered body of every function that launched
        self.lib_names: set[str] = set()  # library names resolved (host context: attributes, swizzle modes)
        # interpreting host code (HostIndex): a choice between constants keeps its condition, so
        # that a launch setting picked by the problem's size says so (``64 if M < 512 else 128``)
        self.host = False
        self.last_cond: E | None = None  # the condition of the last ``if`` whose both sides ran

    def set_value(self, cell: Cell, value: E) -> None:
        self.trail.append((cell, cell.value))
        cell.value = value

    # --- entry -----------------------------------------------------------------------------
    def run_kernel(self, fn: Func, param_values: list[E], tbind: dict[str, E]) -> None:
        frame = Frame(fn, [dict(self.globals)], dict(tbind), guard_base=len(self.guards))
        for p, v in zip(fn.params, param_values):
            frame.scopes[0][p.name] = self.new_cell(v, p.type)
        self.frames.append(frame)
        self.active.append(id(fn))
        try:
            self.block(fn.body)
        finally:
            self.active.pop()
            self.frames.pop()

    # --- cells and objects -------------------------------------------------------------------
    def new_cell(self, value: E, type_: str = "") -> Cell:
        self.cells += 1
        c = Cell(self.cells, value, type_)
        if type_:
            self.f.cell_types[c.id] = type_
        self.cell_index[c.id] = c
        return c

    def addressed_cell(self, pointer: E) -> Cell | None:
        """The local a pointer value points at (``&warp_mean`` handed to a helper that writes
        ``*mean``): writes and reads through it are the local itself, not memory. A helper
        written for ``n`` values (``*(p + i)`` in a loop to ``n``) and handed one scalar reads
        and writes that scalar: the only offset a pointer to one local can take is 0."""
        if isinstance(pointer, Op) and pointer.op == "+":
            cells = [a for a in pointer.args if isinstance(a, Sym) and a.key.startswith("addr#")]
            return self.addressed_cell(cells[0]) if len(cells) == 1 else None
        if isinstance(pointer, Sym) and pointer.key.startswith("addr#"):
            try:
                return self.cell_index.get(int(pointer.key[5:]))
            except ValueError:
                return None
        return None

    def new_obj(self, space: str, elem: str, dims: tuple[E | None, ...], loc: Loc, origin: str) -> int:
        oid = len(self.f.objects)
        resolved = tuple(num(d) if d is not None and isinstance(num(d), int) else None for d in dims)
        self.f.objects[oid] = Obj(oid, space, elem, resolved, loc, origin, dims)
        return oid

    def pointer_param(self, index: int, type_: str, space: str = "global") -> Ptr:
        oid = self.new_obj(space, base_type(type_), (), self.f.loc, f"param#{index}")
        return Ptr(oid, base_type(type_), ZERO)

    def implicit_object(self, base: E) -> Ptr:
        """A pointer whose origin is not visible (a struct field of a parameter, a pointer loaded
        from memory, a library allocator's result): one implicit object per distinct base value,
        in shared memory when the base derives from shared memory; in registers (``local``) when
        it is a field of a local declared without an initialiser, such as a WMMA fragment's
        ``frag.x[i]`` (nothing else such a base can point into: its value is the struct itself);
        else global."""
        key = order_key(base)[:200]  # repr(base), memoised per node
        oid = self.param_objs.get(key)
        if oid is None:
            keys = atoms(base)
            shared = {f"obj#{o.id}" for o in self.f.objects.values() if o.space == "shared"}
            if keys & shared or "space:shared" in keys or "load:shared" in keys:
                space = "shared"
            elif isinstance(base, Attr) and keys and all(k.startswith("undef#") for k in keys):
                space = "local"
            else:
                space = "global"
            # a peer CTA's shared memory (distributed shared memory of a thread-block cluster)
            peer = isinstance(base, Call) and short(base.fn) in ("map_shared_rank", "mapa")
            oid = self.new_obj("shared" if peer else space, "", (), self.f.loc, "cluster_peer" if peer else "implicit")
            self.param_objs[key] = oid
        return Ptr(oid, "", ZERO)

    # --- scopes ----------------------------------------------------------------------------
    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    def lookup(self, name: str) -> Cell | None:
        for scope in reversed(self.frames[-1].scopes):  # not ``self.frame``: a property call on a hot path
            c = scope.get(name)
            if c is not None:
                return c
        return self.globals.get(name)

    def caller_file(self) -> str:
        """The file of the innermost function being run (a lambda runs in its definer's)."""
        for fr in reversed(self.frames):
            if fr.func is not None:
                return fr.func.loc.file
        return ""

    def bind(self, name: str, cell: Cell) -> None:
        self.frame.scopes[-1][name] = cell

    # --- statements ------------------------------------------------------------------------
    def block(self, stmts: list[Stmt]) -> None:
        self.frame.scopes.append({})
        depth = len(self.guards)
        try:
            for s in stmts:
                if self.steps > MAX_STATEMENTS:
                    return
                self.last_cond = None
                self.stmt(s)
                if self.host and isinstance(s, If) and not s.orelse and _returns(s.then) and self.last_cond is not None:
                    # ``if (m == 1) { gemv<<<...>>>(); return; }``: what follows runs only when the
                    # condition is false, which the launches after it must say
                    self.guards.append(Op("not", (self.last_cond,)))
        finally:
            del self.guards[depth:]
            self.frame.scopes.pop()

    def stmt(self, s: Stmt) -> None:
        self.steps += 1
        self.f.lines.add((s.loc.file, s.loc.line))
        handler = _STMT.get(type(s))
        if handler is not None:
            handler(self, s)

    def ret(self, s: Return) -> None:
        value = self.cap(self.ev(s.value, s.loc)) if s.value is not None else ZERO
        self.frame.returns.append(value)
        self.frame.return_guards.append(tuple(self.guards[self.frame.guard_base:]))
        if s.value is not None and len(self.frames) > 1:  # a helper's result is a computed value too
            self.f.assigns.append(Assignment(s.loc, None, None, "return", value, None, value, tuple(self.loops), tuple(self.guards)))

    def decl(self, d: Decl) -> None:
        t = self.resolve_type(d.type)
        self.note_type(t)
        if "using" in d.quals:  # a local type alias binds like a template type parameter
            self.frame.tbind = {**self.frame.tbind, d.name: TypeRef(t)}
            return
        if d.ref and d.init is not None:
            target = self.lvalue_cell(d.init, d.loc)
            if target is not None:
                self.bind(d.name, target)
                return
            # a reference bound to a call's result (``T (&tiles)[2] = alloc.allocate<T, 2>()``) names that value
            self.bind(d.name, self.new_cell(self.cap(self.ev(d.init, d.loc)), t))
            return
        if "__shared__" in d.quals or (d.dims and "__constant__" not in d.quals):
            space = "shared" if "__shared__" in d.quals else "local"
            dims = tuple(self.ev(x, d.loc) if x is not None else None for x in d.dims)
            origin = "extern_shared" if "extern" in d.quals or (dims and dims[0] is None) else space
            oid = self.new_obj(space, base_type(t), dims, d.loc, origin)
            shape = tuple(x if x is not None else Sym("?") for x in dims)
            cell = self.new_cell(Ptr(oid, base_type(t), ZERO, shape), t)
            self.bind(d.name, cell)
            if d.init is not None and space == "local":
                init = self.ev(d.init, d.loc)
                self.f.assigns.append(Assignment(d.loc, cell.id, None, "=", init, None, cell.value, tuple(self.loops), tuple(self.guards), t))
                if isinstance(init, Tup) and "*" in t:  # ``T* bufs[] = {a, b, c}``: a table of pointers
                    for i, item in enumerate(init.items):
                        self.note_pointer_store(Ptr(oid, base_type(t), Num(i), ()), item)
            return
        if "__constant__" in d.quals:
            oid = self.new_obj("constant", base_type(t), (), d.loc, "constant")
            self.bind(d.name, self.new_cell(Ptr(oid, base_type(t), ZERO), t))
            return
        value = self.ev(d.init, d.loc) if d.init is not None else Sym(f"undef#{self.cells + 1}")
        if isinstance(value, Call) and value.fn.startswith("ctor:") and not value.args:
            value = Sym(f"undef#{self.cells + 1}")
        value = self.cap(value)
        cell = self.new_cell(value, t)
        self.bind(d.name, cell)
        if d.init is not None:
            self.f.assigns.append(Assignment(d.loc, cell.id, None, "=", value, None, value, tuple(self.loops), tuple(self.guards), t))

    def assign_value(self, target: E, value: E, loc: Loc) -> None:
        """``target = value`` for an already-resolved value (a library op writing its destination)."""
        self.assign(Assign(loc, target, "=", _Const(value)))

    def assign(self, s: Assign) -> None:
        if isinstance(s.target, Tup):  # Python unpacking: a, b = x, y
            value = self.ev(s.value, s.loc)
            n = len(s.target.items)
            for i, t in enumerate(s.target.items):
                v = _item(value, i, n)
                v = v if v is not None else Sym(f"unpack#{self.cells + 1}", atoms(value))
                self.assign(Assign(s.loc, t, "=", _Const(v)))
            return
        rhs = self.ev(s.value, s.loc)
        if self.lang != "cuda" and isinstance(s.target, Index):
            item = self.item_cell(s.target, s.loc)
            if item is not None:  # d[k] = v on a Python container (a cache dict, a list of values)
                self.set_value(item, rhs)
                return
        cell = self.lvalue_cell(s.target, s.loc, create=True)
        if cell is not None:
            old = cell.value
            new = rhs if s.op == "=" else self.cap(builtins.binop(s.op[:-1], (cell.value, rhs)))
            self.set_value(cell, self.cap(new))
            self.f.assigns.append(Assignment(s.loc, cell.id, None, s.op, rhs, old, cell.value, tuple(self.loops), tuple(self.guards), cell.type))
            if s.op == "=" and cell.fields:
                self.assign_members(cell, s)
            return
        ptr = self.address(s.target, s.loc)
        if ptr is None:
            return
        kind = "store" if s.op == "=" else "rmw"
        old = None
        if kind == "rmw":
            old = Load(ptr.obj, self.f.objects[ptr.obj].space, len(self.f.accesses))
        else:  # c[i] = fmaf(a, b, c[i]): the value reads the element it overwrites
            same = [n for n in walk(rhs) if isinstance(n, Load) and n.obj == ptr.obj and n.access < len(self.f.accesses)
                    and self.f.accesses[n.access].off == ptr.off]
            old = same[0] if same else None
        value = rhs if s.op == "=" else builtins.binop(s.op[:-1], (old, rhs))
        self.note_pointer_store(ptr, value if kind == "store" else None)
        acc = self.record_access(ptr, kind, s.loc, value=self.cap(value))
        self.f.assigns.append(Assignment(s.loc, None, acc.id, s.op, rhs, old, acc.value, tuple(self.loops), tuple(self.guards)))

    def branch(self, s: If) -> None:
        c = self.ev(s.cond, s.loc)
        truth = builtins.truth(c)
        if truth is True:
            self.block(s.then)
            return
        if truth is False:
            self.block(s.orelse)
            return
        mark = len(self.trail)
        self.guards.append(c)
        self.block(s.then)
        self.guards.pop()
        then_writes = self.trail[mark:]
        then_vals = {cell.id: cell.value for cell, _ in then_writes}
        original: dict[int, tuple[Cell, E]] = {}
        for cell, old in reversed(then_writes):
            original[cell.id] = (cell, old)
            cell.value = old
        del self.trail[mark:]
        self.guards.append(Op("not", (c,)))
        self.block(s.orelse)
        self.guards.pop()
        self.last_cond = c
        for cell, old in reversed(self.trail[mark:]):
            original[cell.id] = (cell, old)
        for cid, (cell, before) in original.items():
            va = then_vals.get(cid, before)
            vb = cell.value
            if va == vb:
                continue
            if self.lang == "triton" and _is_undef(before) and (va == before or vb == before):
                merged = va if vb == before else vb  # Python: defined in one branch only
            elif _function_ref(va) and _function_ref(vb):
                merged = Op("?:", (c, va, vb))  # a kernel pointer chosen by a branch stays a choice of kernels
            elif self.host and _static(va) and _static(vb):
                merged = Op("?:", (c, va, vb))  # a launch setting chosen by a branch stays a choice of settings
            elif self._same_element(va, vb):
                merged = va  # one element read either way (``tl.load(p)`` / ``tl.load(p, mask=...)``)
            else:
                merged = _merge(va, vb, f"phi#{cid}@{s.loc.line}")
            self.set_value(cell, merged)

    def _same_element(self, va: E, vb: E) -> bool:
        """Two loads (under the same conversions) of the same memory at the same offset: the
        arms of a branch that differ only in a mask, a cache hint or a bounds guard."""
        while isinstance(va, Cast) and isinstance(vb, Cast) and va.type == vb.type:
            va, vb = va.arg, vb.arg
        if not (isinstance(va, Load) and isinstance(vb, Load) and va.obj == vb.obj):
            return False
        acc = self.f.accesses
        return va.access < len(acc) and vb.access < len(acc) and acc[va.access].off == acc[vb.access].off

    def loop(self, s: Loop) -> None:
        lid = len(self.f.loops)
        parent = self.loops[-1] if self.loops else None
        fact = LoopFact(lid, s.kind, s.loc, parent, pragmas=tuple(s.pragmas))
        self.f.loops[lid] = fact
        self.frame.scopes.append({})
        try:
            for st in s.init:
                self.stmt(st)
            carried = self.carried_cells(s)
            induction = self.induction(s, fact)
            # the members of a carried struct are carried too (``t.sum += v`` in the body), and
            # theirs (``part.md.d`` when ``part.md`` is assigned)
            todo = list(carried)
            while todo:
                members = [fc for fc in todo.pop().fields.values() if fc not in carried]
                carried += members
                todo += members
            for cell in carried:
                if induction is not None and cell is induction[0]:
                    continue
                self.set_value(cell, builtins.carried_value(cell.value, cell.id, lid))
            fact.carried = tuple(c.id for c in carried)
            if induction is not None:
                cell, start, step = induction
                fact.var_cell = cell.id
                fact.init = start
                if step is not None:
                    fact.step = step
                    self.set_value(cell, self.cap(builtins.binop("+", (start, builtins.binop("*", (step, Sym(f"iter#{lid}")))))))
                else:
                    self.set_value(cell, Sym(f"ivar#{lid}", atoms(start) | {f"iter#{lid}"}))
            if s.cond is not None:
                cond = self.ev(s.cond, s.loc)
                fact.bound = builtins.loop_bound(cond, f"iter#{lid}", fact)
            if fact.init is not None and fact.step is not None and fact.bound is not None:
                fact.trips = builtins.trip_count(fact)
            self.loops.append(lid)
            try:
                self.block(s.body)
                for st in s.update:
                    if not (induction is not None and isinstance(st, Assign) and self.lvalue_cell(st.target, st.loc) is induction[0]):
                        self.stmt(st)
            finally:
                self.loops.pop()
        finally:
            self.frame.scopes.pop()

    def carried_cells(self, s: Loop) -> list[Cell]:
        """Locals defined before the loop and assigned in it (directly, or through a reference
        parameter of a helper it calls)."""
        names: list[str] = []
        for st in _walk_stmts(s.body + s.update):
            if isinstance(st, Assign):
                t = st.target
                while isinstance(t, Attr):
                    t = t.base
                if isinstance(t, Name):
                    names.append(t.id)
                elif isinstance(t, Tup):
                    names += [x.id for x in t.items if isinstance(x, Name)]
            for e in _stmt_exprs(st):
                for n in walk(e):
                    if isinstance(n, Call) and not n.fn.startswith((".", "()")):
                        fn = self.p.function(n.fn, len(n.args))
                        if fn is not None:
                            names += [a.id for a, p in zip(n.args, fn.params) if p.ref and isinstance(a, Name)]
                            # ``helper(&x)``: written through the pointer
                            names += [a.args[0].id for a in n.args if isinstance(a, Op) and a.op == "addr" and a.args and isinstance(a.args[0], Name)]
                        elif n.args and isinstance(n.args[0], Name) and builtins.writes_first_argument(n.fn):
                            names.append(n.args[0].id)  # a tile-library op writes its destination
                    elif self.lang == "cuda" and isinstance(n, Call) and n.fn.startswith(".") and n.args and isinstance(n.args[0], Name):
                        # ``state.update(v)``: a method of a user struct may write its members
                        cell = self.lookup(n.args[0].id)
                        owner = base_type(self.resolve_type(cell.type)).split("<")[0] if cell is not None and cell.type else ""
                        if owner and self.p.method(owner, n.fn[1:]) is not None:
                            names.append(n.args[0].id)
                            for name in self.members(cell):  # its members exist before the loop binds them
                                if name not in cell.fields:
                                    cell.fields[name] = self.new_cell(self.member_of(cell, name), self.member_type(cell, name))
        out, seen = [], set()
        for n in names:
            c = self.lookup(n)
            if c is not None and c.id not in seen:
                seen.add(c.id)
                out.append(c)
        return out

    def induction(self, s: Loop, fact: LoopFact):
        """(cell, start, additive step or None) of the loop's induction variable."""
        if s.kind == "range" or s.iterable is not None:
            return builtins.range_induction(self, s, fact)
        if not s.update:
            return self.while_induction(s, fact)
        st = s.update[0]
        if not isinstance(st, Assign):
            return None
        cell = self.lvalue_cell(st.target, st.loc)
        if cell is None:
            return None
        start = cell.value
        step, kind, fact.factor = builtins.step_of(self, st, cell)
        fact.update = kind
        return cell, start, step

    def while_induction(self, s: Loop, fact: LoopFact):
        """A while/do loop counting with a local compared in the condition and updated in the body."""
        if s.cond is None:
            return None
        names = {n.id for n in walk(s.cond) if isinstance(n, Name)}
        for st in s.body:
            if isinstance(st, Assign) and isinstance(st.target, Name) and st.target.id in names and st.op in ("+=", "-=", "=", "<<=", ">>=", "*="):
                cell = self.lookup(st.target.id)
                if cell is None:
                    continue
                step, kind, fact.factor = builtins.step_of(self, st, cell)
                fact.update = kind
                return cell, cell.value, step
        return None

    def asm(self, s: Asm) -> None:
        ins = [self.ev(x, s.loc) for x in s.inputs]
        self.f.asm.append(AsmFact(s.text, s.loc, tuple(self.loops), tuple(self.guards), tuple(ins), builtins.asm_with_constants(s.text, len(s.outputs), ins)))
        produced = builtins.asm_accesses(self, s, ins)
        math = builtins.asm_math(s.text, len(s.outputs), ins) if not produced else None
        if math is not None:
            produced = [math]
        deps = frozenset().union(*(atoms(v) for v in ins)) if ins else frozenset()
        for i, out in enumerate(s.outputs):
            cell = self.lvalue_cell(out, s.loc)
            value = produced[min(i, len(produced) - 1)] if produced else Sym(f"asm#{len(self.f.asm)}.{i}", deps | {"asm"})
            if cell is not None:
                self.set_value(cell, value)
                self.f.assigns.append(Assignment(s.loc, cell.id, None, "=", value, None, value, tuple(self.loops), tuple(self.guards), cell.type))
            else:
                ptr = self.address(out, s.loc)
                if ptr is not None:
                    self.record_access(ptr, "store", s.loc, value=value, via="asm")

    # --- lvalues -------------------------------------------------------------------------
    def lvalue_cell(self, e: E, loc: Loc, create: bool = False) -> Cell | None:
        """The local an assignment target names (a field of a struct local included), or None
        when the target is memory."""
        if isinstance(e, _Const):
            return None
        if isinstance(e, Name):
            c = self.lookup(e.id)
            if c is None and create:
                c = self.new_cell(Sym(f"undef#{self.cells + 1}"))
                self.frame.scopes[0 if self.lang != "cuda" else -1][e.id] = c
            if c is not None and isinstance(c.value, Ptr) and c.value.shape:
                return None  # an array name is not assignable storage here
            return c
        if isinstance(e, Op) and e.op == "deref" and e.args:
            target = self.addressed_cell(self.ev(e.args[0], loc))
            if target is not None:
                return target
        if isinstance(e, Index) and len(e.idx) == 1 and self.lang == "cuda":
            target = self.addressed_cell(self.ev(e.base, loc))
            if target is not None:
                return target
        if isinstance(e, Attr):
            base = self.lvalue_cell(e.base, loc)
            if base is not None and not isinstance(base.value, Ptr):
                fc = base.fields.get(e.name)
                if fc is None:  # a member of a constructed value folds (make_uint2(a, b).y is b; S{a, b}.y is b)
                    member = builtins.attribute(self, base.value, e.name, loc) if isinstance(base.value, Call) else self.member_of(base, e.name)
                    fc = self.new_cell(member, self.member_type(base, e.name))
                    base.fields[e.name] = fc
                return fc
        return None

    def members(self, cell: Cell) -> list[str]:
        """The data members of a struct-typed local, in declaration order (empty when unknown); a
        CUDA vector local (``float4``) has its components."""
        if not cell.type:
            return []
        t = self.resolve_type(cell.type)
        return vector_members(t)[0] or self.p.struct_fields(t)

    def member_type(self, cell: Cell, name: str) -> str:
        """The declared type of a struct local's data member ('' when unknown): a member is a typed
        local as much as a declared one (``WelfordStat s; s.mean += d / s.count`` accumulates in float)."""
        if not cell.type:
            return ""
        own = self.resolve_type(cell.type)
        parts, scalar = vector_members(own)
        if name in parts:
            return scalar
        t = self.p.struct_member_type(own, name) if hasattr(self.p, "struct_member_type") else ""
        return self.resolve_type(t) if t else ""

    def member_of(self, cell: Cell, name: str) -> E:
        """A data member of a struct local whose value is a brace initialiser: the item in the
        member's declaration position (``MaxSum p{m, s}; p.s`` is ``s``)."""
        return _member(cell.value, name, self.members(cell))

    def whole(self, cell: Cell) -> E:
        """A struct local read as a whole (passed by value, copied): its members' current values as
        a brace initialiser when members were assigned one by one (``Moments o; o.n = ...;
        merge(v, o)``), so that the callee's ``b.n`` is what was stored."""
        members = self.members(cell)
        if not members or not any(name in cell.fields for name in members):
            return cell.value
        return Tup(tuple(cell.fields[name].value if name in cell.fields else _member(cell.value, name, members) for name in members))

    def assign_members(self, cell: Cell, s: Assign) -> None:
        """A whole struct assigned (``v = merge(v, other)``): each data member gets its part of the
        new value, as if assigned one by one, so that later reads of ``v.m`` see the new member and
        the detectors see each member's update."""
        members = self.members(cell)
        for name in members if len(members) > 1 else ():
            fc = cell.fields.get(name)
            if fc is None:
                fc = cell.fields[name] = self.new_cell(Attr(Sym(f"struct#{cell.id}"), name), self.member_type(cell, name))
            old, new = fc.value, _member(cell.value, name, members)
            self.set_value(fc, new)
            self.f.assigns.append(Assignment(s.loc, fc.id, None, "=", new, old, new, tuple(self.loops), tuple(self.guards), ""))

    def item_cell(self, e: Index, loc: Loc) -> Cell | None:
        """The element cell of a Python container local (``cache[key]``): one cell per container,
        so that a value stored under any key is what a later lookup returns."""
        base = self.lvalue_cell(e.base, loc) if isinstance(e.base, Name) else None
        if base is None and isinstance(e.base, Name):
            const = self.constant(e.base.id, loc)
            if const is None:
                return None
            base = self.globals.setdefault(e.base.id, self.new_cell(const))
        if base is None or isinstance(base.value, Ptr) or "param#" in order_key(base.value):
            return None
        cell = base.fields.get("[]")
        if cell is None:
            cell = base.fields["[]"] = self.new_cell(Sym(f"item#{base.id}"))
        return cell

    def address(self, e: E, loc: Loc) -> Ptr | None:
        """The memory location an lvalue expression denotes."""
        if isinstance(e, Index):
            base = self.ev(e.base, loc)
            return self.index_ptr(base, [self.ev(i, loc) for i in e.idx], loc, final=True)
        if isinstance(e, Op) and e.op == "deref":
            v = self.ev(e.args[0], loc)
            return self.as_ptr(v)
        if isinstance(e, Attr):
            base = self.address(e.base, loc)
            return base
        if isinstance(e, Name):
            v = self.ev(e, loc)
            return v if isinstance(v, Ptr) else None
        return None

    def as_ptr(self, v: E) -> Ptr | None:
        if isinstance(v, Ptr):
            return v
        if isinstance(v, Op) and v.op in ("+", "-") and len(v.args) == 2 and isinstance(v.args[0], Ptr):
            p = v.args[0]
            off = v.args[1] if v.op == "+" else Op("neg", (v.args[1],))
            return Ptr(p.obj, p.elem, builtins.binop("+", (p.off, off)), p.shape)
        if isinstance(v, (Sym, Attr, Load, Call)):
            return self.implicit_object(v)
        return None

    def index_ptr(self, base: E, idx: list[E], loc: Loc, final: bool) -> Ptr | None:
        ptr = self.as_ptr(base)
        if ptr is None:
            return None
        for i, x in enumerate(idx):
            if ptr.shape and len(ptr.shape) > 1:
                stride = ptr.shape[1]
                for extra in ptr.shape[2:]:
                    stride = builtins.binop("*", (stride, extra))
                ptr = Ptr(ptr.obj, ptr.elem, self.cap(builtins.binop("+", (ptr.off, builtins.binop("*", (x, stride))))), ptr.shape[1:])
            else:
                ptr = Ptr(ptr.obj, ptr.elem, self.cap(builtins.binop("+", (ptr.off, x))), ())
        return ptr

    def record_access(self, ptr: Ptr, kind: str, loc: Loc, value: E | None = None, via: str = "subscript", elem: str | None = None) -> Access:
        obj = self.f.objects[ptr.obj]
        stepped = ptr.elem or obj.elem
        elem = elem if elem is not None else stepped
        width = size_of(elem, self.int_of)
        unit = size_of(stepped, self.int_of) if elem != stepped else None  # the offset still counts the pointer's elements
        acc = Access(len(self.f.accesses), ptr.obj, obj.space, kind, ptr.off, elem, width, loc,
                     tuple(self.loops), tuple(self.guards), value, via, unit if unit != width else None)
        self.f.accesses.append(acc)
        return acc

    def load(self, ptr: Ptr, loc: Loc, via: str = "subscript") -> E:
        acc = self.record_access(ptr, "load", loc, via=via)
        held = self.pointer_at(ptr)
        return held if held is not None else Load(ptr.obj, acc.space, acc.id)

    def note_pointer_store(self, ptr: Ptr, value: E | None) -> None:
        """Remember what a local array of pointers holds (``bufs[s] = smem + s * STAGE_BYTES``,
        ``T* bufs[] = {a, b, c}``); any other store into it makes the table unknown."""
        if self.f.objects[ptr.obj].space != "local":
            return
        held = self.as_ptr(value) if isinstance(value, (Ptr, Op)) else None
        table = self.ptr_tables.setdefault(ptr.obj, [])
        if held is None or (table and table[-1] is None):
            table.append(None)
            return
        table.append((ptr.off, held))

    def pointer_at(self, ptr: Ptr) -> Ptr | None:
        """The pointer a local array of pointers holds at ``ptr.off``: written once per index in
        a loop (``for s: bufs[s] = base + s * d``) or element by element at 0, 1, ..., n-1 with a
        constant stride, the table is ``base + i * d``, so ``bufs[k % S]`` is ``base + (k % S) * d``
        (the stage a pipeline picks, in the address every access through it records)."""
        table = self.ptr_tables.get(ptr.obj)
        if not table or any(t is None for t in table):
            return None
        targets = {(p.obj, p.elem) for _, p in table}
        if len(targets) != 1:
            return None
        first = table[0][1]
        if len(table) == 1:
            idx, held = table[0]
            if not (isinstance(idx, Sym) and idx.key.startswith("iter#")):
                return held if num(idx) is not None and num(idx) == num(ptr.off) else None
            off = rewrite(held.off, lambda n: ptr.off if n == idx else n)
            return Ptr(first.obj, first.elem, self.cap(off), first.shape)
        offsets = [num(i) for i, _ in table]
        if offsets != list(range(len(table))):
            return None
        if num(ptr.off) is not None and 0 <= num(ptr.off) < len(table):
            return table[num(ptr.off)][1]  # a constant index reads its own entry
        base = first.off
        step = self.cap(builtins.binop("-", (table[1][1].off, base)))
        for i, (_, p) in enumerate(table):
            gap, expected = builtins.binop("-", (p.off, base)), builtins.binop("*", (Num(i), step))
            if gap != expected and (num(gap) is None or num(gap) != num(expected)):
                return None  # not an arithmetic progression of buffers
        return Ptr(first.obj, first.elem, self.cap(builtins.binop("+", (base, builtins.binop("*", (ptr.off, step))))), first.shape)

    # --- expressions -----------------------------------------------------------------------
    def ev(self, e: E | None, loc: Loc) -> E:
        """The value of lowered expression ``e`` (dispatched on the node's exact type: the
        interpreter's most frequent call)."""
        if e is None:
            return ZERO
        handler = _EV.get(type(e))
        return handler(self, e, loc) if handler is not None else Sym("?")

    def _ev_op(self, e: Op, loc: Loc) -> E:
        if e.op == "addr":
            return self.addr_of(e.args[0], loc)
        if e.op == "deref":
            pointer = self.ev(e.args[0], loc)
            target = self.addressed_cell(pointer)
            if target is not None:
                return target.value
            ptr = self.as_ptr(pointer)
            return self.load(ptr, loc, "deref") if ptr is not None else Sym("deref")
        if e.op == "?:" and len(e.args) == 3:
            return self._ev_select(e, loc)
        if self.host and self.lang != "cuda" and e.op == "or" and len(e.args) == 2:
            # Python's ``x or y`` is a value, not a truth: ``config or settings(m)`` is the
            # caller's config when one is given, else the computed one
            x = self.ev(e.args[0], loc)
            truth = builtins.truth(x)
            if truth is not None:
                return x if truth else self.ev(e.args[1], loc)
            return self.cap(Op("?:", (x, x, self.ev(e.args[1], loc))))
        args = tuple([self.ev(a, loc) for a in e.args])  # a list first: no generator frame per operand
        return self.cap(builtins.binop(e.op, args))

    def _ev_select(self, e: Op, loc: Loc) -> E:
        """``c ? x : y``: each branch evaluated under its condition, as an ``if`` does, so that a
        load in ``in_bounds ? p[i] : 0`` is known to be guarded (a bounds check written as a
        conditional expression instead of a statement); a condition known at analysis time
        evaluates only the branch it takes."""
        c = self.ev(e.args[0], loc)
        truth = builtins.truth(c)
        if truth is True:
            return self.ev(e.args[1], loc)
        if truth is False:
            return self.ev(e.args[2], loc)
        self.guards.append(c)
        try:
            x = self.ev(e.args[1], loc)
        finally:
            self.guards.pop()
        self.guards.append(Op("not", (c,)))
        try:
            y = self.ev(e.args[2], loc)
        finally:
            self.guards.pop()
        return self.cap(builtins.binop("?:", (c, x, y)))

    def _ev_index(self, e: Index, loc: Loc) -> E:
        base = self.ev(e.base, loc)
        if isinstance(base, Tup) and len(e.idx) == 1 and isinstance(num(self.ev(e.idx[0], loc)), int):
            i = num(self.ev(e.idx[0], loc))
            return base.items[i] if -len(base.items) <= i < len(base.items) else Sym("index")
        if not isinstance(base, Ptr) and self.lang != "cuda":
            item = self.item_cell(e, loc)
            if item is not None and not (isinstance(item.value, Sym) and item.value.key.startswith("item#")):
                return item.value
            return builtins.py_index(self, base, [self.ev(i, loc) for i in e.idx], loc)
        if isinstance(base, Attr) and isinstance(base.base, Load) and self.register_array(base):
            return base.base  # ``P p = src[i]; p.v[e]``: an element of that loaded copy, not a new load
        local = self.addressed_cell(base) if len(e.idx) == 1 else None
        if local is not None:
            return local.value  # ``v[j]`` through a pointer to one local is that local
        ptr = self.index_ptr(base, [self.ev(i, loc) for i in e.idx], loc, final=False)
        if ptr is None:
            return Sym("index", atoms(base))
        if ptr.shape:
            return ptr  # a row of a multi-dimensional array
        return self.load(ptr, loc)

    def register_array(self, member: Attr) -> bool:
        """``member`` is an array member (``T v[N]``) of a struct value loaded from memory: its items
        are that load's data in registers (a packed-vector struct read whole, then taken apart)."""
        load = member.base
        if self.lang != "cuda" or not isinstance(load, Load) or load.access >= len(self.f.accesses):
            return False
        struct = self.resolve_type(self.f.accesses[load.access].elem)
        return member.name in self.p.struct_arrays(struct)

    def name(self, ident: str, loc: Loc) -> E:
        c = self.lookup(ident)
        if c is not None:
            return self.whole(c) if c.fields else c.value
        for fr in reversed(self.frames):
            if ident in fr.tbind:
                return fr.tbind[ident]
            head, _, member = ident.partition(".")
            bound = fr.tbind.get(head) if member else None
            if isinstance(bound, TypeRef):  # C::NUM_SM with C bound to config<128, 64>
                v = self.member_constant(bound.name, member, loc)
                if v is not None:
                    return v
            break
        v = self.constant(ident, loc)
        if v is not None:
            return v
        if self.p.function(ident, -1) is not None:
            return TypeRef("fn:" + ident)
        if self.p.is_struct(ident):
            return TypeRef("struct:" + ident)
        return builtins.library_name(self, ident)

    def member_constant(self, type_name: str, member: str, loc: Loc) -> E | None:
        """A static constant of a user struct named by a bound type, its own template parameters
        bound to the type's arguments (``config<128, 64>::BM`` where ``BM = _BM``). A type bound
        to several instantiations (``traits<1, 3, float>|traits<32, 8, half>``) gives the value
        they agree on, and nothing when they differ."""
        if "|" in type_name:
            parts = [self.member_constant(alt, member, loc) for alt in _alternatives(type_name)]
            return parts[0] if parts and parts[0] is not None and all(v == parts[0] for v in parts) else None
        written = type_name.removeprefix("struct:")
        base, _, rest = written.partition("<")
        base = base_type(base).replace("::", ".").split(".")[-1]
        raw = self.p.constant(f"{base}.{member}", loc.file if loc is not None else self.caller_file())
        if raw is None:
            return None
        values = _template_arguments(rest.rsplit(">", 1)[0]) if rest else []
        params = getattr(self.p, "struct_params", lambda _n: [])(base)
        tbind = {pname: v for (pname, _default), v in zip(params, values)}
        key = f"{written}::{member}"
        if key in self.const_cache:
            return self.const_cache[key]
        if key in self.const_active:
            return None
        self.const_active.add(key)
        frames, self.frames = self.frames, [Frame(None, [{}], tbind)]
        try:
            v = self.ev(raw, loc)
        finally:
            self.frames = frames
            self.const_active.discard(key)
        self.const_cache[key] = v
        return v

    def constant(self, ident: str, loc: Loc) -> E | None:
        if ident in self.const_cache:
            return self.const_cache[ident]
        if ident in self.const_active:
            return None
        raw = self.p.constant(ident, loc.file if loc is not None else self.caller_file())
        if raw is None:
            return None
        self.const_active.add(ident)
        try:
            frames, self.frames = self.frames, [Frame(None, [{}])]
            try:
                v = self.ev(raw, loc)
            finally:
                self.frames = frames
        finally:
            self.const_active.discard(ident)
        self.const_cache[ident] = v
        return v

    def addr_of(self, e: E, loc: Loc) -> E:
        if isinstance(e, Index):
            base = self.ev(e.base, loc)
            ptr = self.index_ptr(base, [self.ev(i, loc) for i in e.idx], loc, final=True)
            return ptr if ptr is not None else Sym("addr")
        if isinstance(e, Op) and e.op == "deref":
            return self.ev(e.args[0], loc)
        v = self.ev(e, loc)
        if isinstance(v, (Ptr, TypeRef)):
            return v
        cell = self.lvalue_cell(e, loc)
        return Sym(f"addr#{cell.id}" if cell is not None else "addr", atoms(v))

    def attr(self, e: Attr, loc: Loc) -> E:
        cell = self.lvalue_cell(e, loc)
        if cell is not None and not (isinstance(cell.value, Attr) and cell.value.base == cell.value):
            # a struct member that is itself a struct with members of its own (``part.md``):
            # read whole, as a named struct local is, so its members' own values travel with it
            return self.whole(cell) if cell.fields else cell.value
        base = self.ev(e.base, loc)
        return builtins.attribute(self, base, e.name, loc)

    def call(self, e: Call, loc: Loc) -> E:
        # Functor / lambda / function-pointer calls
        if e.fn == "()":
            target = self.ev(e.args[0], loc)
            return self.call_value(target, list(e.args[1:]), loc, e)
        if e.fn.startswith(".") and "." not in e.fn[1:] and e.args:  # ``x.method(...)``, not ``.module.f`` (a relative import)
            base = self.ev(e.args[0], loc)
            method = e.fn[1:]
            if self.lang == "cuda" and method in CUB_COMBINING and len(e.args) >= 3 and isinstance(e.args[-1], Name):
                # cub: ``BlockReduce(t).Reduce(v, merge)`` runs the user operator on v and a peer
                self.combine_with_peers(e.args[-1], [self.ev(e.args[1], loc)], loc)
            owner = builtins.struct_of(self, base, e.args[0])
            if owner:
                fn = self.p.method(owner, method, self.caller_file())
                if fn is not None:
                    return self.inline(fn, list(e.args[1:]), loc, targs=e.targs, this=e.args[0])
            elif self.lang == "cuda" and isinstance(base, Sym):  # an object of an unbound template type
                fn = self.p.method_by_name(method, len(e.args) - 1)
                if fn is not None:
                    return self.inline(fn, list(e.args[1:]), loc, targs=e.targs, this=e.args[0])
            return builtins.library_call(self, e, loc, base=base)
        if "." in e.fn:  # Struct::method(...) / Struct<T>::method(...) / Alias::method(...)
            owner, _, method = e.fn.rpartition(".")
            owner = owner.split(".")[-1]
            bound = self.frame.tbind.get(owner)
            if isinstance(bound, TypeRef):  # ``using P = Pack<T>; P::widen(...)``
                owner = bound.name.split("<")[0].split("::")[-1].strip()
            if self.p.is_struct(owner):
                fn = self.p.method(owner, method, self.caller_file())
                if fn is not None:
                    return self.inline(fn, list(e.args), loc, targs=e.targs)
        cell = self.lookup(e.fn) if "." not in e.fn else None
        if cell is not None:  # a local called like a function: a lambda, a functor, a CuTe tensor view
            owner = base_type(cell.type).split("<")[0].replace("::", ".").split(".")[-1].strip() if cell.type else ""
            functor = self.p.method(owner, "operator()", self.caller_file(), self.type_arguments(cell.type)) if owner and self.p.is_struct(owner) else None
            if functor is not None:  # an object of a user struct: its call operator, on its members
                return self.inline(functor, list(e.args), loc, this=Name(e.fn))
            return self.call_value(cell.value, list(e.args), loc, e)
        for fr in reversed(self.frames):
            bound = fr.tbind.get(e.fn)
            if isinstance(bound, TypeRef) and self.lang == "cuda" and (target := self.function_argument(bound.name, e)) is not None:
                return self.call(target, loc)  # ``ACT_FN(x)`` with ``ACT_FN = silu<T>``: that function
            if isinstance(bound, TypeRef):
                return self.call_value(bound, list(e.args), loc, e)
            if isinstance(bound, Sym) and bound.key.startswith("tparam#") and len(e.args) == 1:
                # T(x) with T a template parameter no launch binds: only a type parameter can be
                # called, so this is a conversion to that type
                return Cast(e.fn, self.ev(e.args[0], loc))
            break
        if self.lang != "cuda" and e.fn in COMBINING_REDUCTIONS and len(e.args) >= 3:
            self.run_combine(e, loc)
        fn = self.p.function(e.fn, len(e.args), self.caller_file())
        if fn is not None and fn.kind == "host" and hasattr(self.p, "overloads"):
            result = ZERO
            for overload in self.p.overloads(e.fn, len(e.args)):  # host overloads by type: follow each
                result = self.inline(overload, list(e.args), loc, targs=e.targs)
            return result
        if fn is not None and fn.kind != "kernel":
            return self.inline(fn, list(e.args), loc, targs=e.targs)
        if self.p.is_struct(e.fn):
            return TypeRef("struct:" + e.fn)  # functor construction: Op()
        if self.lang != "cuda" and "." not in e.fn and e.fn in getattr(self.p, "module_assigns", {}):
            # ``rsqrt = find_op("rsqrt")`` at module level: the callee is whatever that value is,
            # never the library function the variable happens to be named after
            target = self.name(e.fn, loc)
            if isinstance(target, (Lambda, TypeRef)) or (isinstance(target, Sym) and target.key.startswith("lib:")):
                return self.call_value(target, list(e.args), loc, e)
            # the formula around it still stands (``x * f(sum(x * x) / n + eps)`` is a normalisation
            # whatever ``f`` is): an anonymous call keeps the arguments and drops the name
            return Call(UNKNOWN_CALLEE, tuple(self.ev(a, loc) for a in e.args))
        return builtins.library_call(self, e, loc)

    def function_argument(self, name: str, e: Call) -> Call | None:
        """A function template argument (``template <T (*F)(const T&)>`` launched with
        ``silu<float>``) called in the body: the call of that function with its own template
        arguments, when the program defines it."""
        base = name.split("<")[0].strip()
        if not base.isidentifier() or self.p.function(base, len(e.args), self.caller_file()) is None:
            return None
        targs = tuple(TypeRef(a) for a in top_level_arguments(name[name.index("<"):])) if "<" in name else ()
        return Call(base, e.args, e.kw, targs)

    def run_combine(self, e: Call, loc: Loc) -> None:
        """``tl.reduce(xs, axis, combine)`` / ``tl.associative_scan``: the jit combine function runs
        once on the operands and on a peer of each (the value of the other lane it is merged with),
        so its formulas (a Chan merge of (mean, M2, n), a rescaled running max) are facts as a direct
        call's are. The reduction's own value stays the library call."""
        combine = e.args[2]
        if not isinstance(combine, Name):
            return
        operands = self.ev(e.args[0], loc)
        self.combine_with_peers(combine, list(operands.items) if isinstance(operands, Tup) else [operands], loc)

    def combine_with_peers(self, combine: Name, items: list[E], loc: Loc) -> None:
        """Run a collective's user operator on ``items`` and a peer of each; each merged part is
        kept as a local, as ``acc = combine(acc, peer)`` would unpack it."""
        fn = self.p.function(combine.id, 2 * len(items), self.caller_file())
        if fn is None or fn.kind == "kernel":
            return
        peers = [Sym(f"peer#{i}@{loc.line}", _deps(atoms(v))) for i, v in enumerate(items)]
        merged = self.inline(fn, [_Const(v) for v in items + peers], loc, targs=combine.targs)
        for part in merged.items if isinstance(merged, Tup) else (merged,):
            cell = self.new_cell(part)
            self.f.assigns.append(Assignment(loc, cell.id, None, "=", part, None, part, tuple(self.loops), tuple(self.guards)))

    def call_value(self, target: E, args: list[E], loc: Loc, e: Call) -> E:
        if isinstance(target, Lambda):
            return self.inline_lambda(target, args, loc)
        if isinstance(target, TypeRef):
            if target.name.startswith("struct:"):
                fn = self.p.method(target.name[7:], "operator()", self.caller_file())
                if fn is not None:
                    return self.inline(fn, args, loc)
            if target.name.startswith("fn:"):
                fn = self.p.function(target.name[3:], len(args))
                if fn is not None:
                    return self.inline(fn, args, loc)
        return builtins.library_call(self, Call("()", (target,) + tuple(args)), loc)

    def inline(self, fn: Func, args: list[E], loc: Loc, targs: tuple[E, ...] = (), this: E | None = None) -> E:
        if len(self.frames) > MAX_DEPTH or id(fn) in self.active or self.steps > MAX_STATEMENTS:
            vals = [self.ev(a, loc) for a in args]
            return Sym(f"call#{fn.name}", frozenset().union(*(atoms(v) for v in vals)) if vals else frozenset())
        frame = Frame(fn, [{}], {}, guard_base=len(self.guards))
        for (tname, default), targ in zip(fn.tparams, list(targs) + [None] * len(fn.tparams)):
            if targ is not None:
                frame.tbind[tname] = self.ev(targ, loc) if not isinstance(targ, TypeRef) else self.resolve_typeref(targ)
            elif default is not None:
                frame.tbind[tname] = self.ev(default, loc)
        if this is not None:
            owner_cell = self.lvalue_cell(this, loc)
            if owner_cell is not None:
                for fname, fc in owner_cell.fields.items():
                    frame.scopes[0][fname] = fc
        for i, p in enumerate(fn.params):
            if i < len(args):
                a = args[i]
                if p.ref:
                    cell = self.lvalue_cell(a, loc, create=False)
                    if cell is not None:
                        frame.scopes[0][p.name] = cell
                        continue
                v = self.ev(a, loc)
            elif p.default is not None:
                v = self.ev(p.default, loc)
            else:
                v = Sym(f"arg#{i}")
            ptype = self.resolve_type(p.type)
            typed = (p.pointer or "*" in ptype) and size_of(ptype) is not None
            if typed and isinstance(v, Ptr) and not v.shape and size_of(v.elem) is None:
                # ``T* w`` of a kernel no launch pins T, handed to a ``half* w`` parameter: the
                # call only compiles when T is half, so the pointer points at halves here
                v = Ptr(v.obj, base_type(ptype), v.off)
            frame.scopes[0][p.name] = self.new_cell(v, ptype)
        self.frames.append(frame)
        self.active.append(id(fn))
        try:
            self.block(fn.body)
        finally:
            self.active.pop()
            self.frames.pop()
        if self.host:
            return _guarded_returns(frame) or builtins.return_value(frame.returns, fn)
        return builtins.return_value(frame.returns, fn)

    def inline_lambda(self, lam: Lambda, args: list[E], loc: Loc, tbind: dict[str, E] | None = None) -> E:
        if len(self.frames) > MAX_DEPTH:
            return Sym("lambda")
        vals = [self.ev(a, loc) for a in args]
        frame = Frame(None, [dict(kv for scope in self.frame.scopes for kv in scope.items())], dict(self.frame.tbind) | (tbind or {}))
        for p, v in zip(lam.params, vals):
            frame.scopes[0][p] = self.new_cell(v)
        self.frames.append(frame)
        try:
            if isinstance(lam.body, list):
                self.block(lam.body)
            else:  # Python lambda: an expression
                frame.returns.append(self.ev(lam.body, loc))
        finally:
            self.frames.pop()
        return builtins.return_value(frame.returns, None)

    # --- helpers -----------------------------------------------------------------------------
    def cap(self, v: E) -> E:
        """Keep values small: a huge expression becomes an opaque symbol with its atoms."""
        if isinstance(v, (Num, Sym, Ptr, Load, Str)):
            return v
        if size(v, MAX_EXPR + 1) > MAX_EXPR:
            # the deps are the real atoms: earlier opaque symbols' own keys would chain (each one
            # naming the one before), making deps, and everything that reads them, grow with length
            return Sym(f"big#{hash(v) & 0xffffff}", _deps(atoms(v)))
        return v

    def resolve_type(self, t: str) -> str:
        b = base_type(t)
        for fr in reversed(self.frames):
            v = fr.tbind.get(b)
            if isinstance(v, TypeRef):
                return t.replace(b, v.name)
            m = _BOUND_MEMBER.search(t) if "::" in t and fr.tbind else None
            bound = fr.tbind.get(m.group(1)) if m is not None else None
            if isinstance(bound, TypeRef):  # ``typename Cfg::TiledMma`` with Cfg bound to a config struct
                member = self.bound_member_type(bound.name, m.group(2))
                if member is not None:
                    return t[:m.start()] + member + t[m.end():]
            break
        alias = self.p.type_alias(b)
        if alias is None and "::" in t and (m := _MEMBER_TYPE.search(t)) is not None:
            # base_type would take the ``*`` of ``Traits<sizeof(T) * N>`` for a pointer: match the spelling
            member = self.member_alias(m.group(1), m.group(2), m.group(3))
            return t[:m.start()] + member + t[m.end():] if member else t
        return t.replace(b, alias) if alias else t

    def bind_type_arguments(self, t: str) -> str:
        """``traits<kNThreads, kLogN, input_t>`` written inside a template that is bound to ``<32,
        8, float>``: the arguments that are bound template parameters spelled out
        (``traits<32, 8, float>``), so each instantiation is its own type and its members can
        be evaluated."""
        b = base_type(t)
        if "<" not in b or not b.endswith(">") or not self.frames:
            return t
        head, args = b[:b.index("<")], top_level_arguments(b[b.index("<"):])
        tbind = self.frames[-1].tbind
        out = []
        for a in args:
            v = tbind.get(a) if a.isidentifier() else None
            if isinstance(v, TypeRef) and "|" not in v.name and not v.name.startswith(("fn:", "struct:")):
                out.append(v.name)
            elif isinstance(v, Num) and isinstance(v.v, (int, bool)):
                out.append(str(int(v.v)) if not isinstance(v.v, bool) else ("true" if v.v else "false"))
            else:
                out.append(a)
        if out == args:
            return t
        return t.replace(b, head + "<" + ", ".join(out) + ">")

    def type_arguments(self, t: str) -> tuple[str, ...] | None:
        """The template arguments of a declared type, each resolved under the current bindings
        (``Op<scalar2_t, Kind::kMul>`` -> ``("half2|__nv_bfloat162", "Kind::kMul")``)."""
        b = base_type(t)
        if "<" not in b:
            return None
        inner = b[b.index("<"):b.rindex(">") + 1] if ">" in b else ""
        return tuple(base_type(self.resolve_type(a)) for a in top_level_arguments(inner)) or None

    def bound_member_type(self, struct: str, member: str) -> str | None:
        """A member type alias of a user struct a template parameter is bound to, with the
        struct's other member aliases it is written in expanded (``using Tiled =
        TiledMMA<Atom, ...>`` with ``using Atom = MMA_Atom<SM80_16x8x16_...>``): what the
        declared object really is, library atoms included."""
        owner = base_type(struct).replace("::", ".").split(".")[-1].split("<")[0].strip()
        text_ = self.p.member_type(owner, (), member)
        if text_ is None:
            return None
        for _ in range(3):
            names = set(_BARE_NAME.findall(text_))
            inner = {n: self.p.member_type(owner, (), n) for n in names if n != member}
            inner = {n: v for n, v in inner.items() if v is not None}
            if not inner:
                break
            text_ = _BARE_NAME.sub(lambda m: inner.get(m.group(1), m.group(1)), text_)
        return text_

    def member_alias(self, struct: str, args_text: str, member: str) -> str | None:
        """``Traits<sizeof(T) * N>::Type``: the member alias of the specialisation those
        arguments select, the arguments evaluated under the current bindings (16 for ``float``
        and ``N = 4``), else of the primary template."""
        args = []
        for a in _template_arguments(args_text):
            if isinstance(a, TypeRef):
                v = self.arg_value(a.name)
                args.append(str(v) if v is not None else base_type(self.resolve_type(a.name)))
            else:
                args.append(str(num(a)))
        return self.p.member_type(struct, tuple(args), member)

    def arg_value(self, text: str) -> int | None:
        """An integer template argument written as an expression: numbers, bound names,
        ``sizeof(type)``, ``+ - * / %`` and parentheses (None for anything else)."""
        expr = re.sub(r"sizeof\s*\(([^()]*)\)", lambda m: str(size_of(self.resolve_type(m.group(1).strip())) or "?"), text)
        tokens = re.findall(r"\d+|[A-Za-z_]\w*|\S", expr)
        if len(tokens) > 64:
            return None  # no template argument worth reading is this long
        values: list[int | str] = []
        known = set(self.lib_names)  # an unresolved name asked about here is not a library name the code uses
        try:
            for tok in tokens:
                if tok.isdigit():
                    values.append(int(tok))
                elif tok.isidentifier():
                    v = self.name(tok, self.f.loc)
                    if not (isinstance(v, Num) and isinstance(v.v, int)):
                        return None
                    values.append(v.v)
                elif tok in "+-*/%()":
                    values.append(tok)
                else:
                    return None
        finally:
            self.lib_names &= known
        return _integer_expression(values)

    def note_type(self, t: str) -> None:
        """Record the library type names a declaration uses (``wmma::fragment``, ``cub::BlockReduce``)."""
        for tok in _type_tokens(t):
            if tok in _KEYWORDS or self.p.is_struct(tok.split(".")[-1]) or self.p.type_alias(tok) is not None:
                continue
            if any(tok in fr.tbind for fr in self.frames[-1:]):
                continue
            self.lib_names.add(tok)

    def resolve_typeref(self, t: TypeRef) -> E:
        for fr in reversed(self.frames):
            v = fr.tbind.get(t.name)
            if v is not None and not isinstance(v, TypeRef):
                return v  # a non-type template parameter spelled like a type: kernel<T, VECS>
            break
        local = self.lookup(t.name) if t.name.isidentifier() else None
        if local is not None and not isinstance(local.value, (TypeRef, Ptr)):
            return local.value  # a local constant spelled like a type: constexpr int kVec = 16 / sizeof(T); f<T, kVec>
        c = self.constant(t.name, self.f.loc) if t.name.isidentifier() else None
        if c is not None and not isinstance(c, TypeRef):
            return c
        r = self.bind_type_arguments(self.resolve_type(t.name))
        self.note_type(r)
        if self.p.is_struct(base_type(r)):
            return TypeRef("struct:" + base_type(r))
        if self.p.function(base_type(r), -1) is not None:
            return TypeRef("fn:" + base_type(r))
        return TypeRef(r)

    def int_of(self, text: str) -> int | None:
        v = self.name(text.strip(), self.f.loc) if text.strip().isidentifier() else None
        if isinstance(v, Num) and isinstance(v.v, int):
            return v.v
        try:
            return int(text)
        except ValueError:
            return None


def _alternatives(type_name: str) -> list[str]:
    """``struct:a<1, x|y>|struct:b<2>`` -> ``["struct:a<1, x|y>", "struct:b<2>"]``: the ``|`` at
    the top level separate instantiations; one inside angle brackets belongs to an argument."""
    out, depth, cur = [], 0, ""
    for ch in type_name:
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "|" and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur]


_KEYWORDS = frozenset({"const", "volatile", "unsigned", "signed", "int", "float", "double", "char", "short", "long", "void", "bool",
                       "auto", "struct", "class", "typename", "__restrict__", "static", "constexpr", "__shared__", "extern", "register",
                       "size_t", "half", "__half", "half2", "__half2", "float2", "float4", "int4", "uint4", "uint32_t", "int32_t",
                       "int64_t", "uint64_t", "__nv_bfloat16", "__nv_bfloat162", "__grid_constant__"})


@dataclass(frozen=True, slots=True)
class _Const(E):
    """An already-resolved value carried through the statement machinery (tuple unpacking)."""

    value: E


def _itself(_interp: Interp, e: E, _loc: Loc) -> E:
    return e


# ``Interp.stmt`` by the exact type of the statement (a Pragma does nothing)
_STMT: dict[type, Callable[[Interp, Stmt], None]] = {
    Decl: Interp.decl, Assign: Interp.assign, ExprStmt: lambda i, s: i.ev(s.expr, s.loc), If: Interp.branch,
    Loop: Interp.loop, Return: Interp.ret, Asm: Interp.asm,
}

# ``Interp.ev`` by the exact type of the lowered node (no node type is subclassed)
_EV: dict[type, Callable[[Interp, E, Loc], E]] = {
    Num: _itself, Str: _itself, Sym: _itself, Ptr: _itself, Load: _itself, TypeRef: _itself, Lambda: _itself,
    _Const: lambda _i, e, _l: e.value,
    Name: lambda i, e, loc: i.name(e.id, loc),
    Op: Interp._ev_op,
    Index: Interp._ev_index,
    Attr: Interp.attr,  # methods of the same signature: no wrapper frame on the hottest path
    Cast: lambda i, e, loc: builtins.cast(i, e.type, i.ev(e.arg, loc)),
    Call: Interp.call,
    Tup: lambda i, e, loc: Tup(tuple([i.ev(x, loc) for x in e.items])),
}


COMBINING_REDUCTIONS = frozenset({"tl.reduce", "tl.associative_scan"})
# cub block/warp collectives that take a user operator as their last argument
CUB_COMBINING = frozenset({"Reduce", "AllReduce", "InclusiveScan", "ExclusiveScan"})


def _deps(keys: frozenset[str]) -> frozenset[str]:
    """The atoms a merged or capped value depends on, without the keys of earlier merged/capped
    values (their own deps are already in): otherwise each symbol names the one before it and
    dependency sets, and everything that reads them, grow with the length of the code."""
    return frozenset(k for k in keys if not k.startswith(("big#", "phi#")))


def _merge(va: E, vb: E, key: str) -> E:
    """The value of a local after a branch that set it to ``va`` on one side and ``vb`` on the
    other: an opaque symbol for the part they disagree on. What they share stays visible, so a
    pointer keeps its memory either way (``p = x + off_a`` / ``p = x + off_b`` is ``x`` plus a
    merged offset, a row start chosen by a variable-length flag)."""
    if isinstance(va, Ptr) and isinstance(vb, Ptr) and (va.obj, va.elem, va.shape) == (vb.obj, vb.elem, vb.shape):
        return Ptr(va.obj, va.elem, _merge(va.off, vb.off, key), va.shape)
    ta, tb = flatten("+", va), flatten("+", vb)
    common = [t for t in ta if t in tb]
    if common and len(common) < min(len(ta), len(tb)):
        rest_a = [t for t in ta if t not in common]
        rest_b = [t for t in tb if t not in common]
        differ = frozenset().union(*(atoms(t) for t in rest_a + rest_b))
        return Op("+", (*common, Sym(key, _deps(differ))))
    return Sym(key, _deps(atoms(va) | atoms(vb)))


def _static(v: E) -> bool:
    """A value fixed before the program runs: numbers, strings, tuples of them, and choices
    between them (``64 if m < 512 else 128``)."""
    if isinstance(v, (Num, Str)):
        return True
    if isinstance(v, Tup):
        return all(_static(x) for x in v.items)
    return isinstance(v, Op) and v.op == "?:" and len(v.args) == 3 and _static(v.args[1]) and _static(v.args[2])


def _item(value: E, i: int, n: int) -> E | None:
    """Element ``i`` of a value unpacked into ``n`` names: a tuple's item, or, for a choice between
    tuples, the choice between their items (``bm, bn = SMALL if m < 512 else LARGE``)."""
    if isinstance(value, Tup):
        return value.items[i] if len(value.items) == n else None
    if isinstance(value, Op) and value.op == "?:" and len(value.args) == 3:
        a, b = _item(value.args[1], i, n), _item(value.args[2], i, n)
        if a is None and b is None:
            return None
        a = a if a is not None else Op("[]", (value.args[1], Num(i)))  # element i of a value not known to be a tuple
        b = b if b is not None else Op("[]", (value.args[2], Num(i)))
        return a if a == b else Op("?:", (value.args[0], a, b))
    return None


def _returns(stmts: list[Stmt]) -> bool:
    """A block that ends by returning (its last statement a ``return``)."""
    return bool(stmts) and isinstance(stmts[-1], Return)


def _guarded_returns(frame: Frame) -> E | None:
    """A host helper's value as the choice its returns make: ``if m <= 64: return A`` followed by
    ``return B`` is ``A if m <= 64 else B``. Only when every return but the last was under a
    condition of its own and every returned value is fixed (launch settings); else None."""
    rets, guards = frame.returns, frame.return_guards
    if len(rets) < 2 or len(guards) != len(rets) or not all(_static(r) for r in rets):
        return None
    if any(not g for g in guards[:-1]):
        return None
    out = rets[-1]
    for value, conds in zip(reversed(rets[:-1]), reversed(guards[:-1])):
        cond = conds[0] if len(conds) == 1 else Op("and", tuple(conds))
        out = value if value == out else Op("?:", (cond, value, out))
    return out


def _is_undef(v: E) -> bool:
    return isinstance(v, Sym) and v.key.startswith("undef#")


def _stmt_exprs(s: Stmt) -> list[E]:
    if isinstance(s, ExprStmt):
        return [s.expr]
    if isinstance(s, Assign):
        return [s.value]
    if isinstance(s, Decl) and s.init is not None:
        return [s.init]
    return []


def _walk_stmts(stmts: list[Stmt]):
    for s in stmts:
        yield s
        if isinstance(s, If):
            yield from _walk_stmts(s.then)
            yield from _walk_stmts(s.orelse)
        elif isinstance(s, Loop):
            yield from _walk_stmts(s.init + s.body + s.update)


__all__ = ["Interp", "Program", "Cell", "Frame", "ONE"]


def _template_arguments(text: str) -> list[E]:
    """``128, 64, half`` -> [128, 64, TypeRef(half)]: the top-level template arguments written."""
    out: list[E] = []
    depth, cur = 0, ""
    for ch in text + ",":
        if ch == "," and depth == 0:
            item = cur.strip()
            try:
                out.append(Num(int(item.rstrip("uUlL"), 0)))
            except ValueError:
                out.append(TypeRef(item) if item else ZERO)
            cur = ""
            continue
        depth += ch in "<("
        depth -= ch in ">)"
        cur += ch
    return out


def _integer_expression(tokens: list[int | str]) -> int | None:
    """The value of ``tokens`` (integers and ``+ - * / % ( )``, C precedence, integer division),
    or None when they do not form such an expression. Evaluated here, never by Python's eval:
    the text comes from the code under analysis."""
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else None

    def take():
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def atom() -> int:
        t = take() if pos < len(tokens) else None
        if isinstance(t, int):
            return t
        if t == "-":
            return -atom()
        if t == "(":
            v = total()
            if take() != ")":
                raise ValueError
            return v
        raise ValueError

    def product() -> int:
        v = atom()
        while peek() in ("*", "/", "%"):
            op, rhs = take(), atom()
            if op == "*":
                v = v * rhs
            else:  # C truncates toward zero; the remainder has the dividend's sign
                q = abs(v) // abs(rhs)
                q = q if (v >= 0) == (rhs > 0) else -q
                v = q if op == "/" else v - q * rhs
        return v

    def total() -> int:
        v = product()
        while peek() in ("+", "-"):
            v = v + product() if take() == "+" else v - product()
        return v

    try:
        value = total()
    except (ValueError, ZeroDivisionError, IndexError):
        return None
    return value if pos == len(tokens) else None


# ``Cfg::Member`` (``Cfg`` a template parameter): parameter, member
_BOUND_MEMBER = re.compile(r"(?:\btypename\s+)?\b([A-Za-z_]\w*)\s*::\s*([A-Za-z_]\w*)")
# a bare identifier inside a type's text (not part of ``a::b`` or ``a.b``)
_BARE_NAME = re.compile(r"(?<![\w:.])([A-Za-z_]\w*)(?![\w:])")
# ``Traits<...>::Member``, after ``typename`` and qualifiers are gone: struct, arguments, member
_MEMBER_TYPE = re.compile(r"(?:\btypename\s+)?([A-Za-z_][\w:]*?)\s*<(.*)>\s*::\s*([A-Za-z_]\w*)")


@lru_cache(maxsize=8192)
def _type_tokens(t: str) -> tuple[str, ...]:
    """The names in a type's spelling, ``::`` as ``.`` (memoised: the same spellings recur)."""
    return tuple(tok.replace("::", ".") for tok in re.findall(r"[A-Za-z_][\w:]*", t))
