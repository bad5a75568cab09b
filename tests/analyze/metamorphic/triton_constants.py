"""Triton constants for transformation (d): a ``tl.constexpr`` kernel parameter always set from a
module constant <-> the kernel reading a module ``tl.constexpr`` global (see constants.py for why)."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import Assignment, MetadataWrapper, ScopeProvider

from . import pysrc
from .workspace import NotApplicable

def _tl_alias(module: cst.Module) -> str | None:
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for s in stmt.body:
                if isinstance(s, cst.Import):
                    for a in s.names:
                        if pysrc.dotted(a.name) == "triton.language":
                            return a.asname.name.value if a.asname else "triton.language"
    return None


def _is_constexpr_param(p: cst.Param) -> bool:
    return p.annotation is not None and pysrc.dotted(p.annotation.annotation).endswith("constexpr")


def _literal_of(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """The literal a module constant holds: ``8``, ``-1.5``, or ``tl.constexpr(1.44)``."""
    if isinstance(value, (cst.Integer, cst.Float)):
        return value
    if isinstance(value, cst.UnaryOperation) and isinstance(value.expression, (cst.Integer, cst.Float)):
        return value
    if isinstance(value, cst.Call) and pysrc.dotted(value.func).endswith("constexpr") and len(value.args) == 1:
        return _literal_of(value.args[0].value)
    return None


class _ModuleConstants(cst.CSTVisitor):
    """Module-level ``NAME = literal`` / ``A, B = l1, l2`` / ``NAME: T = literal`` assignments."""

    def __init__(self) -> None:
        self.values: dict[str, cst.BaseExpression] = {}
        self.count: dict[str, int] = {}
        self.depth = 0

    def visit_FunctionDef(self, node) -> None:
        self.depth += 1

    def leave_FunctionDef(self, node) -> None:
        self.depth -= 1

    def _record(self, target, value) -> None:
        if isinstance(target, cst.Name):
            self.count[target.value] = self.count.get(target.value, 0) + 1
            lit = _literal_of(value) if value is not None else None
            if lit is not None:
                self.values[target.value] = lit
        elif isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple) and len(target.elements) == len(value.elements):
            for t, v in zip(target.elements, value.elements):
                self._record(t.value, v.value)

    def visit_Assign(self, node) -> None:
        if self.depth == 0:
            for t in node.targets:
                self._record(t.target, node.value)

    def visit_AnnAssign(self, node) -> None:
        if self.depth == 0:
            self._record(node.target, node.value)


def _accesses(wrapper: MetadataWrapper) -> dict[str, list[cst.Name]]:
    """Name accesses that resolve to module-level assignments, per name."""
    out: dict[str, list[cst.Name]] = {}
    for scope in {s for s in wrapper.resolve(ScopeProvider).values() if s is not None}:
        for access in scope.accesses:
            if isinstance(access.node, cst.Name) and any(
                    isinstance(r, Assignment) and type(r.scope).__name__ == "GlobalScope" for r in access.referents):
                out.setdefault(access.node.value, []).append(access.node)
    return out


class _Inside:
    """``inside(name_node, container)``: is the Name under the container? (ids per container are
    computed once per transformation call, while the trees are alive)."""

    def __init__(self) -> None:
        self.ids: dict[int, set[int]] = {}
        self.keep: list[cst.CSTNode] = []

    def __call__(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        if id(container) not in self.ids:
            self.keep.append(container)
            self.ids[id(container)] = {id(n) for n in pysrc.name_nodes(container)}
        return id(node) in self.ids[id(container)]


def triton_param_to_global(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """(new text, [(kernel, parameter, global)]). Kernel constexpr parameters always set from a module constant -> the kernel reads the
    module constant (made a ``tl.constexpr`` global)."""
    wrapper = MetadataWrapper(cst.parse_module(text))
    module = wrapper.module
    facts = pysrc.module_facts(module)
    tl = _tl_alias(module)
    consts = _ModuleConstants()
    module.visit(consts)
    uses = _accesses(wrapper)
    _inside = _Inside()
    if tl is None:
        raise NotApplicable("no `import triton.language as ...`")
    plan: dict[str, dict[str, str]] = {}  # kernel -> {param: global}
    launch_kwargs: set[int] = set()
    for kname in sorted(facts.kernels):
        fn = facts.jit[kname]
        launches = [c for c in facts.launches if facts.callee(c) is fn]
        if not launches or any(a.star for c in launches for a in c.args):
            continue
        for p in fn.params.params:
            if not _is_constexpr_param(p) or p.default is not None:
                continue
            given = [a for c in launches for a in c.args if a.keyword is not None and a.keyword.value == p.name.value]
            if len(given) != len(launches) or not all(isinstance(a.value, cst.Name) for a in given):
                continue
            names = {a.value.value for a in given}
            if len(names) != 1:
                continue
            g = names.pop()
            if consts.count.get(g) != 1 or g not in consts.values:
                continue
            host_uses = [u for u in uses.get(g, []) if not any(u is a.value for a in given)
                         and not any(_inside(u, f) for f in facts.jit.values())]
            if host_uses:
                continue  # the host computes with it: a tl.constexpr there would change that code
            plan.setdefault(kname, {})[p.name.value] = g
            launch_kwargs |= {id(a) for a in given}
    if not plan:
        raise NotApplicable("no kernel constexpr parameter is always set from a module constant")
    globals_done = {g for m in plan.values() for g in m.values()}

    class Rewrite(cst.CSTTransformer):
        def __init__(self) -> None:
            self.kernel: str | None = None

        def visit_FunctionDef(self, node) -> None:
            if node.name.value in plan:
                self.kernel = node.name.value

        def leave_FunctionDef(self, original, updated):
            if original.name.value in plan:
                self.kernel = None
                drop = plan[original.name.value]
                # filter on the original names: leave_Name has already renamed the parameter
                # to its global where the two names differ (STAGES -> _STAGES)
                params = [u for o, u in zip(original.params.params, updated.params.params) if o.name.value not in drop]
                if params:
                    params[-1] = params[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                return updated.with_changes(params=updated.params.with_changes(params=params))
            return updated

        def leave_Name(self, original, updated):
            if self.kernel is not None and original.value in plan[self.kernel]:
                return updated.with_changes(value=plan[self.kernel][original.value])
            return updated

        def leave_Call(self, original, updated):
            keep = [a for o, a in zip(original.args, updated.args) if id(o) not in launch_kwargs]
            if len(keep) != len(updated.args) and keep:
                keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(args=keep)

        def leave_Integer(self, original, updated):
            return self._wrap(original, updated)

        def leave_Float(self, original, updated):
            return self._wrap(original, updated)

        def _wrap(self, original, updated):
            for g in globals_done:
                if consts.values.get(g) is original:
                    return cst.parse_expression(f"{tl}.constexpr({updated.value})")
            return updated

    new = module.visit(Rewrite())
    done = [(k, p, g) for k, m in plan.items() for p, g in m.items()]
    return new.code, done


def triton_global_to_param(text: str) -> tuple[str, list[tuple[str, str]]]:
    """(new text, [(kernel, global)]). Module constants read inside kernels -> a ``tl.constexpr`` parameter of each of those kernels,
    given at every launch; the module constant goes when nothing else reads it."""
    wrapper = MetadataWrapper(cst.parse_module(text))
    module = wrapper.module
    facts = pysrc.module_facts(module)
    tl = _tl_alias(module)
    consts = _ModuleConstants()
    module.visit(consts)
    uses = _accesses(wrapper)
    _inside = _Inside()
    if tl is None:
        raise NotApplicable("no `import triton.language as ...`")
    plan: dict[str, list[str]] = {}  # kernel -> globals
    moved: set[str] = set()
    for g, lit in sorted(consts.values.items()):
        if consts.count.get(g) != 1:
            continue
        readers = {k for k, fn in facts.jit.items() if any(_inside(u, fn) for u in uses.get(g, []))}
        if not readers or readers & facts.jit_helpers:
            continue  # read only on the host, or inside a helper that has no launch to take it
        ok = True
        for k in readers:
            fn = facts.jit[k]
            launches = [c for c in facts.launches if facts.callee(c) is fn]
            if not launches or any(p.default is not None for p in fn.params.params) or \
                    fn.params.star_arg is not cst.MaybeSentinel.DEFAULT or fn.params.star_kwarg is not None \
                    or g in pysrc.param_names(fn):
                ok = False
        if not ok:
            continue
        for k in readers:
            plan.setdefault(k, []).append(g)
        others = [u for u in uses.get(g, []) if not any(_inside(u, facts.jit[k]) for k in readers)]
        if not others:
            moved.add(g)
    if not plan:
        raise NotApplicable("no module constant is read inside a launched kernel")
    literal_code = {g: module.code_for_node(consts.values[g]) for gs in plan.values() for g in gs}
    launch_to_kernel = {id(c): facts.callee(c).name.value for c in facts.launches}

    class Rewrite(cst.CSTTransformer):
        def leave_FunctionDef(self, original, updated):
            if original.name.value not in plan:
                return updated
            params = list(updated.params.params)
            tail = params[-1].whitespace_after_param if params else cst.SimpleWhitespace("")
            if params:  # the new parameters go after the last one, before its trailing layout
                params[-1] = params[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
                                                     whitespace_after_param=cst.SimpleWhitespace(""))
            for g in plan[original.name.value]:
                params.append(cst.Param(cst.Name(g), cst.Annotation(cst.parse_expression(f"{tl}.constexpr")),
                                        comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
            params[-1] = params[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_param=tail)
            return updated.with_changes(params=updated.params.with_changes(params=params))

        def leave_Call(self, original, updated):
            k = launch_to_kernel.get(id(original))
            if k not in plan:
                return updated
            args = list(updated.args)
            star = [a for a in args if a.star]
            plain = [a for a in args if not a.star]
            added = [cst.Arg(value=cst.parse_expression(literal_code[g]), keyword=cst.Name(g),
                             equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
                     for g in plan[k]]
            tail = args[-1].whitespace_after_arg
            args = plain + added + star
            args = [a if isinstance(a.comma, cst.Comma) else
                    a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
                                   whitespace_after_arg=cst.SimpleWhitespace("")) for a in args[:-1]] + \
                [args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=tail)]
            return updated.with_changes(args=args)

        def leave_SimpleStatementLine(self, original, updated):
            body = original.body
            if len(body) == 1 and isinstance(body[0], (cst.Assign, cst.AnnAssign)):
                target = body[0].targets[0].target if isinstance(body[0], cst.Assign) else body[0].target
                if isinstance(target, cst.Name) and target.value in moved:
                    return cst.RemoveFromParent()
            return updated

    new = module.visit(Rewrite())
    done = [(k, g) for k, gs in plan.items() for g in gs]
    return new.code, done
