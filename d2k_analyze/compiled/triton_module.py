"""The kernel-only copy of a Triton module that the compile subprocess imports.

Even a module that passed the import gate is not imported as written: the subprocess imports a
copy that keeps, at their original line numbers, only the Triton imports, the ``@triton.jit``
functions (their other decorators blanked: configs and heuristics are passed to the compiler
explicitly) and module constants whose values are literals. Everything else becomes blank lines.
So the Python that runs in the subprocess is Triton's own, the ``def`` statements of the kernels
(whose bodies CPython never executes: Triton's code generator reads them) and literal constants.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .triton_gate import Refusal, aliases, dotted, is_jit, kernel_refusal

_KEPT_IMPORT_ROOTS = ("triton", "math")


@dataclass(frozen=True)
class KernelModule:
    """A sanitized module: its text (same line count as the original), the jit functions it
    defines (name -> ``def`` source as Triton will read it) and the sibling modules it imports."""

    name: str
    text: str
    jit_sources: dict[str, str] = field(default_factory=dict)
    siblings: tuple[str, ...] = ()


def _literal(e: ast.expr, names: dict[str, str], constants: set[str]) -> bool:
    """A constant expression: literals, other kept constants, arithmetic, ``tl.constexpr(...)``
    and Triton dtypes (``tl.float16``)."""
    for node in ast.walk(e):
        if isinstance(node, (ast.Constant, ast.Tuple, ast.List, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop,
                             ast.expr_context, ast.keyword, ast.Compare, ast.cmpop, ast.BoolOp, ast.boolop)):
            continue
        if isinstance(node, ast.Name):
            if node.id in constants or names.get(node.id, "").startswith(("triton.language", "math")):
                continue
            return False
        if isinstance(node, ast.Attribute):
            path = dotted(node, names)
            if path and path.startswith(("triton.language.", "math.")) and not node.attr.startswith("_"):
                continue
            return False
        if isinstance(node, ast.Call) and dotted(node.func, names) in ("triton.language.constexpr", "triton.language.dtype"):
            continue
        return False
    return True


def _kept_import(s: ast.stmt, siblings: set[str]) -> tuple[bool, list[str]]:
    """(keep it?, sibling modules it imports). Triton and math imports are kept, and imports of the
    submission's own modules (which are sanitized the same way)."""
    if isinstance(s, ast.Import):
        roots = [a.name.split(".")[0] for a in s.names]
        local = [r for r in roots if r in siblings]
        return all(r in _KEPT_IMPORT_ROOTS or r in siblings for r in roots), local
    if isinstance(s, ast.ImportFrom):
        mod = (s.module or "").split(".")[0]
        if s.level == 0 and mod in _KEPT_IMPORT_ROOTS:
            return not any(a.name == "*" for a in s.names), []
        if (s.level == 1 and (s.module or "") in siblings) or (s.level == 0 and mod in siblings):
            return True, [s.module.split(".")[0]] if s.module else []
        if s.level == 1 and not s.module:
            found = [a.name for a in s.names if a.name in siblings]
            return len(found) == len(s.names), found
    return False, []


def def_source(lines: list[str], fn: ast.FunctionDef) -> str:
    """The function's text from its ``def`` line, as Triton's ``JITFunction.src`` holds it."""
    return "".join(lines[fn.lineno - 1: fn.end_lineno])


def sanitize(name: str, text: str, siblings: set[str]) -> tuple[KernelModule | None, Refusal | None]:
    """The kernel-only copy of one module, or why one of its kernels may not be compiled."""
    tree = ast.parse(text)
    names = aliases(tree)
    lines = text.splitlines(keepends=True)
    keep = [False] * len(lines)
    blank: set[int] = set()
    constants: set[str] = set()
    jit: dict[str, ast.FunctionDef] = {}
    imported: list[str] = []
    from_siblings: set[str] = set()
    for s in tree.body:
        span = range(s.lineno - 1, s.end_lineno)
        if isinstance(s, (ast.Import, ast.ImportFrom)):
            ok, local = _kept_import(s, siblings)
            if ok:
                imported += local
                if local:
                    from_siblings.update(a.asname or a.name.split(".")[0] for a in s.names)
                for i in span:
                    keep[i] = True
        elif isinstance(s, ast.FunctionDef) and is_jit(s, names):
            jit[s.name] = s
            first = min([d.lineno for d in s.decorator_list] + [s.lineno])
            for i in range(first - 1, s.end_lineno):
                keep[i] = True
            for d in s.decorator_list:
                target = d.func if isinstance(d, ast.Call) else d
                if dotted(target, names) not in ("triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit") or (
                        isinstance(d, ast.Call) and not all(_literal(k.value, names, set()) for k in d.keywords)):
                    blank.update(range(d.lineno - 1, d.end_lineno))
            if not any(i not in blank for d in s.decorator_list for i in range(d.lineno - 1, d.end_lineno)):
                return None, Refusal(name, s.lineno, f"jit function {s.name}: its decorator cannot be kept alone")
        elif isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None:
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            if all(isinstance(t, ast.Name) for t in targets) and _literal(s.value, names, constants):
                constants.update(t.id for t in targets)
                for i in span:
                    keep[i] = True
    module_names = constants | set(jit) | from_siblings
    for fn in jit.values():
        refusal = kernel_refusal(fn, names, module_names, name)
        if refusal is not None:
            return None, refusal
    out = [line if keep[i] and i not in blank else ("\n" if line.endswith("\n") else "") for i, line in enumerate(lines)]
    jit_sources = {n: def_source(lines, fn) for n, fn in jit.items()}
    return KernelModule(name, "".join(out), jit_sources, tuple(dict.fromkeys(imported))), None
