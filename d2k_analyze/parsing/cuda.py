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

from . import rx
from . import macros as macros_module
from .treesitter import Node, error_rows, in_order, of_types_unordered, parse, text, texts, walk

# Attribute macros the grammar cannot parse; blanked (same length, newlines kept) before parsing.
_ATTRIBUTE_RE = re.compile(
    r"__cluster_dims__\s*\([^()]*\)|__maxnreg__\s*\([^()]*\)|__launch_bounds__\s*\([^(),]*,[^(),]*,[^()]*\)|__align__\s*\((?:[^()]|\([^()]*\))*\)"
)
# `#pragma` lines are blanked before parsing (a pragma between a `for` header and its body breaks
# the grammar) and kept with their row and byte offset; `enum : int {` loses its base type.
_PRAGMA_RE = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+([^\n]*)$", re.M)
# Libraries' unroll macros (defined in their headers, which submissions include but do not ship):
# the macro *is* the pragma.
_LIBRARY_PRAGMAS = {"CUTE_UNROLL": "unroll", "CUTLASS_PRAGMA_UNROLL": "unroll", "CUTE_NO_UNROLL": "unroll 1", "CUTLASS_PRAGMA_NO_UNROLL": "unroll 1"}
_LIBRARY_PRAGMA_RE = re.compile(r"^[ \t]*(" + "|".join(_LIBRARY_PRAGMAS) + r")[ \t]*$", re.M)
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
    owner: str = ""  # the struct/class a method belongs to ("" for free functions)
    # Body nodes by type, collected by the one walk that found calls and names, so that liveness
    # (branches) and helper-template folding (calls) need not walk the body again.
    body_nodes: dict[str, list[Node]] = field(default_factory=dict)
    template_node: Node | None = None
    # a method of a struct specialisation: its spelling (``Op<T,T,T,Kind::kMul>``) and that
    # specialisation's own template parameters (``("T",)``): which instantiations it serves
    owner_spelling: str = ""
    owner_params: tuple[str, ...] = ()

    @property
    def specialization(self) -> str:
        """``<__half>`` for an explicit specialisation (``template <> __global__ void k<__half>(..)``;
        with its arguments deduced, ``template <> __global__ void k(half4* o)``, its parameter
        types: ``<half4*>``), else "": its body is its own code, often the one a launch with those
        arguments runs."""
        if self.template_node is None or self.template_params:
            return ""
        written = _specialized_args(self.node)
        if written:
            return written
        # ``template <> __global__ void k(half4* out, ...)``: the arguments are deduced from the
        # parameter types, which then name the specialisation
        types = [decl[: len(decl) - len(name)] if name and decl.endswith(name) else decl for name, decl in self.params]
        return "<" + ",".join(" ".join(t.split()).replace(" *", "*") for t in types) + ">"

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
    constant_nodes: dict[str, Node] = field(default_factory=dict)  # name -> value node (constexpr, enum, static member)
    struct_templates: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # struct -> template params
    struct_fields: dict[str, list[str]] = field(default_factory=dict)  # struct -> data members, in declaration order
    struct_arrays: dict[str, set[str]] = field(default_factory=dict)  # struct -> members that are arrays held in it
    struct_member_types: dict[str, dict[str, str]] = field(default_factory=dict)  # struct -> member -> declared type
    type_aliases: dict[str, str] = field(default_factory=dict)  # using X = T; typedef T X;
    # ``Traits<16>::Type`` / ``Traits::Type`` (a specialisation's or the primary template's member
    # alias, its arguments written without spaces) -> the aliased type
    member_types: dict[str, str] = field(default_factory=dict)
    # partial specialisations: ``Trait<T,2>`` -> its own template parameters (``("T",)``)
    partial_specialisations: dict[str, tuple[str, ...]] = field(default_factory=dict)
    namespace_aliases: dict[str, str] = field(default_factory=dict)  # namespace cg = cooperative_groups;
    attributes: list[tuple[int, str]] = field(default_factory=list)  # (row, text) blanked attributes
    pragmas: list[tuple[int, int, str]] = field(default_factory=list)  # (row, byte offset, text)
    dead_preproc: list[Node] = field(default_factory=list)  # #if 0 regions
    # byte ranges of conditional code that cannot be compiled in: ``#if 0`` blocks inside function
    # bodies, and the branch of an ``#ifdef`` / ``#ifndef`` that the file's own ``#define`` rules out
    dead_ranges: list[tuple[int, int]] = field(default_factory=list)
    file_variables: set[str] = field(default_factory=set)  # non-const file-scope variables without an initializer
    # ``template void launch<float, true>(...);``: function name -> the argument nodes of each
    # explicit instantiation (what a host template that nothing here calls is compiled for)
    explicit_instantiations: dict[str, list[list[Node]]] = field(default_factory=dict)
    low_precision: bool = False  # half / bf16 / fp8 types appear in the code (comments excluded)
    warnings: list[str] = field(default_factory=list)

    def line(self, row: int) -> int:
        """Absolute 1-based line of a 0-based row of this source."""
        return self.flat_line if self.flat_line is not None else self.line_offset + row + 1


_COMMENT_RE = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_LOW_PRECISION_RE = re.compile(r"\b(__nv_bfloat16\w*|nv_bfloat16\w*|__half2?|half2?|__nv_fp8\w*|bfloat16|BFloat16|c10::Half|at::Half)\b")


def _mentions_low_precision(source_text: str) -> bool:
    """Whether code outside comments names a 16/8-bit float type. The regex starts at a word
    boundary, so ``re`` tries it at every position of the text; :func:`.rx.search` first tests
    for the words every match contains, which most sources lack."""
    return bool(rx.search(_LOW_PRECISION_RE.pattern, _COMMENT_RE.sub(" ", source_text)))


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


def _declared_name(defn: Node) -> Node | None:
    """The name part of a function definition's declarator (``k`` or ``k<__half>``), or None."""
    decl = defn.child_by_field_name("declarator")
    while decl is not None and decl.type != "function_declarator":
        nxt = decl.child_by_field_name("declarator")
        if nxt is None:
            break
        decl = nxt
    return decl.child_by_field_name("declarator") if decl is not None else None


def _specialized_args(defn: Node) -> str:
    """The template argument list written after a function's name (``k<__half>``), spaces
    removed; "" when the name has none."""
    inner = _declared_name(defn)
    if inner is None or inner.type != "template_function":
        return ""
    args = inner.child_by_field_name("arguments")
    return "".join(text(args).split()) if args is not None else ""


def _function_name(defn: Node) -> str:
    inner = _declared_name(defn)
    return callee_name(inner).split("::")[-1] if inner is not None else ""


def _template_params(tmpl: Node | None) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if tmpl is None:
        return out
    plist = tmpl.child_by_field_name("parameters")
    for p in plist.named_children if plist is not None else []:
        names = [c for c in p.children if c.type in ("identifier", "type_identifier")]
        declared = _innermost_identifier(p.child_by_field_name("declarator"))
        if declared is not None and p.type == "parameter_declaration":
            names = [declared]  # ``T (*ACT)(const T&)``: the parameter is ACT, not its type T
        if not names:
            continue
        name = text(names[-1]) if p.type != "optional_parameter_declaration" else text(p.child_by_field_name("declarator") or names[-1])
        default = p.child_by_field_name("default_value") or p.child_by_field_name("default_type")
        out.append((name, text(default)))
    return out


def _innermost_identifier(d: Node | None) -> Node | None:
    """The name a declarator declares, through pointer, function and parenthesised declarators."""
    while d is not None and d.type != "identifier":
        d = d.child_by_field_name("declarator") or next((c for c in d.named_children if c.type.endswith("declarator") or c.type == "identifier"), None)
    return d


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
    found = of_types_unordered(body, "cuda", ("identifier", "call_expression") + _INDEXED_TYPES)
    names |= texts(n for n in found if n.type == "identifier")
    for n in in_order(n for n in found if n.type != "identifier"):
        t = n.type
        if t in _INDEXED_TYPES:
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


def _collect(node: Node, src: CudaSource, template: Node | None, extern_c: bool, owner: str = "") -> None:
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
                    owner, index if body is not None else {}, template,
                )
            )
        elif t == "template_declaration":
            _collect(child, src, child, extern_c, owner)
        elif t == "template_instantiation":
            _collect_instantiation(child, src)
        elif t == "linkage_specification":
            _collect(child, src, template, True, owner)
        elif t in ("declaration_list", "namespace_definition", "preproc_ifdef", "preproc_else", "preproc_elif"):
            _collect(child, src, template, extern_c, owner)
        elif t in ("struct_specifier", "class_specifier", "union_specifier"):
            _collect_struct(child, src, template, extern_c)
        elif t == "enum_specifier":
            _collect_enum(child, src)
        elif t == "alias_declaration":
            name, typ = child.child_by_field_name("name"), child.child_by_field_name("type")
            if name is not None and typ is not None:
                src.type_aliases[text(name)] = " ".join(text(typ).split())
        elif t == "type_definition":
            typ = child.child_by_field_name("type")
            for d in child.children_by_field_name("declarator"):
                if typ is not None and d.type == "type_identifier":
                    src.type_aliases[text(d)] = " ".join(text(typ).split())
            if typ is not None and typ.type in ("struct_specifier", "class_specifier"):
                _collect_struct(typ, src, template, extern_c)
        elif t == "namespace_alias_definition":
            ids = [text(c) for c in child.named_children if c.type in ("namespace_identifier", "nested_namespace_specifier", "qualified_identifier", "identifier")]
            if len(ids) >= 2:
                src.namespace_aliases[ids[0]] = ids[-1]
        elif t == "preproc_if":
            cond = child.child_by_field_name("condition")
            if cond is not None and text(cond).strip() in ("0", "false"):
                src.dead_preproc.append(child)  # "#if 0": the classic way to comment out a kernel
                alt = child.child_by_field_name("alternative")
                if alt is not None:
                    _collect(alt, src, template, extern_c, owner)
            else:
                _collect(child, src, template, extern_c, owner)
        elif t in ("preproc_def", "preproc_function_def"):
            name = child.child_by_field_name("name")
            if name is not None:
                src.macros[text(name)] = child
                value = child.child_by_field_name("value")
                if t == "preproc_def" and value is not None:
                    src.constants[text(name)] = text(value).strip()
        elif t in ("declaration", "field_declaration") and (template is None or owner):
            if t == "declaration" and not owner and not any(c.type == "type_qualifier" for c in child.children):
                src.file_variables |= {text(d) for d in child.children if d.type == "identifier"}
            if any(c.type == "type_qualifier" and text(c) in ("constexpr", "const") for c in child.children):
                prefix = owner + "::" if owner else ""
                for d in child.children:
                    if d.type == "init_declarator":
                        name = d.child_by_field_name("declarator")
                        value = d.child_by_field_name("value")
                        if name is not None and value is not None and name.type == "identifier":
                            src.constants[prefix + text(name)] = text(value)
                            src.constant_nodes[prefix + text(name)] = value
                    elif d.type == "field_identifier":
                        value = child.child_by_field_name("default_value")
                        if value is not None:
                            src.constants[prefix + text(d)] = text(value)
                            src.constant_nodes[prefix + text(d)] = value
            for c in child.children:
                if c.type in ("struct_specifier", "class_specifier") and c.child_by_field_name("body") is not None:
                    _collect_struct(c, src, template, extern_c)
                elif c.type == "enum_specifier":
                    _collect_enum(c, src)


def _collect_instantiation(node: Node, src: CudaSource) -> None:
    """``template int32_t compute<float, true>(cudaStream_t, ...);`` -> compute: [float, true]."""
    d = node.child_by_field_name("declarator")
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_name("declarator")
    fn = d.child_by_field_name("declarator") if d is not None else None
    if fn is None or fn.type != "template_function":
        return
    name, args = fn.child_by_field_name("name"), fn.child_by_field_name("arguments")
    if name is None or args is None:
        return
    spelled = text(name).split("::")[-1]
    src.explicit_instantiations.setdefault(spelled, []).append([a for a in args.named_children if a.type != "comment"])


def _collect_struct(node: Node, src: CudaSource, template: Node | None, extern_c: bool) -> None:
    """Methods (functors' operator(), static helpers) and static constants of a struct."""
    name = node.child_by_field_name("name")
    body = node.child_by_field_name("body")
    if name is None or body is None:
        return
    sname = text(name).split("<")[0]
    spelled = "".join(text(name).split())  # ``Traits<16>`` for an explicit specialisation
    if "<" in spelled and template is not None and _template_params(template):
        src.partial_specialisations[spelled] = tuple(p for p, _ in _template_params(template))
    for member in body.named_children:
        if member.type in ("alias_declaration", "type_definition"):
            alias = member.child_by_field_name("name") or next(iter(member.children_by_field_name("declarator")), None)
            typ = member.child_by_field_name("type")
            if alias is not None and typ is not None and alias.type == "type_identifier":
                src.member_types[f"{spelled}::{text(alias)}"] = " ".join(text(typ).split())
    src.struct_templates[sname] = _template_params(template)
    src.struct_fields[sname] = _data_members(body)
    src.struct_arrays[sname] = _array_members(body)
    src.struct_member_types[sname] = _member_types(body)
    first = len(src.functions)
    _collect(body, src, None, extern_c, sname)
    for fn in src.functions:
        if fn.owner == sname and template is not None and not fn.template_params:
            fn.template_params = _template_params(template)
    if "<" in spelled:
        for fn in src.functions[first:]:
            fn.owner_spelling, fn.owner_params = spelled, tuple(p for p, _ in _template_params(template))


def _data_members(body: Node) -> list[str]:
    """The non-static data members of a struct body in declaration order: the order in which a
    brace initialiser ``T{a, b}`` or ``return {a, b};`` fills them."""
    out: list[str] = []
    for decl in body.named_children:
        if decl.type != "field_declaration":
            continue
        if any(c.type == "storage_class_specifier" and text(c) == "static" for c in decl.children):
            continue
        for d in decl.children_by_field_name("declarator"):
            while d is not None and d.type in ("array_declarator", "pointer_declarator", "reference_declarator", "init_declarator"):
                d = d.child_by_field_name("declarator")
            if d is not None and d.type == "field_identifier":
                out.append(text(d))
    return out


def _member_types(body: Node) -> dict[str, str]:
    """Each non-static data member's declared type as written (``float`` for ``float count, mean;``):
    the type a local's member has, as a declared local's type is known."""
    out: dict[str, str] = {}
    for decl in body.named_children:
        typ = decl.child_by_field_name("type") if decl.type == "field_declaration" else None
        if typ is None or any(c.type == "storage_class_specifier" and text(c) == "static" for c in decl.children):
            continue
        for d in decl.children_by_field_name("declarator"):
            if d.type == "field_identifier":  # plain members only: arrays and pointers are not scalars
                out[text(d)] = " ".join(text(typ).split())
    return out


def _array_members(body: Node) -> set[str]:
    """The data members declared as arrays (``T v[N]``, not pointers): storage inside the struct, so
    that ``p.v[i]`` of a struct copied into registers reads that copy, never memory."""
    out: set[str] = set()
    for decl in body.named_children:
        if decl.type != "field_declaration":
            continue
        for d in decl.children_by_field_name("declarator"):
            if d.type == "array_declarator":
                inner = d.child_by_field_name("declarator")
                while inner is not None and inner.type == "array_declarator":
                    inner = inner.child_by_field_name("declarator")
                if inner is not None and inner.type == "field_identifier":
                    out.add(text(inner))
    return out


def _collect_enum(node: Node, src: CudaSource) -> None:
    name = node.child_by_field_name("name")
    scoped = any(c.type in ("class", "struct") for c in node.children)
    prefix = text(name) + "::" if scoped and name is not None else ""
    body = node.child_by_field_name("body")
    previous = None
    for e in body.named_children if body is not None else []:
        if e.type != "enumerator":
            continue
        ename = e.child_by_field_name("name")
        value = e.child_by_field_name("value")
        if ename is None:
            continue
        key = prefix + text(ename)
        expr = text(value) if value is not None else (f"({previous}) + 1" if previous is not None else "0")
        src.constants[key] = expr
        if value is not None:
            src.constant_nodes[key] = value
        previous = expr if value is None else text(value)


def _dead_conditionals(root: Node, defined: dict[str, str]) -> list[tuple[int, int]]:
    """Byte ranges of code no build compiles: the body of ``#if 0`` (its ``#else`` stays), the
    ``#else`` of ``#if 1``, the side of ``#if M == 1`` (``#if M``, ``#if !M``, ``!=``, ``<`` ...)
    that the value of an unconditional ``#define M 0`` rules out (llama_cu_awq's ``#define
    DUMP_PER_TOKEN_TIMINGS 0`` around its timing events), and the side of ``#ifdef M`` /
    ``#ifndef M`` ruled out by an unconditional ``#define M`` in the file (FasterTransformer's
    ``#define DO_SPLIT_...`` selecting one launch path). A macro the file does not define is a
    build flag: both sides stay."""
    out: list[tuple[int, int]] = []
    for n in walk(root):
        if n.type not in ("preproc_if", "preproc_ifdef"):
            continue
        alt = n.child_by_field_name("alternative")
        body_end = alt.start_byte if alt is not None else n.end_byte
        if n.type == "preproc_if":
            cond = n.child_by_field_name("condition")
            truth = _preproc_truth(text(cond).strip() if cond is not None else "", defined)
            if truth is False:
                out.append((n.start_byte, body_end))
            elif truth is True and alt is not None:
                out.append((alt.start_byte, n.end_byte))
            continue
        name = n.child_by_field_name("name")
        if name is None or text(name) not in defined:
            continue
        negated = text(n.children[0]).strip().startswith("#ifndef") if n.children else False
        if negated:
            out.append((n.start_byte, body_end))
        elif alt is not None:
            out.append((alt.start_byte, n.end_byte))
    return out


_PREPROC_TEST = re.compile(r"^(!?)\s*\(?\s*([A-Za-z_]\w*|\d+)\s*\)?\s*(?:(==|!=|<=|>=|<|>)\s*(\d+))?$")


def _preproc_truth(cond: str, defined: dict[str, str]) -> bool | None:
    """The value of a simple ``#if`` condition: a literal, or a macro the file defines to an
    integer in every build, optionally negated or compared with an integer. None when unsure
    (a build flag, ``defined(...)``, arithmetic)."""
    if cond in ("true", "false"):
        return cond == "true"
    m = _PREPROC_TEST.match(cond)
    if m is None:
        return None
    neg, word, op, rhs = m.groups()
    value = word if word.isdigit() else defined.get(word) if isinstance(defined, dict) else None
    if value is None or not value.strip().lstrip("-").isdigit():
        return None
    v = int(value)
    if op is not None:
        r = int(rhs)
        truth = {"==": v == r, "!=": v != r, "<=": v <= r, ">=": v >= r, "<": v < r, ">": v > r}[op]
    else:
        truth = v != 0
    return (not truth) if neg else truth


def _drop_dead_code(fn: CudaFunction, dead_ranges: list[tuple[int, int]]) -> None:
    """Forget the launches, calls and names of ``fn`` that lie in dead conditional code: a kernel
    launched or named only there (an ``#if 0`` launcher) is not reached."""
    def dead(n: Node) -> bool:
        return any(a <= n.start_byte < b for a, b in dead_ranges)

    fn.launches = [site for site in fn.launches if not dead(site.node)]
    body = fn.node.child_by_field_name("body")
    if body is None:
        return
    fn.names = texts(n for n in of_types_unordered(body, "cuda", ("identifier",)) if not dead(n))
    live_calls = [n for n in fn.body_nodes.get("call_expression", []) if not dead(n)]
    fn.body_nodes["call_expression"] = live_calls
    fn.calls = set()
    for n in live_calls:
        callee = n.child_by_field_name("function") or (n.children[0] if n.children else None)
        if callee is not None:
            fn.calls |= {callee_name(callee), callee_name(callee).split("::")[-1]}


def parse_cuda(source_text: str, file: str, line_offset: int = 0, embedded: bool = False, flat_line: int | None = None,
               defined: dict[str, str] | None = None) -> CudaSource:
    """Parse CUDA text; collect functions, launches, macros and constants; warn on syntax errors.
    ``defined``: the macros every build of this file defines (its own unconditional ``#define``
    lines and those of the files it sees), which settle its ``#ifdef`` / ``#ifndef`` tests."""
    attributes: list[tuple[int, str]] = []
    if "__cluster_dims__" in source_text or "__maxnreg__" in source_text or "__launch_bounds__" in source_text or "__align__" in source_text:
        for m in _ATTRIBUTE_RE.finditer(source_text):
            attributes.append((source_text.count("\n", 0, m.start()), m.group(0)))
        source_text = _ATTRIBUTE_RE.sub(_blank, source_text)
    pragmas: list[tuple[int, int, str]] = []
    if "UNROLL" in source_text:
        source_text = _LIBRARY_PRAGMA_RE.sub(lambda m: "#pragma " + _LIBRARY_PRAGMAS[m.group(1)], source_text)
    if "pragma" in source_text:
        row = byte = last = 0  # counted from the previous pragma on: one pass over the text, not one per pragma
        for m in _PRAGMA_RE.finditer(source_text):
            row += source_text.count("\n", last, m.start())
            byte += len(source_text[last: m.start()].encode("utf-8", errors="replace"))
            last = m.start()
            pragmas.append((row, byte, m.group(1).strip()))
        source_text = _PRAGMA_RE.sub(_blank, source_text)
    if "enum" in source_text:
        source_text = _ENUM_BASE_RE.sub(lambda m: m.group(1) + " " * len(m.group(2)), source_text)
    tree, data = parse("cuda", source_text)
    src = CudaSource(file, source_text, data, tree, line_offset, flat_line, embedded, attributes=attributes, pragmas=pragmas)
    _collect(tree.root_node, src, None, False)
    if "#if" in source_text:
        src.dead_ranges = _dead_conditionals(tree.root_node, defined if defined is not None else macros_module.unconditional_defines(source_text))
        for fn in src.functions:
            if any(fn.node.start_byte <= a < fn.node.end_byte for a, _ in src.dead_ranges):
                _drop_dead_code(fn, src.dead_ranges)
    src.low_precision = _mentions_low_precision(source_text)
    for row in error_rows(tree):
        src.warnings.append(f"{file}:{src.line(row)}: syntax error (analysed what parsed)")
    return src
