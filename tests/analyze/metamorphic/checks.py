"""Did the transformation really transform? One check per transformation, each returning problems.

Without these, a transformer that silently did nothing would make the metamorphic test pass.
They look at the output with other tools than the transformers used where possible: Python's own
``ast``/``tokenize`` instead of libcst, and a regex C++ lexer instead of tree-sitter.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from functools import lru_cache
from pathlib import Path

import libcst as cst

from . import cpp, lexer, pysrc, rename
from .workspace import Submission

_KEYWORDS = set("""alignas alignof asm auto bool break case catch char char16_t char32_t class const constexpr
const_cast continue decltype default delete do double dynamic_cast else enum explicit export extern false
float for friend goto if inline int long mutable namespace new noexcept nullptr operator private protected
public register reinterpret_cast return short signed sizeof static static_assert static_cast struct switch
template this throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t
while define include pragma unroll once defined""".split())


@lru_cache(maxsize=1)
def library_words() -> frozenset[str]:
    """Every word in the CUDA toolkit's and torch's headers: the names a submission may use
    without declaring them."""
    roots = []
    try:
        from torch.utils.cpp_extension import include_paths
        roots += [Path(p) for p in include_paths()[:1]]
    except ImportError:
        pass
    roots += [Path("/usr/local/cuda/include")]
    found: set[bytes] = set()
    word = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
    for root in roots:
        for p in root.rglob("*"):
            if p.is_file():
                try:
                    found.update(word.findall(p.read_bytes()))
                except OSError:
                    pass
    return frozenset(w.decode() for w in found)


def _cpp_units(sub: Submission) -> dict[str, str]:
    """C++ translation units by label: files, and strings embedded in Python (by order)."""
    return dict(rename._cpp_units(sub))


# ---------------------------------------------------------------------------------------------
# (a)


def _py_declared(text: str) -> set[str]:
    """Names a Python module declares, by the standard library's ``ast``."""
    out = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.alias) and node.asname:
            out.add(node.asname)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
    return out


def _py_used(text: str, user_functions: set[str]) -> set[str]:
    """Identifiers a module uses as names: variables, definitions, parameters, aliases, keyword
    arguments of calls to its own functions, and string keys/subscripts (Config keys, META[...])."""
    tree = ast.parse(text)
    out = _py_declared(text) | {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func.value if isinstance(node.func, ast.Subscript) else node.func
            if isinstance(func, ast.Name) and func.id in user_functions:
                out |= {k.arg for k in node.keywords if k.arg}
        if isinstance(node, ast.Dict):
            out |= {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            out.add(node.slice.value)
    return out


def check_rename(original: Submission, new: Submission) -> list[str]:
    plan = rename.plan(original)
    problems = [] if plan.mapping else ["nothing was renamed"]
    fresh = set(plan.mapping.values())
    # Python: nothing the original declared (by ast) survives, except what is kept on purpose
    for path in original.python_files():
        declared = _py_declared(original.files[path]) - plan.kept
        declared = {d for d in declared if not (d.startswith("__") and d.endswith("__"))}
        user_fns = {n.name for n in ast.walk(ast.parse(new.files[path])) if isinstance(n, ast.FunctionDef)}
        left = declared & _py_used(new.files[path], user_fns)
        if left:
            problems.append(f"{path}: declared names survive: {sorted(left)}")
    # C++: per translation unit, no declared name survives outside member access of library types
    before, after = _cpp_units(original), _cpp_units(new)
    for label, text in after.items():
        decl = rename._tu_declarations(original, before.get(label, ""))
        left = set()
        for word, prev in lexer.words(text):
            if word in plan.kept or word in fresh:
                continue
            if prev in (".", "->") and word not in decl.fields:
                continue  # threadIdx.x, v.x: members of library types
            if word in decl.all():
                left.add(word)
        if left:
            problems.append(f"{label}: declared names survive: {sorted(left)}")
        # independently of the declaration finder: a surviving word must be a library name
        strangers = {w for w, prev in lexer.words(text) if w not in fresh and w not in plan.kept
                     and w not in _KEYWORDS and not w.startswith("__") and prev not in (".", "->")}
        strangers -= library_words()
        if strangers:
            problems.append(f"{label}: words that are neither renamed nor library names: {sorted(strangers)}")
    return problems


# ---------------------------------------------------------------------------------------------
# (b)


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                node.body = node.body[1:] or [ast.Pass()]
    return tree


class _CppStrings(ast.NodeTransformer):
    """Replace C++ source strings by their token sequence, so layout inside them is ignored."""

    def visit_Constant(self, node):
        if isinstance(node.value, str) and ("#include" in node.value or "__global__" in node.value):
            return ast.Constant(" ".join(lexer.code_tokens(node.value)).replace(":: ", ": : "))
        return node


def check_reformat(original: Submission, new: Submission) -> list[str]:
    problems = []
    for label, text in _cpp_units(new).items():
        comments = [t for t in lexer.tokens(text) if t.kind == "comment"]
        if comments:
            problems.append(f"{label}: {len(comments)} comments remain")
    for label, text in _cpp_units(original).items():
        after = _cpp_units(new)[label]
        if lexer.code_tokens(text) != lexer.code_tokens(after):
            problems.append(f"{label}: the token sequence changed (only layout may)")
        if lexer.line_starts(text) == lexer.line_starts(after):
            problems.append(f"{label}: the line breaks did not change")
    for path in original.python_files():
        text = new.files[path]
        comments = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]
        if comments:
            problems.append(f"{path}: {len(comments)} comments remain")
        tree = ast.parse(text)
        if any(ast.get_docstring(n, clean=False) for n in ast.walk(tree)
               if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef))):
            problems.append(f"{path}: docstrings remain")
        a = ast.dump(_CppStrings().visit(_without_docstrings(ast.parse(original.files[path]))))
        b = ast.dump(_CppStrings().visit(tree))
        if a != b:
            problems.append(f"{path}: the program changed (only layout may)")
        if original.files[path].splitlines() == text.splitlines():
            problems.append(f"{path}: the layout did not change")
    return problems


# ---------------------------------------------------------------------------------------------
# (c)


def check_move(original: Submission, new: Submission) -> list[str]:
    meta = new.meta
    name, source, target = meta.get("helper"), meta.get("source"), meta.get("target")
    if not name or target not in new.files or target in original.files:
        return [f"no new file with the helper ({meta})"]
    problems = []
    if meta["language"] == "cuda":
        defined = lambda text: {cpp.function_name(f) for f in cpp.functions(cpp.parse(text).root_node)}  # noqa: E731
        if name not in defined(new.files[target]):
            problems.append(f"{target} does not define {name}")
        if name in defined(new.files[source]):
            problems.append(f"{source} still defines {name}")
        if f'#include "{target}"' not in new.files[source]:
            problems.append(f"{source} does not include {target}")
    else:
        defs = lambda text: {n.name for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef)}  # noqa: E731
        if name not in defs(new.files[target]):
            problems.append(f"{target} does not define {name}")
        if name in defs(new.files[source]):
            problems.append(f"{source} still defines {name}")
        imported = {a.name for n in ast.walk(ast.parse(new.files[source])) if isinstance(n, ast.ImportFrom)
                    and n.module == Path(target).stem for a in n.names}
        if name not in imported:
            problems.append(f"{source} does not import {name} from {Path(target).stem}")
    return problems


# ---------------------------------------------------------------------------------------------
# (d)


def _kernel_def(text: str, kernel: str) -> ast.FunctionDef | None:
    return next((n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == kernel), None)


def _launch_keywords(text: str, kernel: str) -> list[set[str]]:
    """Keyword names of every ``kernel[grid](...)`` launch (through autotune aliases)."""
    facts = pysrc.module_facts(cst.parse_module(text))
    targets = {kernel} | {a for a, k in facts.aliases.items() if k == kernel}
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) and \
                isinstance(node.func.value, ast.Name) and node.func.value.id in targets:
            out.append({k.arg for k in node.keywords if k.arg})
    return out


def check_define_constexpr(original: Submission, new: Submission) -> list[str]:
    problems = []
    for path, (kind, names) in new.meta.get("cpp_constants", {}).items():
        text = new.files[path]
        for name in names:
            is_macro = re.search(rf"^\s*#\s*define\s+{name}\b", text, re.M) is not None
            is_const = re.search(rf"\bconstexpr\b[^;]*\b{name}\s*=", text) is not None
            if kind == "constexpr->define" and (not is_macro or is_const):
                problems.append(f"{path}: {name} is not (only) a #define")
            if kind == "define->constexpr" and (is_macro or not is_const):
                problems.append(f"{path}: {name} is not (only) a constexpr")
    for kernel, param, glob in new.meta.get("triton_params", []):
        text = new.files["submission.py"]
        fn = _kernel_def(text, kernel)
        if fn is None or param in {a.arg for a in fn.args.args}:
            problems.append(f"{kernel} still takes {param}")
        if any(param in kws for kws in _launch_keywords(text, kernel)):
            problems.append(f"a launch of {kernel} still passes {param}")
        if not re.search(rf"\b{glob}\b[^\n]*constexpr\(", text) and not re.search(rf"^{glob}\s*[:=].*constexpr", text, re.M):
            problems.append(f"module constant {glob} is not a tl.constexpr")
    if not new.meta.get("cpp_constants") and not new.meta.get("triton_params"):
        problems.append("nothing was converted")
    return problems


def check_template_param(original: Submission, new: Submission) -> list[str]:
    problems = []
    for path, kernel, constant, param, value in new.meta.get("cpp_template", []):
        root = cpp.parse(new.files[path]).root_node
        fn = next((f for f in cpp.functions(root) if cpp.function_name(f) == kernel), None)
        tmpl = cpp.template_of(fn) if fn is not None else None
        if tmpl is None or f"int {param}" not in cpp.node_text(tmpl.child_by_field_name("parameters")):
            problems.append(f"{kernel} has no template parameter {param}")
            continue
        if constant in {cpp.node_text(n) for n in cpp.walk(fn) if n.type in cpp.NAME_LEAVES}:
            problems.append(f"{kernel} still names {constant}")
        refs = [n for n in cpp.walk(root) if n.type == "template_function" and cpp.node_text(n.child_by_field_name("name")) == kernel]
        if not refs or not all(re.search(rf"\b{value}\s*>$", cpp.node_text(r)) for r in refs):
            problems.append(f"a use of {kernel} does not pass {value}")
    for kernel, glob in new.meta.get("triton_globals", []):
        text = new.files["submission.py"]
        fn = _kernel_def(text, kernel)
        if fn is None or glob not in {a.arg for a in fn.args.args}:
            problems.append(f"{kernel} does not take {glob}")
        if not all(glob in kws for kws in _launch_keywords(text, kernel)):
            problems.append(f"a launch of {kernel} does not pass {glob}")
    if not new.meta.get("cpp_template") and not new.meta.get("triton_globals"):
        problems.append("nothing was converted")
    return problems


CHECKS = {
    "rename": check_rename,
    "reformat": check_reformat,
    "move_helper": check_move,
    "define_constexpr": check_define_constexpr,
    "template_param": check_template_param,
}
