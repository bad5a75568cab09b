"""Thin helpers over tree-sitter: cached parsers, node walking, syntax-error lines.

Parsers are created once per process (creating one costs more than parsing a small file).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterator

import tree_sitter as ts
import tree_sitter_cuda
import tree_sitter_python

Node = ts.Node


@lru_cache(maxsize=None)
def _parser(language: str) -> ts.Parser:
    grammar = tree_sitter_cuda.language() if language == "cuda" else tree_sitter_python.language()
    return ts.Parser(ts.Language(grammar))


def parse(language: str, text: str) -> tuple[ts.Tree, bytes]:
    """Parse ``text`` with the CUDA or Python grammar; return the tree and the UTF-8 bytes."""
    data = text.encode("utf-8", errors="replace")
    return _parser(language).parse(data), data


@lru_cache(maxsize=None)
def _query(language: str, types: tuple[str, ...]) -> ts.Query | None:
    grammar = _parser(language).language
    known = [t for t in types if grammar.id_for_node_kind(t, True)]  # a type the grammar lacks matches nothing
    return ts.Query(grammar, "[" + " ".join(f"({t})" for t in known) + "] @n") if known else None


def of_types(node: Node, language: str, types: tuple[str, ...]) -> list[Node]:
    """The nodes under ``node`` (itself included) of one of ``types``, in pre-order. A
    tree-sitter query runs in C: finding the few statements of interest this way costs a
    fraction of a Python walk over every node of a module."""
    return in_order(of_types_unordered(node, language, types))


def of_types_unordered(node: Node, language: str, types: tuple[str, ...]) -> list[Node]:
    """:func:`of_types` in the query's own order: for callers that collect a set (identifier
    names) and put in order only the few nodes whose order matters."""
    query = _query(language, types)
    return ts.QueryCursor(query).captures(node).get("n", []) if query is not None else []


def in_order(nodes) -> list[Node]:
    """Pre-order: by start, an enclosing node before the nodes it contains."""
    return sorted(nodes, key=lambda n: (n.start_byte, -n.end_byte))


def texts(nodes) -> set[str]:
    """The distinct texts of ``nodes`` (each distinct spelling decoded once)."""
    return {raw.decode("utf-8", errors="replace") for raw in {n.text for n in nodes} if raw is not None}


def walk(node: Node) -> Iterator[Node]:
    """Every node under ``node`` (pre-order) with a tree cursor: no recursion, no child lists."""
    cursor = node.walk()
    first_child, next_sibling, parent = cursor.goto_first_child, cursor.goto_next_sibling, cursor.goto_parent
    while True:
        yield cursor.node
        if first_child():
            continue
        while not next_sibling():
            if not parent():
                return


def walk_pruned(node: Node, prune) -> Iterator[Node]:
    """Pre-order walk that does not descend into nodes for which ``prune(node)`` is true
    (those nodes are not yielded either)."""
    cursor = node.walk()
    first_child, next_sibling, parent = cursor.goto_first_child, cursor.goto_next_sibling, cursor.goto_parent
    while True:
        n = cursor.node
        if not prune(n):
            yield n
            if first_child():
                continue
        while not next_sibling():
            if not parent():
                return


def text(node: Node | None) -> str:
    if node is None:
        return ""
    raw = node.text
    return raw.decode("utf-8", errors="replace") if raw is not None else ""


def error_rows(tree: ts.Tree, limit: int = 20) -> list[int]:
    """0-based rows of ERROR / MISSING nodes (the places where tree-sitter had to recover)."""
    rows: list[int] = []
    if not tree.root_node.has_error:
        return rows
    stack = [tree.root_node]
    while stack and len(rows) < limit:
        n = stack.pop()
        if not n.has_error:
            continue
        if n.is_error or n.is_missing:
            rows.append(n.start_point[0])
            continue
        stack.extend(reversed(n.children))
    return sorted(set(rows))


def child_of_type(node: Node, *types: str) -> Node | None:
    for c in node.children:
        if c.type in types:
            return c
    return None
