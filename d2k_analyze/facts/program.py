"""The code around a kernel, as the interpreter sees it: one :class:`Program` per language and
submission, answering "what is this name?" (a user function, a functor, a constant, a type
alias) and lowering functions on first use."""

from __future__ import annotations

import re
from itertools import product

from ..parsing.cuda import CudaFunction, CudaSource
from ..parsing.liveness import UNKNOWN, literal_value
from ..parsing.python import PyFunction, PySource, resolve_reference
from ..parsing.treesitter import Node, of_types_unordered, text, walk
from .expr import E, Name, Num, Str, Sym, TypeRef
from .ir import Func
from .types import top_level_arguments
from .lower_cuda import CudaLowering
from .lower_python import PythonLowering, imports
from ..parsing.translation_units import file_scope


def _value_expr(v: object) -> E | None:
    if isinstance(v, bool) or isinstance(v, (int, float)):
        return Num(v)
    if isinstance(v, str):
        return Str(v)
    if v is None:
        return Sym("none")
    return None


class CudaProgram:
    language = "cuda"

    def __init__(self, sources: list[CudaSource], scope=None):
        self.sources = sources
        self.aliases: dict[str, str] = {}
        self.types: dict[str, str] = {}
        self.member_types: dict[str, str] = {}
        self.partials: dict[str, list[tuple[str, tuple[str, ...]]]] = {}  # struct -> (spelling, its parameters)
        self.structs: set[str] = set()
        self.fields: dict[str, list[str]] = {}
        self.arrays: dict[str, set[str]] = {}
        self.member_types_of: dict[str, dict[str, str]] = {}
        self.by_name: dict[str, list[CudaFunction]] = {}
        self.methods: dict[tuple[str, str], list[CudaFunction]] = {}
        self.scope = scope if scope is not None else file_scope(sources)
        self.constant_nodes: dict[str, list[tuple[CudaSource, Node]]] = {}
        self.constant_text: dict[str, str] = {}
        for src in sources:
            self.aliases.update(src.namespace_aliases)
            self.types.update(src.type_aliases)
            self.member_types.update(src.member_types)
            for spelled, params in src.partial_specialisations.items():
                self.partials.setdefault(spelled.split("<")[0], []).append((spelled, params))
            self.structs |= set(src.struct_templates)
            for sname, members in src.struct_fields.items():
                self.fields.setdefault(sname, members)
            for sname, members in src.struct_arrays.items():
                self.arrays.setdefault(sname, members)
            for sname, types in src.struct_member_types.items():
                self.member_types_of.setdefault(sname, types)
            for fn in src.functions:
                if fn.owner:
                    self.methods.setdefault((fn.owner, fn.name), []).append(fn)
                else:
                    self.by_name.setdefault(fn.name, []).append(fn)
            for name, node in src.constant_nodes.items():
                for key in dict.fromkeys((name, name.split("::")[-1])):
                    self.constant_nodes.setdefault(key, []).append((src, node))
            for name, value in src.constants.items():
                self.constant_text.setdefault(name, value)
        for name, hit in _set_once_variables(sources).items():
            self.constant_nodes.setdefault(name, [hit])
        self._lowered: dict[int, Func] = {}
        self._nodes: dict[int, object] = {}  # id(lowered Func) -> tree-sitter node it came from
        self._const: dict[tuple[str, str], E | None] = {}
        self._functions: dict[tuple[str, int, str], Func | None] = {}

    def lowering(self, src: CudaSource) -> CudaLowering:
        return CudaLowering(src.file, src.line, [(n.start_byte, n.end_byte) for n in src.dead_preproc] + src.dead_ranges, src.pragmas, self.aliases)

    def struct_params(self, name: str) -> list[tuple[str, str]]:
        """The template parameters (name, kind) of a user struct, in order."""
        for src in self.sources:
            if name in src.struct_templates:
                return src.struct_templates[name]
        return []

    def node_of(self, func: Func):
        """The tree-sitter node a lowered function came from."""
        return self._nodes.get(id(func))

    def lower(self, fn: CudaFunction) -> Func:
        key = id(fn.node)
        out = self._lowered.get(key)
        if out is None:
            kind = "kernel" if fn.is_kernel else ("device" if fn.is_device else "host")
            low = self.lowering(fn.source)
            tparams = [(n, _literal(d)) for n, d in fn.template_params]
            attrs = tuple(a for row, a in fn.source.attributes if fn.node.start_point[0] - 2 <= row <= (fn.node.child_by_field_name("body") or fn.node).start_point[0])
            attrs += tuple(text(c) for c in walk(fn.node.child_by_field_name("declarator") or fn.node) if c.type == "launch_bounds")
            attrs += tuple(text(c) for c in fn.node.children if c.type == "launch_bounds")
            out = low.function(fn.node, fn.name, kind, tparams, frozenset(fn.qualifiers), attrs)
            self._lowered[key] = out
            self._nodes[id(out)] = fn.node
        return out

    def overloads(self, name: str, nargs: int) -> list[Func]:
        """Every user function of that name whose arity fits (host code: types cannot pick one)."""
        short = name.split(".")[-1].split("::")[-1]
        out = []
        for fn in self.by_name.get(short, []):
            if fn.node.child_by_field_name("body") is None:
                continue
            func = self.lower(fn)
            required = sum(1 for p in func.params if p.default is None)
            if required <= nargs <= len(func.params):
                out.append(func)
        return out

    def function(self, name: str, nargs: int, near: str = "") -> Func | None:
        """The user function a call of ``name`` with ``nargs`` arguments reaches (``nargs < 0``:
        any arity), lowered; a definition in the caller's file (``near``) first. Memoised, since
        the interpreter asks it for every call and every name it resolves and the answer depends
        on the (fixed) sources alone."""
        return _memoised(self._functions, (name, nargs, near), self._function)

    def _function(self, key: tuple[str, int, str]) -> Func | None:
        name, nargs, near = key
        short = name.split(".")[-1].split("::")[-1]
        cands = self.by_name.get(short)
        if not cands:
            return None
        body_cands = [f for f in cands if f.node.child_by_field_name("body") is not None] or cands
        body_cands = sorted(body_cands, key=lambda f: self.scope.rank(near, f.source.file))  # stable: what the caller's file sees first
        if nargs < 0:
            return self.lower(body_cands[0])
        for fn in body_cands:  # overloads: the one whose arity fits (defaults may be left out)
            func = self.lower(fn)
            required = sum(1 for p in func.params if p.default is None)
            if required <= nargs <= len(func.params) or any("..." in p.type for p in func.params):
                return func
        return None

    def method(self, owner: str, name: str, near: str = "", targs: tuple[str, ...] | None = None) -> Func | None:
        """``owner``'s method ``name``; with the object's template arguments (``targs``, resolved
        types or values), the one of the struct specialisation they select: ``Op<float, kMul>``
        calls the ``kMul`` specialisation's ``operator()``, not the first one defined."""
        fns = self.methods.get((owner, name))
        if fns and targs and any(f.owner_spelling for f in fns):
            fitting = sorted((f for f in fns if _serves(f, targs)), key=lambda f: len(f.owner_params))
            fns = fitting[:1] or fns  # the most specific fitting specialisation, else any
        return self.lower(min(fns, key=lambda f: self.scope.rank(near, f.source.file))) if fns else None

    def method_by_name(self, name: str, nargs: int) -> Func | None:
        """A method of some user struct, when the object's type is a template parameter the
        interpreter could not bind (``LOAD load; load.template load<N>(...)``): the struct
        methods of that name and arity are the only candidates the code can be calling."""
        for (owner, mname), fns in self.methods.items():
            for fn in fns:
                if mname == name and (nargs < 0 or len(fn.params) == nargs):
                    return self.lower(fn)
        return None

    def constant(self, name: str, near: str = "") -> E | None:
        """The value of a file constant as the code of ``near`` sees it: its own file's
        definition, an included one, a header's, and only then another program's."""
        key = (name, near)
        if key in self._const:
            return self._const[key]
        out: E | None = None
        hits = self.constant_nodes.get(name) or self.constant_nodes.get(name.replace(".", "::"))
        if hits:
            src, node = min(hits, key=lambda h: self.scope.rank(near, h[0].file))
            out = self.lowering(src).expr(node)
        elif name in self.constant_text:
            v = literal_value(self.constant_text[name], None, "cuda")
            out = _value_expr(v) if v is not UNKNOWN else None
        self._const[key] = out
        return out

    def is_struct(self, name: str) -> bool:
        return name.split("<")[0] in self.structs

    def struct_fields(self, name: str) -> list[str]:
        """A user struct's data members in declaration order (empty when unknown)."""
        return self.fields.get(name.split("<")[0].split("::")[-1].strip(), [])

    def struct_arrays(self, name: str) -> set[str]:
        """A user struct's data members declared as arrays held in the struct (empty when unknown)."""
        return self.arrays.get(name.split("<")[0].split("::")[-1].strip(), set())

    def struct_member_type(self, name: str, member: str) -> str:
        """The declared type of a plain data member of a user struct ('' when unknown)."""
        return self.member_types_of.get(name.split("<")[0].split("::")[-1].strip(), {}).get(member, "")

    def type_alias(self, name: str) -> str | None:
        return self.types.get(name)

    def member_type(self, struct: str, args: tuple[str, ...], member: str) -> str | None:
        """``Traits<args>::member``: the specialisation these (resolved) arguments select, explicit
        or partial (``template <typename T> struct Op<T, kSum>``, its parameters bound from the
        arguments), else the primary template's member alias. A namespace qualifier is not part
        of the struct's name, and an argument bound to several types (``at::Half|at::BFloat16``
        from a dtype dispatch) selects for each: the answer is every type they select."""
        struct = struct.split("::")[-1].strip()
        if args:
            found = [self._specialised_member(struct, combo, member) for combo in product(*(a.split("|") for a in args))]
            if found and all(found):
                return "|".join(dict.fromkeys(found))
        return self.member_types.get(f"{struct}::{member}")

    def _specialised_member(self, struct: str, args: tuple[str, ...], member: str) -> str | None:
        hit = self.member_types.get(f"{struct}<{','.join(args)}>::{member}")
        if hit is not None:
            return hit
        for spelled, params in self.partials.get(struct, ()):
            pattern = top_level_arguments(spelled[len(struct):])
            if len(pattern) != len(args) or not all(p == a or p in params for p, a in zip(pattern, args)):
                continue
            alias = self.member_types.get(f"{spelled}::{member}")
            if alias is not None:
                bound = {p: a for p, a in zip(pattern, args) if p in params}
                return re.sub(r"[A-Za-z_]\w*", lambda m: bound.get(m.group(0), m.group(0)), alias)
        return None

    def kernels(self) -> list[CudaFunction]:
        return [f for fns in self.by_name.values() for f in fns if f.is_kernel]


_MISSING = object()


def _serves(fn: CudaFunction, targs: tuple[str, ...]) -> bool:
    """A method of a specialisation whose pattern these arguments fit: at each position the
    pattern names the argument (or one alternative of a dispatched ``a|b`` type) or is one of
    the specialisation's own parameters. A method of the primary template fits nothing here: a
    fitting specialisation is preferred, and the caller falls back to all."""
    if not fn.owner_spelling:
        return False
    pattern = top_level_arguments(fn.owner_spelling[fn.owner_spelling.index("<"):])
    if len(pattern) != len(targs):
        return False
    return all(p == a or p in fn.owner_params or p in a.split("|") for p, a in zip(pattern, ("".join(t.split()) for t in targs)))


def _memoised(memo: dict, key, compute):
    """``memo[key]``, computed by ``compute(key)`` the first time (None is a remembered answer)."""
    out = memo.get(key, _MISSING)
    if out is _MISSING:
        out = memo[key] = compute(key)
    return out


def _set_once_variables(sources: list[CudaSource]) -> dict[str, tuple[CudaSource, Node]]:
    """File-scope variables that host code sets exactly once and device code never writes
    (``static int sms;`` ... ``sms = prop.multiProcessorCount;`` in an init function): for a
    launch they hold that value, as a constant does."""
    declared = set().union(*(src.file_variables for src in sources)) if sources else set()
    writes: dict[str, list[tuple[CudaSource, Node, bool]]] = {}
    if not declared:
        return {}
    for src in sources:
        for fn in src.functions:
            body = fn.node.child_by_field_name("body")
            if body is None:
                continue
            shadowed = {text(d) for d in of_types_unordered(fn.node, "cuda", ("init_declarator", "parameter_declaration"))
                        for d in [d.child_by_field_name("declarator")] if d is not None and d.type == "identifier"}
            for n in of_types_unordered(body, "cuda", ("assignment_expression", "update_expression")):
                left = n.child_by_field_name("left") or n.child_by_field_name("argument")
                if left is not None and left.type == "identifier" and text(left) in declared - shadowed:
                    plain = n.type == "assignment_expression" and text(n.child_by_field_name("operator") or n)[:1] == "="
                    from_host = plain and not (fn.is_kernel or fn.is_device)
                    writes.setdefault(text(left), []).append((src, n.child_by_field_name("right"), from_host))
    return {name: (w[0][0], w[0][1]) for name, w in writes.items() if len(w) == 1 and w[0][2] and w[0][1] is not None}


def _literal(text_: str) -> E | None:
    if not text_:
        return None
    v = literal_value(text_, None, "cuda")
    if v is UNKNOWN:
        t = text_.strip()
        return TypeRef(t) if re.fullmatch(r"[\w:<>, *]+", t) else None
    return _value_expr(v)


LIBRARY_ROOTS = ("tl", "triton", "torch", "libdevice", "math", "numpy", "np", "os", "functools")


class PyProgram:
    language = "triton"

    def __init__(self, sources: list[PySource]):
        self.sources = sources
        self.by_name: dict[str, list[tuple[PySource, PyFunction]]] = {}
        self.tables: dict[str, dict[str, str]] = {}
        self.module_assigns: dict[str, tuple[PySource, Node]] = {}
        self.aliases: dict[str, str] = {}
        for py in sources:
            self.tables[py.file] = imports(py.tree.root_node)
            self.aliases.update(py.aliases)
            for fn in py.functions:
                if not fn.is_class:
                    self.by_name.setdefault(fn.name, []).append((py, fn))
            for mn in py.module_nodes:
                if mn.type != "expression_statement" or not mn.named_children:
                    continue
                a = mn.named_children[0]
                if a.type != "assignment":
                    continue
                left, right = a.child_by_field_name("left"), a.child_by_field_name("right")
                if left is not None and right is not None and left.type == "identifier":
                    self.module_assigns.setdefault(text(left), (py, right))
        self._lowered: dict[int, Func] = {}
        self._const: dict[tuple[str, str], E | None] = {}
        self._functions: dict[tuple[str, int, str], Func | None] = {}

    def lowering(self, py: PySource) -> PythonLowering:
        return PythonLowering(py.file, self.tables.get(py.file, {}))

    def lower(self, py: PySource, fn: PyFunction) -> Func:
        key = id(fn.node)
        out = self._lowered.get(key)
        if out is None:
            out = self.lowering(py).function(fn.node, fn.name, "jit" if fn.is_jit else "host")
            self._lowered[key] = out
        return out

    def function(self, name: str, nargs: int, near: str = "") -> Func | None:
        """A user function by (possibly module-qualified) name; library paths never are. A bare
        name is the caller's module's own definition when it has one (memoised: see
        :meth:`CudaProgram.function`)."""
        return _memoised(self._functions, (name, nargs, near), self._function)

    def _function(self, key: tuple[str, int, str]) -> Func | None:
        name, _, near = key
        if name.startswith("("):
            return None
        parts = name.lstrip(".").split(".")  # from .helpers import f: a module of the submission
        if len(parts) > 1 and parts[0] in LIBRARY_ROOTS:
            return None
        key = self.aliases.get(parts[-1], parts[-1])
        cands = self.by_name.get(key)
        if not cands:
            return None
        py, fn = resolve_reference(cands, ".".join(parts[:-1] + [key]), near)
        return self.lower(py, fn)

    def method(self, owner: str, name: str, near: str = "") -> Func | None:
        return None

    def method_by_name(self, name: str, nargs: int) -> Func | None:
        return None

    def constant(self, name: str, near: str = "") -> E | None:
        if name in self._const:
            return self._const[name]
        out = None
        hit = self.module_assigns.get(name)
        if hit is not None:
            py, node = hit
            low = self.lowering(py)
            low.locals = set()
            out = low.expr(node)
        self._const[name] = out
        return out

    def is_struct(self, name: str) -> bool:
        return False

    def struct_fields(self, name: str) -> list[str]:
        return []

    def type_alias(self, name: str) -> str | None:
        return None

    def member_type(self, struct: str, args: tuple[str, ...], member: str) -> str | None:
        return None


__all__ = ["CudaProgram", "PyProgram", "Name"]
