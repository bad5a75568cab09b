"""(c) Moving a helper: a ``__device__`` function into ``helpers.cuh``, or a ``@triton.jit``
helper into ``jit_helpers.py``, included / imported from where it was.

Why: real code keeps its reductions, copy wrappers and index helpers in headers and utility
modules; an analyzer that only follows calls within one file loses them (and the properties they
carry). The moved helper is the largest one reachable from a launched kernel, so the move
matters for the findings.

CUDA: a helper that uses nothing else the file declares goes into a self-contained header
included at the top of the file; one that does (file constants, types, other helpers) is replaced
by ``#include "helpers.cuh"`` where it stood, so every name it uses is still declared before it.
``load_inline`` compiles a copy of the source in a build folder, so the submission's
``load_inline`` call also gets ``extra_include_paths`` naming the submission folder.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import Assignment, ImportAssignment, MetadataWrapper, ScopeProvider

from . import cpp, pysrc
from .workspace import NotApplicable, Submission

HEADER = "helpers.cuh"
MODULE = "jit_helpers"

# ---------------------------------------------------------------------------------------------
# CUDA


def _qualifiers(fn: cpp.Node) -> set[str]:
    return {cpp.node_text(c) for c in fn.children if c.type not in ("function_declarator", "compound_statement")}


def _calls(node: cpp.Node) -> set[str]:
    out = set()
    for n in cpp.walk(node):
        if n.type == "call_expression":
            f = n.child_by_field_name("function")
            if f is not None and f.type == "template_function":
                f = f.child_by_field_name("name")
            if f is not None and f.type == "qualified_identifier":
                f = f.child_by_field_name("name")
            if f is not None and f.type == "identifier":
                out.add(cpp.node_text(f))
    return out


def _namespace_scope(item: cpp.Node) -> str:
    """'global' at file scope, 'namespace' inside a namespace body, 'other' elsewhere."""
    p = item.parent
    if p is not None and p.type == "translation_unit":
        return "global"
    if p is not None and p.type == "declaration_list" and p.parent is not None and p.parent.type == "namespace_definition":
        return "namespace"
    return "other"


def _function_items(root: cpp.Node) -> dict[str, list[cpp.Node]]:
    """Top-level items (definitions, prototypes, specialisations) per function name."""
    out: dict[str, list[cpp.Node]] = {}
    for n in cpp.walk(root):
        if n.type == "function_definition" or (n.type == "declaration" and any(
                x.type == "function_declarator" for x in n.named_children)):
            name = cpp.function_name(n) if n.type == "function_definition" else cpp.node_text(
                cpp.declarator_name(n.child_by_field_name("declarator")) or n)
            out.setdefault(name, []).append(cpp.top_level_item(n))
    return out


def _contiguous(items: list[cpp.Node]) -> bool:
    """Siblings with nothing but comments between them (so that they move as one block)."""
    items = sorted(items, key=lambda n: n.start_byte)
    for a, b in zip(items, items[1:]):
        if a.parent != b.parent:
            return False
        n = a.next_sibling
        while n is not None and n != b:
            if n.type != "comment":
                return False
            n = n.next_sibling
    return True


def _cuda_candidates(root: cpp.Node) -> list[tuple[str, list[cpp.Node]]]:
    """Free ``__device__`` helpers reachable from a kernel, as (name, items): a single
    definition, or an overload set / template with its specialisations when they stand together.
    Single definitions first, largest first."""
    fns = cpp.functions(root)
    by_name = {cpp.function_name(f): f for f in fns}
    reach: set[str] = set()
    todo = [f for f in fns if cpp.is_kernel(f)]
    while todo:
        f = todo.pop()
        for c in _calls(f) - reach:
            reach.add(c)
            if c in by_name:
                todo.append(by_name[c])
    out = []
    for name, items in _function_items(root).items():
        defs = [f for f in fns if cpp.function_name(f) == name]
        if name not in reach or not defs or not _contiguous(items):
            continue
        if any("__device__" not in _qualifiers(f) or cpp.is_kernel(f) for f in defs):
            continue
        if any(_namespace_scope(i) == "other" for i in items):
            continue  # methods, local declarations
        out.append((name, sorted(items, key=lambda n: n.start_byte)))
    return sorted(out, key=lambda c: (len(c[1]) > 1, -sum(i.end_byte - i.start_byte for i in c[1])))


def _leading_comment_start(item: cpp.Node) -> int:
    """Start byte of the comment lines directly above ``item`` (they move with it)."""
    start, prev = item.start_byte, item.prev_sibling
    while prev is not None and prev.type == "comment" and item.start_point[0] - prev.end_point[0] <= 1:
        start, item, prev = prev.start_byte, prev, prev.prev_sibling
    return start


def _uses_file_names(item: cpp.Node, root: cpp.Node, group: list[cpp.Node]) -> bool:
    own = set().union(*(cpp.declarations(g).all() | cpp.declarations(g).names for g in group))
    file_names = cpp.declarations(root)
    others = (file_names.all() | file_names.kernels) - own
    used = {cpp.node_text(n) for n in cpp.walk(item) if n.type in cpp.NAME_LEAVES}
    return bool(used & others)


def move_cuda_helper(text: str) -> tuple[str, str, str]:
    """(new kernel text, header text, helper name)."""
    tree = cpp.parse(text)
    root = tree.root_node
    candidates = _cuda_candidates(root)
    if not candidates:
        raise NotApplicable("no free __device__ helper called from a kernel")
    name, items = candidates[0]
    start, end = _leading_comment_start(items[0]), items[-1].end_byte
    helper = text.encode("utf-8")[start:end].decode("utf-8")
    if any(_uses_file_names(i, root, items) for i in items) or _namespace_scope(items[0]) != "global":
        header = f"#pragma once\n// moved from kernel.cu, included where it stood\n{helper}\n"
        new = cpp.apply_edits(text, [cpp.Edit(start, end, f'#include "{HEADER}"')])
        return new, header, name
    includes = [n for n in root.children if n.type == "preproc_include" and n.end_byte <= start]
    system = "".join(cpp.node_text(n).rstrip("\n") + "\n" for n in includes)
    header = f"#pragma once\n{system}\n{helper}\n"
    anchor = includes[-1].end_byte if includes else 0
    edits = [cpp.Edit(start, end, ""), cpp.Edit(anchor, anchor, f'\n#include "{HEADER}"\n')]
    return cpp.apply_edits(text, edits), header, name


class _AddIncludePath(cst.CSTTransformer):
    """``load_inline(...)`` gets ``extra_include_paths=[<this folder>]`` (it builds elsewhere)."""

    def __init__(self) -> None:
        self.changed = 0

    def leave_Call(self, original, updated):
        if pysrc.dotted(original.func).split(".")[-1] != "load_inline":
            return updated
        if any(a.keyword is not None and a.keyword.value == "extra_include_paths" for a in updated.args):
            raise NotApplicable("load_inline already has extra_include_paths")
        self.changed += 1
        folder = cst.parse_expression("[os.path.dirname(os.path.abspath(__file__))]")
        args = list(updated.args)
        if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(cst.Arg(keyword=cst.Name("extra_include_paths"), value=folder,
                            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
        return updated.with_changes(args=args)


def _ensure_import(module: cst.Module, statement: str) -> cst.Module:
    """Add ``statement`` after the last top-level import (or the __future__ import) if missing."""
    code = module.code
    if statement in code.splitlines():
        return module
    body = list(module.body)
    last = -1
    for i, stmt in enumerate(body):
        if isinstance(stmt, cst.SimpleStatementLine) and any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
            last = i
    body.insert(last + 1, cst.parse_statement(statement + "\n"))
    return module.with_changes(body=body)


def _with_include_path(py_text: str) -> str:
    module = cst.parse_module(py_text)
    adder = _AddIncludePath()
    module = module.visit(adder)
    if not adder.changed:
        return py_text
    return _ensure_import(module, "import os").code


# ---------------------------------------------------------------------------------------------
# Triton


def _module_dependencies(wrapper: MetadataWrapper, fn: cst.FunctionDef) -> set[str]:
    """Module-level names (other than imports) that ``fn`` reads."""
    scopes = wrapper.resolve(ScopeProvider)
    out = set()
    for node in pysrc.name_nodes(fn):
        scope = scopes.get(node)
        if scope is None:
            continue
        for access in scope.accesses:
            if access.node is node:
                for r in access.referents:
                    if isinstance(r, Assignment) and not isinstance(r, ImportAssignment) \
                            and r.scope is not scope and type(r.scope).__name__ == "GlobalScope" and r.node is not fn:
                        out.add(r.name)
    return out


def move_triton_helper(py_text: str) -> tuple[str, str, str]:
    """(new submission text, jit_helpers.py text, helper name)."""
    wrapper = MetadataWrapper(cst.parse_module(py_text))
    module = wrapper.module
    facts = pysrc.module_facts(module)
    candidates = []
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value in facts.jit_helpers:
            deps = _module_dependencies(wrapper, stmt)
            candidates.append((stmt, deps))
    movable = [(fn, deps) for fn, deps in candidates if not deps]
    if not movable:
        reason = "no @triton.jit helper called from another jit function" if not candidates else \
            f"its jit helpers read module globals ({sorted(set().union(*(d for _, d in candidates)))})"
        raise NotApplicable(reason)
    fn = max(movable, key=lambda x: len(module.code_for_node(x[0])))[0]
    imports = [s for s in module.body if isinstance(s, cst.SimpleStatementLine)
               and any(isinstance(x, (cst.Import, cst.ImportFrom)) for x in s.body)]
    helper_module = cst.Module(body=[*imports, fn.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])],
                               header=[cst.EmptyLine(comment=cst.Comment(
                                   "# @triton.jit helper moved out of submission.py"))])
    rest = module.with_changes(body=[s for s in module.body if s is not fn])
    rest = _ensure_import(rest, f"from {MODULE} import {fn.name.value}")
    return rest.code, helper_module.code, fn.name.value


# ---------------------------------------------------------------------------------------------


def move_helper(sub: Submission) -> Submission:
    files = dict(sub.files)
    cu = [p for p in sub.cpp_files() if p.endswith(".cu")]
    if cu:
        reasons = []
        for path in cu:
            try:
                new, header, name = move_cuda_helper(sub.files[path])
            except NotApplicable as exc:
                reasons.append(f"{path}: {exc}")
                continue
            if HEADER in files:
                raise NotApplicable(f"{HEADER} already exists")
            files[path], files[HEADER] = new, header
            for py in sub.python_files():
                files[py] = _with_include_path(files[py])
            return sub.with_files(files, f"moved __device__ {name} from {path} into {HEADER}",
                                  helper=name, source=path, target=HEADER, language="cuda")
        raise NotApplicable("; ".join(reasons))
    reasons = []
    for path in sub.python_files():
        try:
            new, helper, name = move_triton_helper(sub.files[path])
        except NotApplicable as exc:
            reasons.append(f"{path}: {exc}")
            continue
        if f"{MODULE}.py" in files:
            raise NotApplicable(f"{MODULE}.py already exists")
        files[path], files[f"{MODULE}.py"] = new, helper
        return sub.with_files(files, f"moved @triton.jit {name} from {path} into {MODULE}.py",
                              helper=name, source=path, target=f"{MODULE}.py", language="triton")
    raise NotApplicable("; ".join(reasons) or "no Python source")
