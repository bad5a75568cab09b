"""Liveness: which kernels are reachable, and which code inside a kernel can earn credit.

Two questions, both answered conservatively (when in doubt, code is live):

1. *Launched*: a kernel counts for the submission when the entry point (``run``, ``ModelNew`` and
   module-level code) reaches a launch of it: a Triton ``kernel[grid](...)`` in a reachable Python
   function, or a CUDA ``<<<...>>>`` in a host function that the Python side calls or binds
   (its name appears in reachable Python code), followed through host-to-host calls. A submission
   with no Python entry point (a standalone ``.cu``) treats every host function as a root.
2. *Dead branches*: an ``if`` whose condition is constant under *every* set of launch-site
   constants (Triton ``tl.constexpr`` values, autotune configs, CUDA template arguments and
   file constants) has its untaken side removed. Comments and strings never reach the detectors.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from typing import Iterable, Mapping

from .treesitter import Node, text, walk

Env = Mapping[str, object]


class Unknown(Exception):
    """The expression depends on something not known statically."""


# ---------------------------------------------------------------------------- constant folding

_C_NUMBER = re.compile(r"\b(0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][-+]?\d+)?)[uUlLfF]*\b")


@lru_cache(maxsize=16384)
def c_to_python(expr: str) -> str:
    """Rewrite a C/C++ constant expression into Python syntax (for the folding below)."""
    e = expr.strip()
    e = _C_NUMBER.sub(lambda m: m.group(1), e)
    e = e.replace("&&", " and ").replace("||", " or ")
    e = re.sub(r"!(?!=)", " not ", e)
    e = re.sub(r"\btrue\b", "True", e)
    e = re.sub(r"\bfalse\b", "False", e)
    e = re.sub(r"\bnullptr\b", "None", e)
    e = e.replace("::", "__")
    return e


def _fold(node: ast.AST, env: Env) -> object:
    if isinstance(node, ast.Expression):
        return _fold(node.body, env)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        raise Unknown(node.id)
    if isinstance(node, ast.BoolOp):
        values = [_fold(v, env) for v in node.values]
        if isinstance(node.op, ast.And):
            return all(values)
        return any(values)
    if isinstance(node, ast.UnaryOp):
        v = _fold(node.operand, env)
        if isinstance(node.op, ast.Not):
            return not v
        if isinstance(node.op, ast.USub):
            return -v  # type: ignore[operator]
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Invert):
            return ~v  # type: ignore[operator]
    if isinstance(node, ast.Compare):
        left = _fold(node.left, env)
        for op, right_node in zip(node.ops, node.comparators):
            right = _fold(right_node, env)
            ok = {
                ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
                ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
                ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b,
            }.get(type(op))
            if ok is None or not ok(left, right):
                return False if ok is not None else _raise()
            left = right
        return True
    if isinstance(node, ast.BinOp):
        a, b = _fold(node.left, env), _fold(node.right, env)
        if not all(isinstance(x, (int, float, bool)) for x in (a, b)):
            raise Unknown("operand")
        ops = {
            ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
            ast.FloorDiv: lambda: a // b, ast.Mod: lambda: a % b, ast.Pow: lambda: a ** b if abs(b) < 64 else _raise(),
            ast.Div: lambda: (a // b) if isinstance(a, int) and isinstance(b, int) else a / b,
            ast.LShift: lambda: a << b if 0 <= b < 64 else _raise(), ast.RShift: lambda: a >> b,
            ast.BitAnd: lambda: a & b, ast.BitOr: lambda: a | b, ast.BitXor: lambda: a ^ b,
        }
        fn = ops.get(type(node.op))
        if fn is None:
            raise Unknown("op")
        try:
            return fn()
        except (ZeroDivisionError, TypeError, OverflowError, ValueError) as exc:
            raise Unknown(str(exc)) from exc
    if isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) <= 64:
        return [_fold(e, env) for e in node.elts]
    if isinstance(node, ast.IfExp):
        return _fold(node.body, env) if _fold(node.test, env) else _fold(node.orelse, env)
    raise Unknown(type(node).__name__)


def _raise() -> object:
    raise Unknown("unsupported")


def evaluate(expr: str, env: Env, language: str = "python") -> object:
    """Fold ``expr`` under ``env``; raise :class:`Unknown` when it is not a constant."""
    source = c_to_python(expr) if language == "cuda" else expr.strip()
    if not source or len(source) > 300:
        raise Unknown("empty")
    tree = _parse_expression(source.strip().strip("()") if source.count("(") != source.count(")") else source)
    if tree is None:
        raise Unknown("syntax")
    return _fold(tree, env)


@lru_cache(maxsize=16384)
def _parse_expression(source: str) -> ast.Expression | None:
    """The expression's syntax tree (None: not an expression). Memoised: the same template
    arguments and conditions are folded under every launch env; _fold never mutates the tree."""
    try:
        return ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def literal_value(expr: str, env: Env | None = None, language: str = "python") -> object:
    """A constant's value, or :data:`UNKNOWN` (a sentinel) when it is not a constant."""
    try:
        return evaluate(expr, env or {}, language)
    except Unknown:
        return UNKNOWN
    except RecursionError:
        return UNKNOWN


UNKNOWN = object()


def resolve_constants(raw: Mapping[str, str], language: str) -> dict[str, object]:
    """Fold a table of ``NAME -> expression`` (file constants that may refer to each other)."""
    out: dict[str, object] = {}
    for _ in range(3):  # a few rounds resolve chains like BM = 2 * BASE
        for name, expr in raw.items():
            if name in out:
                continue
            value = literal_value(expr, out, language)
            if value is not UNKNOWN and isinstance(value, (int, float, bool, str, type(None))):
                out[name] = value
    return out


def branch_truth(cond: str, envs: Iterable[Env], language: str) -> bool | None:
    """True/False when ``cond`` folds to the same truth value under every env; else None."""
    seen: set[bool] = set()
    count = 0
    for env in envs:
        count += 1
        try:
            seen.add(bool(evaluate(cond, env, language)))
        except (Unknown, RecursionError):
            return None
        if len(seen) > 1:
            return None
    return seen.pop() if count and len(seen) == 1 else None


# ---------------------------------------------------------------------------- dead branches

def _branch_node_truth(n: Node, envs: list[Env], language: str) -> bool | None:
    cond = n.child_by_field_name("condition")
    if cond is None:
        return None
    ctext = text(cond).strip()
    if language == "cuda" and ctext.startswith("(") and ctext.endswith(")"):
        ctext = ctext[1:-1]
    return branch_truth(ctext, envs, language)


def dead_ranges(body: Node, envs: list[Env], language: str, branches: list[Node] | None = None) -> list[tuple[int, int]]:
    """Byte ranges of ``body`` that are dead under every env: untaken sides of constant ``if``s
    (and ``#if 0`` regions). Nested branches inside a dead range are not examined.
    ``branches``: the body's if / elif / #if nodes in walk order when the caller already has them."""
    raw = body.text or b""
    if b"if" not in raw:
        return []
    out: list[tuple[int, int]] = []
    for n in (walk(body) if branches is None else branches):
        t = n.type
        if t not in ("if_statement", "elif_clause", "preproc_if"):
            continue
        s = n.start_byte
        if any(a <= s < b for a, b in out):
            continue
        if t == "preproc_if":
            cond = n.child_by_field_name("condition")
            if cond is not None and text(cond).strip() in ("0", "false"):
                alt = n.child_by_field_name("alternative")
                out.append((n.start_byte, alt.start_byte if alt is not None else n.end_byte))
            continue
        if t == "elif_clause":
            if language == "python" and _branch_node_truth(n, envs, language) is False:
                cons = n.child_by_field_name("consequence")
                if cons is not None:
                    out.append((cons.start_byte, cons.end_byte))
            continue
        truth = _branch_node_truth(n, envs, language)
        if truth is None:
            continue
        cons = n.child_by_field_name("consequence")
        if language == "python":
            alts = [c for c in n.children if c.type in ("else_clause", "elif_clause")]
        else:
            alt = n.child_by_field_name("alternative")
            alts = [alt] if alt is not None else []
        if truth is False and cons is not None:
            out.append((cons.start_byte, cons.end_byte))  # elif clauses are examined on their own
        elif truth is True:
            out += [(a.start_byte, a.end_byte) for a in alts]
    return out


# ---------------------------------------------------------------------------- reachability

def reachable(roots: Iterable[str], edges: Mapping[str, set[str]]) -> set[str]:
    """Names reachable from ``roots`` through ``edges`` (name -> names it uses)."""
    seen: set[str] = set()
    todo = [r for r in roots]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(n for n in edges.get(name, ()) if n not in seen)
    return seen
