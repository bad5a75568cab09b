"""Python sources: Triton kernels, their launches, entry points and embedded CUDA strings.

What is collected (one tree-sitter parse per file):
- every function (module level, methods, nested) with its decorators, parameters, the names it
  uses and the Triton launches ``kernel[grid](...)`` it makes; classes are pseudo-functions whose
  names are those of all their methods (reaching ``ModelNew`` reaches its methods);
- module-level code (it runs at import, so it is entry code);
- CUDA/C++ source held in string literals that are handed to a compiler (``load_inline``, cupy
  ``RawKernel``, a variable passed to any call), with the row -> line mapping back to this file;
- names of ``.cu`` files the module reads or compiles (``Path(...).read_text()``, ``load(sources=)``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .treesitter import Node, error_rows, in_order, of_types_unordered, parse, text, texts, walk

_CUDA_HINT = re.compile(r"__global__|__device__|#include|extern\s+\"C\"|torch::Tensor|PYBIND11_MODULE|at::Tensor")
_CU_FILE = re.compile(r"[\w./-]+\.(?:cu|cuh|cpp|cc|h|hpp)$")


@dataclass
class TritonLaunch:
    kernel: str  # the last part of the launched name
    grid: str
    args: list[str]
    kwargs: dict[str, str]
    kwarg_nodes: dict[str, Node]
    arg_nodes: list[Node]
    row: int
    end_row: int
    node: Node
    path: str = ""  # the launched name as written: ``kernel.Softmax.forward``


@dataclass
class PyFunction:
    name: str
    qualname: str
    node: Node  # function_definition or class_definition
    decorators: list[Node]
    params: list[tuple[str, str, str]]  # (name, annotation, default)
    names: set[str]  # identifiers / attribute names / string contents used (for reachability)
    launches: list[TritonLaunch]
    is_class: bool = False
    wrappers: list[Node] = field(default_factory=list)  # `alias = triton.autotune(...)(fn)` wrapper calls

    @property
    def calls(self) -> set[str]:
        """The dotted names this function calls (``prims.Tile.forward``), as written."""
        found = of_types_unordered(self.node, "python", ("call",))
        return {dotted(c.child_by_field_name("function")) for c in found
                if c.child_by_field_name("function") is not None and c.child_by_field_name("function").type in ("identifier", "attribute")}

    @property
    def is_jit(self) -> bool:
        return any(is_jit_decorator(d) for d in self.decorators) or any(
            is_jit_name(dotted(w.child_by_field_name("function"))) for w in self.wrappers
        )

    def decorator_exprs(self) -> list[Node]:
        """Decorator expressions, then wrapper calls applied at module level (same meaning)."""
        out = [e for d in self.decorators for e in d.named_children[:1]]
        return out + self.wrappers

    def constexpr_params(self) -> list[str]:
        return [n for n, ann, _ in self.params if "constexpr" in ann]


@dataclass
class EmbeddedCuda:
    text: str
    row: int  # 0-based row of the first content character in the Python file
    flat: bool  # single-line string with \n escapes: all rows map to ``row``
    compiled: bool


@dataclass
class PySource:
    file: str
    text: str
    data: bytes
    tree: object
    functions: list[PyFunction] = field(default_factory=list)
    module_names: set[str] = field(default_factory=set)
    module_launches: list[TritonLaunch] = field(default_factory=list)
    module_nodes: list[Node] = field(default_factory=list)  # top-level statements that are not defs
    constants: dict[str, str] = field(default_factory=dict)  # module-level NAME = literal
    embedded: list[EmbeddedCuda] = field(default_factory=list)
    cu_files: set[str] = field(default_factory=set)
    aliases: dict[str, str] = field(default_factory=dict)  # alias -> wrapped function name
    renames: dict[str, str] = field(default_factory=dict)  # ``act = activation.identity``: name -> dotted name
    warnings: list[str] = field(default_factory=list)


def dotted(node: Node | None) -> str:
    """``tl.math.exp2`` for attribute chains, the identifier for names, else the raw text."""
    if node is None:
        return ""
    return "".join(text(node).split()) if node.type in ("attribute", "identifier") else text(node)


def py_name(node: Node | None) -> str:
    """Dotted name of a callee as written (``triton.language.`` shortened to ``tl.``)."""
    if node is None:
        return ""
    name = "".join(text(node).split()) if node.type in ("attribute", "identifier") else text(node)
    return name.replace("triton.language.", "tl.")


def py_args(call: Node) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """Positional and keyword argument texts of a call (whitespace squashed)."""
    al = call.child_by_field_name("arguments")
    args: list[str] = []
    kwargs: list[tuple[str, str]] = []
    for a in al.named_children if al is not None else []:
        if a.type == "keyword_argument":
            kwargs.append((text(a.child_by_field_name("name")), " ".join(text(a.child_by_field_name("value")).split())))
        elif a.type != "comment":
            args.append(" ".join(text(a).split()))
    return tuple(args), tuple(kwargs)


def decorator_target(dec: Node) -> Node | None:
    expr = next((c for c in dec.named_children), None)
    if expr is not None and expr.type == "call":
        return expr.child_by_field_name("function")
    return expr


def is_jit_name(name: str) -> bool:
    return name in ("triton.jit", "jit", "tl.jit") or (name.endswith(".jit") and not name.startswith("torch"))


def is_jit_decorator(dec: Node) -> bool:
    return is_jit_name(dotted(decorator_target(dec)))


def string_value(node: Node) -> tuple[str, int, bool]:
    """Content of a string literal (f-string holes replaced by ``0``), its first row, and whether
    it is a single-line string whose ``\\n`` escapes were expanded (rows then all map to one line)."""
    start = next((c for c in node.children if c.type == "string_start"), None)
    prefix = text(start).lower() if start is not None else ""
    pieces: list[str] = []
    first_row = None
    for c in node.children:
        if c.type in ("string_start", "string_end"):
            continue
        if first_row is None:
            first_row = c.start_point[0]
        pieces.append("0" if c.type == "interpolation" else text(c))
    content = "".join(pieces)
    if first_row is None:
        first_row = node.start_point[0]
    if "f" in prefix:
        content = content.replace("{{", "{").replace("}}", "}")
    flat = False
    if "r" not in prefix and "\n" not in content and "\\n" in content:
        content = content.replace("\\n", "\n").replace("\\t", "\t").replace('\\"', '"')
        flat = True
    return content, first_row, flat


def _string_parts(node: Node) -> list[Node]:
    """String literals inside a concatenation / parenthesised string expression."""
    if node.type == "string":
        return [node]
    if node.type in ("concatenated_string", "parenthesized_expression", "binary_operator"):
        return [s for c in node.children for s in _string_parts(c)]
    return []


def _launch(call: Node) -> TritonLaunch | None:
    fn = call.child_by_field_name("function")
    if fn is None or fn.type != "subscript":
        return None
    value = fn.child_by_field_name("value")
    if value is None or value.type not in ("identifier", "attribute"):
        return None
    grid = fn.child_by_field_name("subscript")
    args, kwargs, knodes, anodes = [], {}, {}, []
    al = call.child_by_field_name("arguments")
    for a in al.named_children if al is not None else []:
        if a.type == "keyword_argument":
            k, v = a.child_by_field_name("name"), a.child_by_field_name("value")
            kwargs[text(k)] = text(v)
            knodes[text(k)] = v
        elif a.type not in ("comment",):
            args.append(text(a))
            anodes.append(a)
    path = dotted(value)
    return TritonLaunch(path.split(".")[-1], text(grid), args, kwargs, knodes, anodes, call.start_point[0], call.end_point[0], call, path)


def resolve_reference(cands: list[tuple["PySource", PyFunction]], path: str, near: str = "") -> tuple["PySource", PyFunction]:
    """The definition a reference written in file ``near`` names: a bare name is that module's
    own definition when it has one (Python's module scope), else :func:`best_definition`."""
    if "." not in path.lstrip(".") and any(py.file == near for py, _ in cands):
        cands = [(py, fn) for py, fn in cands if py.file == near]
    return best_definition(cands, path)


def best_definition(cands: list[tuple["PySource", PyFunction]], path: str) -> tuple["PySource", PyFunction]:
    """The definition a dotted reference most plausibly names, among same-named functions.

    Python resolves ``language.Linear.forward`` through the import, the module and the class;
    several files may define a ``forward``. Rank by how much of the qualified name matches the
    reference's tail (``Linear.forward``), then by how many of the remaining parts name a folder
    or module of the defining file (``trident.language`` -> ``trident/language/linear.py``), then
    prefer a module-level function for a bare reference. Ties keep source order.
    """
    parts = [p for p in path.lstrip(".").split(".") if p]

    def rank(pair: tuple["PySource", PyFunction]) -> tuple[int, int, int]:
        py, fn = pair
        qual = fn.qualname.split(".")
        k = 0
        while k < min(len(qual), len(parts)) and qual[-1 - k] == parts[-1 - k]:
            k += 1
        places = set(re.split(r"[/\\]", py.file.rsplit(".", 1)[0]))
        modules = sum(1 for p in parts[: len(parts) - k] if p in places)
        return k, modules, int(len(qual) == k)

    return max(cands, key=rank)


def _scan(node: Node) -> tuple[set[str], list[TritonLaunch]]:
    names: set[str] = set()
    launches: list[TritonLaunch] = []
    found = of_types_unordered(node, "python", ("identifier", "string_content", "call"))
    names |= texts(n for n in found if n.type == "identifier")
    names |= {s for s in texts(n for n in found if n.type == "string_content") if len(s) < 80}
    for n in in_order(n for n in found if n.type == "call"):
        launch = _launch(n)
        if launch is not None:
            launches.append(launch)
    return names, launches


def _params(defn: Node) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    plist = defn.child_by_field_name("parameters")
    for p in plist.named_children if plist is not None else []:
        if p.type == "identifier":
            out.append((text(p), "", ""))
        elif p.type in ("typed_parameter", "typed_default_parameter", "default_parameter"):
            ident = p.child_by_field_name("name") or next((c for c in p.children if c.type == "identifier"), None)
            ann = p.child_by_field_name("type")
            default = p.child_by_field_name("value")
            out.append((text(ident), text(ann), text(default)))
    return out


def _collect_defs(node: Node, src: PySource, prefix: str, decorators: list[Node]) -> None:
    if node.type == "decorated_definition":
        decs = [c for c in node.children if c.type == "decorator"]
        inner = node.child_by_field_name("definition")
        if inner is not None:
            _collect_defs(inner, src, prefix, decs)
        return
    if node.type == "function_definition":
        name = text(node.child_by_field_name("name"))
        names, launches = _scan(node)
        src.functions.append(PyFunction(name, prefix + name, node, decorators, _params(node), names, launches))
        body = node.child_by_field_name("body")
        for c in body.children if body is not None else []:
            if c.type in ("function_definition", "decorated_definition", "class_definition"):
                _collect_defs(c, src, prefix + name + ".", [])
        return
    if node.type == "class_definition":
        # A class is a pseudo-function using everything its methods (and class body) use.
        name = text(node.child_by_field_name("name"))
        cls = PyFunction(name, prefix + name, node, decorators, [], set(), [], is_class=True)
        src.functions.append(cls)
        first = len(src.functions)
        body = node.child_by_field_name("body")
        for c in body.children if body is not None else []:
            if c.type in ("function_definition", "decorated_definition", "class_definition"):
                _collect_defs(c, src, prefix + name + ".", [])
            else:
                names, launches = _scan(c)
                cls.names |= names
                cls.launches += launches
        for member in src.functions[first:]:
            cls.names |= member.names


def _literal(node: Node) -> bool:
    return node.type in ("integer", "float", "true", "false", "none", "string") or (
        node.type == "unary_operator" and all(c.type in ("-", "integer", "float") for c in node.children)
    )


_EMBED_HINT = re.compile(r"__global__|__device__|#include|extern\s+\"C\"|torch::Tensor|PYBIND11|at::Tensor|\.(cu|cuh|cpp|cc|h|hpp)\b")


def _find_embedded(src: PySource) -> None:
    """CUDA/C++ source strings, and whether each is compiled (passed to a call, directly or by name)."""
    if not _EMBED_HINT.search(src.text):
        return  # a pure Triton/Python module: nothing to look for
    call_arg_names: set[str] = set()
    candidates: list[tuple[Node, str | None, bool]] = []  # (string node, assigned name, inside call args)
    for n in walk(src.tree.root_node):
        if n.type == "argument_list":
            for m in walk(n):
                if m.type == "identifier":
                    call_arg_names.add(text(m))
        elif n.type == "string":
            raw = n.text or b""
            if len(raw) < 20:
                s = text(n).strip("\"'rbuf")
                if _CU_FILE.search(s):
                    src.cu_files.add(s.rsplit("/", 1)[-1])
                continue
            if not _CUDA_HINT.search(raw.decode("utf-8", errors="replace")):
                s = text(n).strip("\"'rbuf")
                if _CU_FILE.search(s):
                    src.cu_files.add(s.rsplit("/", 1)[-1])
                continue
            target, in_call = None, False
            p = n.parent
            while p is not None and p.type not in ("module", "block", "function_definition", "class_definition"):
                if p.type == "argument_list":
                    in_call = True
                    break
                if p.type == "assignment":
                    left = p.child_by_field_name("left")
                    target = text(left) if left is not None else None
                    break
                if p.type == "expression_statement" and p.parent is not None and p.parent.type == "block":
                    break  # a bare string statement (docstring): never compiled
                p = p.parent
            candidates.append((n, target, in_call))
    for node, target, in_call in candidates:
        compiled = in_call or (target is not None and target.split(".")[-1] in call_arg_names)
        content, row, flat = string_value(node)
        src.embedded.append(EmbeddedCuda(content, row, flat, compiled))


def _unwrap(call: Node) -> tuple[str | None, list[Node]]:
    """``triton.autotune(...)(triton.jit(fn))`` -> ("fn", [autotune(...) call, triton.jit call])."""
    wrappers: list[Node] = []
    node = call
    while node is not None and node.type == "call":
        fn = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        inner = args.named_children[0] if args is not None and args.named_children else None
        if fn is not None and fn.type == "call":  # decorator factory applied: f(...)(inner)
            wrappers.append(fn)
        elif fn is not None:
            wrappers.append(node)
        if inner is None:
            return None, wrappers
        if inner.type == "identifier":
            return text(inner), wrappers
        node = inner
    return None, wrappers


def _find_aliases(src: PySource) -> None:
    """Module-level renames (``act = activation.identity``), and functions made jit functions by a
    call rather than a decorator: ``alias = triton.jit(fn)``
    at module level (``alias`` then names ``fn``), and, inside a factory function, ``k = fn; k =
    copy(k, ...); k = triton.heuristics(...)(triton.jit(k))``, a local followed back to the module
    function it was taken from (directly or as the first argument of a call that copies it)."""
    by_name = {f.name: f for f in src.functions if not f.is_class}
    for mn in src.module_nodes:
        if mn.type != "expression_statement" or not mn.named_children or mn.named_children[0].type != "assignment":
            continue
        a = mn.named_children[0]
        left, right = a.child_by_field_name("left"), a.child_by_field_name("right")
        if left is not None and right is not None and left.type == "identifier" and right.type in ("identifier", "attribute"):
            src.renames[text(left)] = dotted(right)  # a function called under another name
        if left is None or right is None or left.type != "identifier" or right.type != "call":
            continue
        target, wrappers = _unwrap(right)
        if target in by_name and wrappers and _wrapper_names(wrappers) & {"jit", "autotune", "heuristics"}:
            src.aliases[text(left)] = target
            by_name[target].wrappers.extend(w for w in wrappers if w.type == "call")
    for factory in [f for f in src.functions if not f.is_class and not f.is_jit]:
        taken: dict[str, str] = {}  # local -> the module function it holds, in statement order
        for a in in_order(of_types_unordered(factory.node, "python", ("assignment",))):
            left, right = a.child_by_field_name("left"), a.child_by_field_name("right")
            if left is None or right is None or left.type != "identifier":
                continue
            source = _taken_from(right, taken, by_name)
            if source is not None:
                taken[text(left)] = source
            if right.type == "call":
                target, wrappers = _unwrap(right)
                fn = by_name.get(taken.get(target, target) if target else "")
                if fn is not None and fn is not factory and _jit_wrappers(wrappers) and not fn.is_jit:
                    fn.wrappers.extend(w for w in wrappers if w.type == "call")


def _wrapper_names(wrappers: list[Node]) -> set[str]:
    """The last segment of each wrapper's callee (``triton.heuristics(...)`` -> ``heuristics``)."""
    return {(dotted(w.child_by_field_name("function")) if w.type == "call" else dotted(w)).split(".")[-1] for w in wrappers}


def _jit_wrappers(wrappers: list[Node]) -> bool:
    """A wrapper chain that compiles its function with Triton (``triton.jit`` among the calls):
    what makes an undecorated function a kernel."""
    return any(is_jit_name(dotted(w.child_by_field_name("function")) if w.type == "call" else dotted(w)) for w in wrappers)


def _taken_from(right: Node, taken: dict[str, str], by_name: dict) -> str | None:
    """The module function a local's new value holds: the function's own name, a local already
    holding one, or either as the first argument of a call (``copy_func(kernel, globals=...)``)."""
    node = right
    if node.type == "call":
        args = node.child_by_field_name("arguments")
        first = args.named_children[0] if args is not None and args.named_children else None
        if first is None or first.type != "identifier":
            return None
        node = first
    if node.type != "identifier":
        return None
    name = text(node)
    return taken.get(name) or (name if name in by_name else None)


def _is_main_guard(node: Node) -> bool:
    cond = node.child_by_field_name("condition") if node.type == "if_statement" else None
    return cond is not None and "__name__" in text(cond)


_COMPOUND = ("if_statement", "try_statement", "with_statement")
_CLAUSES = ("elif_clause", "else_clause", "except_clause", "except_group_clause", "finally_clause")


def module_statements(root: Node):
    """The statements Python runs at import, with ``if`` / ``try`` / ``with`` blocks opened: a
    kernel defined under ``if HAS_TRITON:`` or ``try: import triton`` is a module-level kernel.
    Every branch is kept, since which one runs is decided at import time, not in the source."""
    for child in root.children:
        if child.type not in _COMPOUND or _is_main_guard(child):
            yield child
            continue
        for part in child.children:
            blocks = [part] if part.type == "block" else [b for b in part.children if b.type == "block"] if part.type in _CLAUSES else []
            for block in blocks:
                yield from module_statements(block)


def parse_python(source_text: str, file: str) -> PySource:
    tree, data = parse("python", source_text)
    src = PySource(file, source_text, data, tree)
    root = tree.root_node
    for child in module_statements(root):
        if child.type in ("function_definition", "decorated_definition", "class_definition"):
            _collect_defs(child, src, "", [])
            continue
        if child.type == "comment" or _is_main_guard(child):
            continue  # `if __name__ == "__main__":` is test/benchmark code, not the entry point
        src.module_nodes.append(child)
        names, launches = _scan(child)
        src.module_names |= names
        src.module_launches += launches
        if child.type == "expression_statement" and child.named_children and child.named_children[0].type == "assignment":
            a = child.named_children[0]
            left, right = a.child_by_field_name("left"), a.child_by_field_name("right")
            if left is not None and right is not None and left.type == "identifier" and _literal(right):
                src.constants[text(left)] = text(right)
    _find_aliases(src)
    _find_embedded(src)
    for row in error_rows(tree):
        src.warnings.append(f"{file}:{row + 1}: syntax error (analysed what parsed)")
    return src
