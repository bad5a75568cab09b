"""CUDA C++ sources: functions, kernels, launch sites, macros and file constants.

One tree-sitter parse per source (a .cu/.cuh/.cpp file, or a CUDA string embedded in Python).
Rows of an embedded string are mapped back to lines of the Python file through ``CudaSource.line``.
Attributes the grammar does not know (``__cluster_dims__``, ``__maxnreg__``, 3-argument
``__launch_bounds__``) are blanked before parsing and kept as ``attributes`` so that they neither
break the parse nor get lost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .treesitter import Node, error_rows, parse, text, walk

# Attribute macros the grammar cannot parse; blanked (same length, newlines kept) before parsing.
_ATTRIBUTE_RE = re.compile(
    r"__cluster_dims__\s*\([^()]*\)|__maxnreg__\s*\([^()]*\)|__launch_bounds__\s*\([^(),]*,[^(),]*,[^()]*\)|__align__\s*\([^()]*\)"
)
# `#pragma` lines are blanked before parsing (a pragma between a `for` header and its body breaks
# the grammar) and kept with their row and byte offset; `enum : int {` loses its base type.
_PRAGMA_RE = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+([^\n]*)$", re.M)
_ENUM_BASE_RE = re.compile(r"(\benum(?:\s+class|\s+struct)?(?:\s+\w+)?)(\s*:\s*[\w:]+)(?=\s*\{)")
_CALL_NAME_TYPES = {"identifier", "qualified_identifier", "template_function", "field_expression", "scoped_identifier"}


@dataclass
class LaunchSite:
    """A ``kernel<<<...>>>(...)`` launch, or a kernel named as a value (``cudaLaunchKernelEx(&c, k, ...)``)."""

    kernel: str
    template_args: list[str]
    config: list[str]  # grid, block, shared bytes, stream (as written); empty for by-reference launches
    row: int
    end_row: int
    node: Node


@dataclass
class CudaFunction:
    name: str
    qualifiers: set[str]  # __global__, __device__, __host__, extern_c, template
    node: Node  # function_definition
    template_params: list[tuple[str, str]]  # (name, default text or "")
    params: list[tuple[str, str]]  # (name, type text)
    calls: set[str]  # callee names (full and last segment)
    names: set[str]  # every identifier used in the body (for launches by reference)
    launches: list[LaunchSite]
    source: "CudaSource"
    # Body nodes by type, collected by the one walk that found calls and names, so that liveness
    # (branches) and helper-template folding (calls) need not walk the body again.
    body_nodes: dict[str, list[Node]] = field(default_factory=dict)

    @property
    def is_kernel(self) -> bool:
        return "__global__" in self.qualifiers

    @property
    def is_device(self) -> bool:
        return "__device__" in self.qualifiers and "__global__" not in self.qualifiers

    @property
    def is_host(self) -> bool:
        return not self.qualifiers & {"__global__", "__device__"} or "__host__" in self.qualifiers


@dataclass
class CudaSource:
    file: str  # display path (the Python file for embedded CUDA)
    text: str
    data: bytes
    tree: object
    line_offset: int = 0  # absolute 1-based line = line_offset + row + 1
    flat_line: int | None = None  # single-line strings with \n escapes: every row maps here
    embedded: bool = False
    functions: list[CudaFunction] = field(default_factory=list)
    macros: dict[str, Node] = field(default_factory=dict)  # name -> preproc_def / preproc_function_def
    constants: dict[str, str] = field(default_factory=dict)  # name -> value text (constexpr, #define)
    attributes: list[tuple[int, str]] = field(default_factory=list)  # (row, text) blanked attributes
    pragmas: list[tuple[int, int, str]] = field(default_factory=list)  # (row, byte offset, text)
    dead_preproc: list[Node] = field(default_factory=list)  # #if 0 regions
    low_precision: bool = False  # half / bf16 / fp8 types appear in the code (comments excluded)
    warnings: list[str] = field(default_factory=list)

    def line(self, row: int) -> int:
        """Absolute 1-based line of a 0-based row of this source."""
        return self.flat_line if self.flat_line is not None else self.line_offset + row + 1


_COMMENT_RE = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_LOW_PRECISION_RE = re.compile(r"\b(__nv_bfloat16\w*|nv_bfloat16\w*|__half2?|half2?|__nv_fp8\w*|bfloat16|BFloat16|c10::Half|at::Half)\b")


def _blank(match: re.Match) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def callee_name(fn: Node) -> str:
    """Name of a called expression: ``foo``, ``ns::foo``, ``foo<T>`` -> ``foo``, ``obj.f`` -> ``f``."""
    if fn.type == "template_function":
        return callee_name(fn.children[0]) if fn.children else text(fn)
    if fn.type == "field_expression":
        field_node = fn.child_by_field_name("field")
        return text(field_node) if field_node is not None else text(fn)
    if fn.type == "qualified_identifier":
        return re.sub(r"<[^<>]*>", "", text(fn)).replace(" ", "")
    return text(fn)


def _function_name(defn: Node) -> str:
    decl = defn.child_by_field_name("declarator")
    while decl is not None and decl.type not in ("function_declarator",):
        nxt = decl.child_by_field_name("declarator")
        if nxt is None:
            break
        decl = nxt
    if decl is None:
        return ""
    inner = decl.child_by_field_name("declarator")
    if inner is None:
        return ""
    return callee_name(inner).split("::")[-1]


def _template_params(tmpl: Node | None) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if tmpl is None:
        return out
    plist = tmpl.child_by_field_name("parameters")
    for p in plist.named_children if plist is not None else []:
        names = [c for c in p.children if c.type in ("identifier", "type_identifier")]
        if not names:
            continue
        name = text(names[-1]) if p.type != "optional_parameter_declaration" else text(p.child_by_field_name("declarator") or names[-1])
        default = p.child_by_field_name("default_value") or p.child_by_field_name("default_type")
        out.append((name, text(default)))
    return out


def _params(defn: Node) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for n in walk(defn.child_by_field_name("declarator") or defn):
        if n.type == "parameter_declaration":
            ids = [c for c in walk(n) if c.type == "identifier"]
            out.append((text(ids[-1]) if ids else "", text(n)))
    return out


_INDEXED_TYPES = ("if_statement", "elif_clause", "preproc_if")  # what liveness.dead_ranges looks at


def _scan_body(body: Node | None) -> tuple[set[str], set[str], list[LaunchSite], dict[str, list[Node]]]:
    calls: set[str] = set()
    names: set[str] = set()
    launches: list[LaunchSite] = []
    index: dict[str, list[Node]] = {"call_expression": [], "branch": []}
    if body is None:
        return calls, names, launches, index
    for n in walk(body):
        t = n.type
        if t == "identifier":
            names.add(text(n))
        elif t in _INDEXED_TYPES:
            index["branch"].append(n)
        elif t == "call_expression":
            index["call_expression"].append(n)
            fn = n.child_by_field_name("function") or (n.children[0] if n.children else None)
            if fn is None:
                continue
            name = callee_name(fn)
            calls.add(name)
            calls.add(name.split("::")[-1])
            kcs = next((c for c in n.children if c.type == "kernel_call_syntax"), None)
            if kcs is not None:
                targs = []
                if fn.type == "template_function":
                    al = fn.child_by_field_name("arguments")
                    targs = [text(a) for a in (al.named_children if al is not None else [])]
                config = [text(c) for c in kcs.named_children]
                launches.append(LaunchSite(name.split("::")[-1], targs, config, n.start_point[0], n.end_point[0], n))
    return calls, names, launches, index


def _collect(node: Node, src: CudaSource, template: Node | None, extern_c: bool) -> None:
    for child in node.children:
        t = child.type
        if t == "function_definition":
            quals = {c.type for c in child.children if c.type in ("__global__", "__device__", "__host__")}
            if extern_c:
                quals.add("extern_c")
            if template is not None:
                quals.add("template")
            body = child.child_by_field_name("body")
            calls, names, launches, index = _scan_body(body)
            src.functions.append(
                CudaFunction(
                    _function_name(child), quals, child, _template_params(template), _params(child), calls, names, launches, src,
                    index if body is not None else {},
                )
            )
        elif t == "template_declaration":
            _collect(child, src, child, extern_c)
        elif t == "linkage_specification":
            _collect(child, src, template, True)
        elif t in ("declaration_list", "namespace_definition", "preproc_ifdef", "preproc_else", "preproc_elif"):
            _collect(child, src, template, extern_c)
        elif t == "preproc_if":
            cond = child.child_by_field_name("condition")
            if cond is not None and text(cond).strip() in ("0", "false"):
                src.dead_preproc.append(child)  # "#if 0": the classic way to comment out a kernel
                alt = child.child_by_field_name("alternative")
                if alt is not None:
                    _collect(alt, src, template, extern_c)
            else:
                _collect(child, src, template, extern_c)
        elif t in ("preproc_def", "preproc_function_def"):
            name = child.child_by_field_name("name")
            if name is not None:
                src.macros[text(name)] = child
                value = child.child_by_field_name("value")
                if t == "preproc_def" and value is not None:
                    src.constants[text(name)] = text(value).strip()
        elif t == "declaration" and template is None:
            if any(c.type == "type_qualifier" and text(c) in ("constexpr", "const") for c in child.children):
                for d in child.children:
                    if d.type == "init_declarator":
                        name = d.child_by_field_name("declarator")
                        value = d.child_by_field_name("value")
                        if name is not None and value is not None:
                            src.constants[text(name)] = text(value)


def parse_cuda(source_text: str, file: str, line_offset: int = 0, embedded: bool = False, flat_line: int | None = None) -> CudaSource:
    """Parse CUDA text; collect functions, launches, macros and constants; warn on syntax errors."""
    attributes: list[tuple[int, str]] = []
    if "__cluster_dims__" in source_text or "__maxnreg__" in source_text or "__launch_bounds__" in source_text or "__align__" in source_text:
        for m in _ATTRIBUTE_RE.finditer(source_text):
            attributes.append((source_text.count("\n", 0, m.start()), m.group(0)))
        source_text = _ATTRIBUTE_RE.sub(_blank, source_text)
    pragmas: list[tuple[int, int, str]] = []
    if "pragma" in source_text:
        for m in _PRAGMA_RE.finditer(source_text):
            pragmas.append((source_text.count("\n", 0, m.start()), len(source_text[: m.start()].encode("utf-8", errors="replace")), m.group(1).strip()))
        source_text = _PRAGMA_RE.sub(_blank, source_text)
    if "enum" in source_text:
        source_text = _ENUM_BASE_RE.sub(lambda m: m.group(1) + " " * len(m.group(2)), source_text)
    tree, data = parse("cuda", source_text)
    src = CudaSource(file, source_text, data, tree, line_offset, flat_line, embedded, attributes=attributes, pragmas=pragmas)
    _collect(tree.root_node, src, None, False)
    code = _COMMENT_RE.sub(" ", source_text)
    src.low_precision = bool(_LOW_PRECISION_RE.search(code))
    for row in error_rows(tree):
        src.warnings.append(f"{file}:{src.line(row)}: syntax error (analysed what parsed)")
    return src
