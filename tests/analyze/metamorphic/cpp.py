"""C++/CUDA syntax for the transformers: tree-sitter parse, tokens, declared names, text edits.

The transformers must not trust the analyzer's parser (it is what they test), so they use the
tree-sitter CUDA grammar directly, the same package the project loads. The grammar recovers from
constructs it does not know (``__align__(16)``, ``enum : int``, a ``#pragma`` between a ``for``
header and its body) with ERROR / MISSING nodes; everything here works on the leaves, which stay
in source order through such recoveries, so a recovery never loses or reorders text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterator

import tree_sitter as ts
import tree_sitter_cuda

Node = ts.Node

# Leaves that are atomic for re-emission even though tree-sitter gives them children.
ATOMIC = {"string_literal", "raw_string_literal", "char_literal", "system_lib_string", "number_literal",
          "concatenated_string", "user_defined_literal", "preproc_arg"}
NAME_LEAVES = {"identifier", "type_identifier", "namespace_identifier", "field_identifier", "statement_identifier"}
_WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@lru_cache(maxsize=1)
def _parser() -> ts.Parser:
    return ts.Parser(ts.Language(tree_sitter_cuda.language()))


def parse(text: str) -> ts.Tree:
    return _parser().parse(text.encode("utf-8"))


def node_text(node: Node) -> str:
    return node.text.decode("utf-8") if node.text is not None else ""


def walk(node: Node) -> Iterator[Node]:
    """Every node under ``node``, pre-order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def leaves(root: Node) -> Iterator[Node]:
    """Tokens in source order: childless nodes and the atomic literal nodes; zero-width MISSING
    nodes (inserted by error recovery, not in the text) are left out."""
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type in ATOMIC or n.child_count == 0 or n.type == "comment":
            if n.end_byte > n.start_byte:
                yield n
            continue
        stack.extend(reversed(n.children))


def in_error(node: Node) -> bool:
    p = node.parent
    while p is not None:
        if p.type == "ERROR":
            return True
        p = p.parent
    return False


# ---------------------------------------------------------------------------------------------
# Declared names


@dataclass
class Declarations:
    """What one translation unit declares itself (everything else is a library name).

    ``names``: variables, parameters, functions, types, template parameters, enumerators,
    namespaces, macros and their parameters, labels. ``fields``: data members and methods of the
    TU's own structs (renamed only where a member access names them, so ``threadIdx.x`` stays).
    ``kernels``: ``__global__`` functions, whose names the corpus labels key on (never renamed).
    """

    names: set[str] = field(default_factory=set)
    fields: set[str] = field(default_factory=set)
    kernels: set[str] = field(default_factory=set)
    macros: set[str] = field(default_factory=set)

    def all(self) -> set[str]:
        return self.names | self.fields

    def merge(self, other: "Declarations") -> None:
        self.names |= other.names
        self.fields |= other.fields
        self.kernels |= other.kernels
        self.macros |= other.macros


_DECLARATOR_WRAPPERS = {"pointer_declarator", "reference_declarator", "array_declarator", "init_declarator",
                        "parenthesized_declarator", "function_declarator", "attributed_declarator",
                        "abstract_pointer_declarator", "abstract_reference_declarator", "abstract_array_declarator"}


def declarator_name(node: Node | None) -> Node | None:
    """The name a declarator introduces (``*x``, ``(*tile)[N]``, ``f(int)``, ``v = 1`` ...), or None
    for qualified / template-specialisation declarators, which name something declared elsewhere."""
    while node is not None:
        if node.type in ("identifier", "field_identifier", "type_identifier"):
            return node
        if node.type not in _DECLARATOR_WRAPPERS:
            return None
        inner = node.child_by_field_name("declarator")
        if inner is None:  # parenthesized_declarator, or a recovery inside one
            inner = next((c for c in node.named_children
                          if c.type in _DECLARATOR_WRAPPERS or c.type in ("identifier", "field_identifier")), None)
        node = inner
    return None


def _declarators(node: Node) -> list[Node]:
    return [c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "declarator"]


def _has_global(fn: Node) -> bool:
    return any(c.type == "__global__" or node_text(c) == "__global__" for c in fn.children)


def _in_class_body(node: Node) -> bool:
    p = node.parent
    while p is not None and p.type in ("template_declaration",):
        p = p.parent
    return p is not None and p.type == "field_declaration_list"


def declarations(root: Node) -> Declarations:
    """Every name the translation unit under ``root`` declares."""
    d = Declarations()
    for n in walk(root):
        t = n.type
        if t in ("declaration", "field_declaration", "parameter_declaration", "optional_parameter_declaration",
                 "type_definition", "function_definition", "for_range_loop"):
            for decl in _declarators(n):
                name = declarator_name(decl)
                if name is None:
                    continue
                value = node_text(name)
                is_function = decl.type == "function_declarator" or (
                    decl.type in _DECLARATOR_WRAPPERS and any(x.type == "function_declarator" for x in walk(decl)))
                if t == "function_definition" and _has_global(n):
                    d.kernels.add(value)
                elif t == "declaration" and is_function and _has_global(n):
                    d.kernels.add(value)
                elif name.type == "field_identifier" or (t == "field_declaration") or (
                        t == "function_definition" and _in_class_body(n)):
                    d.fields.add(value)
                else:
                    d.names.add(value)
        elif t in ("type_parameter_declaration", "optional_type_parameter_declaration",
                   "variadic_type_parameter_declaration"):
            for c in n.named_children:
                if c.type == "type_identifier":
                    d.names.add(node_text(c))
        elif t in ("struct_specifier", "class_specifier", "union_specifier", "enum_specifier"):
            name = n.child_by_field_name("name")
            if name is not None and name.type == "type_identifier" and name.end_byte > name.start_byte:
                d.names.add(node_text(name))
        elif t in ("enumerator", "alias_declaration", "namespace_definition", "namespace_alias_definition"):
            name = n.child_by_field_name("name")
            if name is not None and name.end_byte > name.start_byte:
                d.names.add(node_text(name))
        elif t in ("preproc_def", "preproc_function_def"):
            name = n.child_by_field_name("name")
            if name is not None:
                d.names.add(node_text(name))
                d.macros.add(node_text(name))
            params = n.child_by_field_name("parameters")
            if params is not None:
                d.names |= {node_text(c) for c in params.named_children if c.type == "identifier"}
        elif t == "labeled_statement":
            label = n.child_by_field_name("label")
            if label is not None:
                d.names.add(node_text(label))
    d.names -= d.kernels
    d.fields -= d.kernels
    return d


def local_includes(root: Node) -> list[str]:
    """``#include "x"`` paths (quoted form: the submission's own headers)."""
    out = []
    for n in walk(root):
        if n.type == "preproc_include":
            path = n.child_by_field_name("path")
            if path is not None and path.type == "string_literal":
                out.append(node_text(path)[1:-1])
    return out


def library_qualified(leaf: Node, user: set[str]) -> bool:
    """True for the name part of ``lib::name`` where ``lib`` is not declared in the submission
    (``at::kBFloat16`` stays even when the kernel file has its own ``kBFloat16``; so does
    ``cub::BlockReduce<T, N>`` when the kernel names its own typedef ``BlockReduce``)."""
    p = leaf.parent
    if p is not None and p.type == "template_type" and p.child_by_field_name("name") == leaf:
        leaf, p = p, p.parent  # the template's name: the qualified name is around the template
    if p is None or p.type != "qualified_identifier" or p.child_by_field_name("name") != leaf:
        return False
    scope = p.child_by_field_name("scope")
    if scope is None:
        return False
    head = scope.child_by_field_name("name") if scope.type == "template_type" else scope
    return head is None or node_text(head) not in user


# ---------------------------------------------------------------------------------------------
# Edits


@dataclass(frozen=True)
class Edit:
    start: int  # byte offsets into the UTF-8 text
    end: int
    new: str


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply non-overlapping byte-range edits."""
    data = text.encode("utf-8")
    out: list[bytes] = []
    pos = 0
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        if e.start < pos:
            raise ValueError(f"overlapping edits at byte {e.start}")
        out += [data[pos:e.start], e.new.encode("utf-8")]
        pos = e.end
    out.append(data[pos:])
    return b"".join(out).decode("utf-8")


def replace_words(text: str, mapping: dict[str, str]) -> str:
    """Whole-word replacement (for comments and macro bodies, which the grammar keeps as text)."""
    if not mapping:
        return text
    return _WORD_RE.sub(lambda m: mapping.get(m.group(0), m.group(0)), text)


def functions(root: Node) -> list[Node]:
    """Every function_definition node."""
    return [n for n in walk(root) if n.type == "function_definition"]


def function_name(fn: Node) -> str:
    name = declarator_name(fn.child_by_field_name("declarator"))
    if name is not None:
        return node_text(name)
    decl = fn.child_by_field_name("declarator")
    inner = decl.child_by_field_name("declarator") if decl is not None else None
    if inner is not None and inner.type == "template_function":
        return node_text(inner.child_by_field_name("name"))
    return ""


def is_kernel(fn: Node) -> bool:
    return _has_global(fn)


def template_of(fn: Node) -> Node | None:
    """The template_declaration directly wrapping ``fn``, if any."""
    p = fn.parent
    return p if p is not None and p.type == "template_declaration" else None


def top_level_item(node: Node) -> Node:
    """``node`` widened to its enclosing template_declaration(s), so that it moves as one unit."""
    while node.parent is not None and node.parent.type == "template_declaration":
        node = node.parent
    return node
