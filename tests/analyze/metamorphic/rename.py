"""(a) Alpha-renaming: every identifier the submission declares gets a meaningless name.

Why: an agent does not name its Welford mean ``mean`` or its padding ``kPad``; a detector must
recognise the code, not our vocabulary. One map ``old -> vN`` is used across all files of a
submission, Python and C++ alike, so that what one file declares and another uses (an ``extern
"C"`` launcher, a pybind function, a Triton parameter named in an autotune key) stays linked.

Not renamed: library names (everything the submission does not declare), kernel names (the
corpus labels key on them: ``__global__`` functions and ``@triton.jit`` functions not called
from other jit code), the entry points the harness looks up (``run``, ``ModelNew``, ...),
dunders, and callback parameters a library passes by keyword. Comments and docstrings have the
renamed words replaced too, so that no old name is left anywhere for an analyzer to read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import Assignment, ImportAssignment, MetadataWrapper, ScopeProvider

from . import cpp, pysrc
from .workspace import NotApplicable, Submission

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class RenamePlan:
    """The names found and the map applied (kept for the checks that the rename really happened)."""

    mapping: dict[str, str] = field(default_factory=dict)
    kept: set[str] = field(default_factory=set)
    cpp_declared: set[str] = field(default_factory=set)
    py_declared: set[str] = field(default_factory=set)
    pybind_functions: set[str] = field(default_factory=set)


# ---------------------------------------------------------------------------------------------
# C++


def _cpp_units(sub: Submission) -> list[tuple[str, str]]:
    """(label, text) of every C++ translation unit: files, and strings embedded in Python."""
    units = [(p, sub.files[p]) for p in sub.cpp_files()]
    for p in sub.python_files():
        module = cst.parse_module(sub.files[p])
        for i, s in enumerate(pysrc.embedded_cpp_strings(module)):
            units.append((f"{p}#cpp{i}", pysrc.string_value(s)))
    return units


def _tu_declarations(sub: Submission, text: str) -> cpp.Declarations:
    """Declarations of one TU, with those of the submission's own headers it includes."""
    tree = cpp.parse(text)
    decl = cpp.declarations(tree.root_node)
    for inc in cpp.local_includes(tree.root_node):
        if inc in sub.files:
            decl.merge(cpp.declarations(cpp.parse(sub.files[inc]).root_node))
    return decl


def rename_cpp(text: str, decl: cpp.Declarations, mapping: dict[str, str]) -> str:
    """Rename in one TU the names it declares (``decl``), per ``mapping``."""
    tree = cpp.parse(text)
    user = decl.all()
    edits: list[cpp.Edit] = []
    for leaf in cpp.leaves(tree.root_node):
        t, value = leaf.type, cpp.node_text(leaf)
        new = None
        if t == "field_identifier":
            new = mapping.get(value) if value in decl.fields else None
        elif t in cpp.NAME_LEAVES:
            if value in user and not cpp.library_qualified(leaf, user):
                new = mapping.get(value)
        elif t in ("comment", "preproc_arg"):
            words = {w: mapping[w] for w in _WORD.findall(value) if w in mapping and w in user}
            replaced = cpp.replace_words(value, words)
            new = replaced if replaced != value else None
        if new is not None and new != value:
            edits.append(cpp.Edit(leaf.start_byte, leaf.end_byte, new))
    return cpp.apply_edits(text, edits)


# ---------------------------------------------------------------------------------------------
# Python


@dataclass
class _PyScan:
    declared: set[str]
    rename_ids: set[int]  # ids of Name nodes (bindings and accesses) of user-declared names
    wrapper: MetadataWrapper
    facts: pysrc.ModuleFacts


def _binding_name(a: Assignment) -> cst.Name | None:
    node = a.node
    if isinstance(node, cst.Name):
        return node
    if isinstance(node, (cst.Param, cst.FunctionDef, cst.ClassDef)):
        return node.name
    return None


def _import_alias_name(a: ImportAssignment) -> cst.Name | None:
    """The ``q7`` Name of ``import triton.language as q7``; None for plain imports (library names)."""
    names = a.node.names if isinstance(a.node.names, (list, tuple)) else []
    for alias in names:
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name) and alias.asname.name.value == a.name:
            return alias.asname.name
    return None


def _scan_python(text: str, keep: set[str]) -> _PyScan:
    wrapper = MetadataWrapper(cst.parse_module(text))
    scopes = {s for s in wrapper.resolve(ScopeProvider).values() if s is not None}
    declared: set[str] = set()
    renamable: set[int] = set()  # ids of assignments whose name is renamed
    rename_ids: set[int] = set()
    for scope in scopes:
        for a in scope.assignments:
            if a.name in keep or (a.name.startswith("__") and a.name.endswith("__")):
                continue
            if isinstance(a, ImportAssignment):
                name = _import_alias_name(a)
            elif isinstance(a, Assignment):
                name = _binding_name(a)
            else:
                continue
            if name is None:
                continue
            declared.add(a.name)
            renamable.add(id(a))
            rename_ids.add(id(name))
    for scope in scopes:
        for access in scope.accesses:
            if isinstance(access.node, cst.Name) and any(id(r) in renamable for r in access.referents):
                rename_ids.add(id(access.node))
    return _PyScan(declared, rename_ids, wrapper, pysrc.module_facts(wrapper.module))


class _StringRoles(cst.CSTVisitor):
    """Which string literals name identifiers (and so follow a rename), and which are docstrings."""

    def __init__(self) -> None:
        self.naming: set[int] = set()
        self.docs: set[int] = set()

    def _doc(self, body) -> None:
        stmts = getattr(body, "body", body)
        if stmts and isinstance(stmts[0], cst.SimpleStatementLine) and len(stmts[0].body) == 1:
            expr = stmts[0].body[0]
            if isinstance(expr, cst.Expr) and isinstance(expr.value, cst.SimpleString):
                self.docs.add(id(expr.value))

    def visit_Module(self, node: cst.Module) -> None:
        self._doc(node.body)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._doc(node.body)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._doc(node.body)

    def visit_DictElement(self, node: cst.DictElement) -> None:
        if isinstance(node.key, cst.SimpleString):  # triton.Config({"BLOCK": ...}), nargs dicts
            self.naming.add(id(node.key))

    def visit_SubscriptElement(self, node: cst.SubscriptElement) -> None:
        if isinstance(node.slice, cst.Index) and isinstance(node.slice.value, cst.SimpleString):
            self.naming.add(id(node.slice.value))  # META["BLOCK"], nargs["a_desc"]

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value in pysrc.NAME_LIST_KWARGS \
                and isinstance(node.value, (cst.List, cst.Tuple)):
            self.naming |= {id(e.value) for e in node.value.elements if isinstance(e.value, cst.SimpleString)}

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.SimpleString):  # _LAUNCHER = "d2k_gemm_mma_launch"
            self.naming.add(id(node.value))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "replace":
            self.naming |= {id(a.value) for a in node.args if isinstance(a.value, cst.SimpleString)}
        if isinstance(func, cst.Name) and func.value in ("getattr", "hasattr", "setattr") and len(node.args) > 1 \
                and isinstance(node.args[1].value, cst.SimpleString):
            self.naming.add(id(node.args[1].value))


class _PyRenamer(cst.CSTTransformer):
    def __init__(self, scan: _PyScan, mapping: dict[str, str], cpp_rename, pybind: set[str],
                 embedded: set[int], roles: _StringRoles, names_in_strings: set[str]) -> None:
        self.scan, self.mapping, self.cpp_rename = scan, mapping, cpp_rename
        self.pybind, self.embedded, self.roles = pybind, embedded, roles
        self.names_in_strings = names_in_strings

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if id(original) in self.scan.rename_ids and original.value in self.mapping:
            return updated.with_changes(value=self.mapping[original.value])
        return updated

    def leave_NameItem(self, original: cst.NameItem, updated: cst.NameItem) -> cst.NameItem:
        value = updated.name.value  # global / nonlocal statements
        return updated.with_changes(name=updated.name.with_changes(value=self.mapping.get(value, value)))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        attr = original.attr.value  # ext.gemm(...): a function the C++ of this submission exports
        if attr in self.pybind and attr in self.mapping:
            return updated.with_changes(attr=updated.attr.with_changes(value=self.mapping[attr]))
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        fn = self.scan.facts.callee(original)
        if fn is None:
            return updated  # library call: its keyword names are the library's
        params = set(pysrc.param_names(fn))
        args = []
        for arg in updated.args:
            kw = arg.keyword
            if kw is not None and kw.value in params and kw.value in self.mapping:
                arg = arg.with_changes(keyword=kw.with_changes(value=self.mapping[kw.value]))
            args.append(arg)
        return updated.with_changes(args=args)

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.SimpleString:
        if id(original) in self.embedded:
            return pysrc.with_value(updated, self.cpp_rename(pysrc.string_value(original)))
        if id(original) in self.roles.docs:
            return _replace_in_literal(updated, self.mapping)
        value = pysrc.string_value(original)
        if id(original) in self.roles.naming and value in self.names_in_strings and value in self.mapping:
            return pysrc.with_value(updated, self.mapping[value])
        return updated

    def leave_Comment(self, original: cst.Comment, updated: cst.Comment) -> cst.Comment:
        return updated.with_changes(value=cpp.replace_words(updated.value, self.mapping))


def _replace_in_literal(node: cst.SimpleString, mapping: dict[str, str]) -> cst.SimpleString:
    """Whole-word replacement inside a literal's body (its prefix and quotes untouched)."""
    head = len(node.prefix) + len(node.quote)
    body = node.value[head:len(node.value) - len(node.quote)]
    return node.with_changes(value=node.value[:head] + cpp.replace_words(body, mapping) + node.quote)


def _pybind_functions(module: cst.Module, facts: pysrc.ModuleFacts) -> set[str]:
    out: set[str] = set()
    for call in facts.load_inline_calls:
        value = pysrc.load_inline_kwarg(call, "functions")
        if isinstance(value, (cst.List, cst.Tuple)):
            out |= {pysrc.string_value(e.value) for e in value.elements if isinstance(e.value, cst.SimpleString)}
        elif isinstance(value, cst.SimpleString):
            out.add(pysrc.string_value(value))
    return out


# ---------------------------------------------------------------------------------------------


def _fresh_names(sub: Submission):
    taken = {w for text in sub.files.values() for w in _WORD.findall(text)}
    i = 0
    while True:
        i += 1
        if f"v{i}" not in taken:
            yield f"v{i}"


def plan(sub: Submission) -> RenamePlan:
    """Find every declared name and build the map (deterministic: names in sorted order)."""
    p = RenamePlan()
    kernels: set[str] = set()
    for _, text in _cpp_units(sub):
        d = _tu_declarations(sub, text)
        p.cpp_declared |= d.all()
        kernels |= d.kernels
    keep = set(pysrc.ENTRY_NAMES) | kernels
    for path in sub.python_files():
        module = cst.parse_module(sub.files[path])
        facts = pysrc.module_facts(module)
        keep |= facts.kernels | facts.callback_params
        p.pybind_functions |= _pybind_functions(module, facts)
    for path in sub.python_files():
        p.py_declared |= _scan_python(sub.files[path], keep).declared
    p.kept = keep
    fresh = _fresh_names(sub)
    p.mapping = {name: next(fresh) for name in sorted((p.cpp_declared | p.py_declared) - keep)}
    return p


def rename(sub: Submission) -> Submission:
    p = plan(sub)
    if not p.mapping:
        raise NotApplicable("the submission declares no identifiers")
    files = dict(sub.files)
    for path in sub.cpp_files():
        files[path] = rename_cpp(sub.files[path], _tu_declarations(sub, sub.files[path]), p.mapping)
    for path in sub.python_files():
        scan = _scan_python(sub.files[path], p.kept)
        module = scan.wrapper.module
        embedded = {id(s) for s in pysrc.embedded_cpp_strings(module, scan.facts)}
        roles = _StringRoles()
        module.visit(roles)
        renamer = _PyRenamer(scan, p.mapping, lambda t: rename_cpp(t, _tu_declarations(sub, t), p.mapping),
                             p.pybind_functions, embedded, roles, p.cpp_declared | p.py_declared)
        files[path] = module.visit(renamer).code
    return sub.with_files(files, f"renamed {len(p.mapping)} identifiers")
