"""What a Triton module may contain before its kernels are compiled: two static gates over ``ast``.

Compiling a ``@triton.jit`` kernel needs its module imported, and importing runs code. Two
questions are answered here, in the analyzer process, from the text alone:

* :func:`import_refusal`: would importing the module do anything beyond defining kernels? Allowed
  at the top level (and in class bodies): imports, function and class definitions with pure
  decorators, assignments of pure expressions, ``if``/``for``/``try`` made of those, and an
  ``if __name__ == "__main__":`` block (it never runs on import). *Pure* means literals, names,
  attribute reads, arithmetic, comprehensions, lambdas and calls of an allow-list of side-effect
  free constructors (``triton.Config``, ``triton.autotune``, ``functools.partial`` ...) or of the
  module's own functions whose bodies are pure too. A call of anything else (``open``,
  ``socket.socket``, ``torch.randn``, ``os.system``), an attribute or item assignment on an
  imported module (``torch.backends...allow_tf32 = True``, ``os.environ[...]``) or a ``with`` block
  refuses the whole submission, with the line.
* :func:`kernel_refusal`: can compiling a jit function run Python it should not? Triton's code
  generator calls whatever callable a kernel body names, at compile time. A kernel may name only
  its locals, the Triton language (``tl.*``, ``triton.language.*``, ``triton.cdiv``, ...), ``math``,
  the builtins Triton allows, other jit functions and constants; no dunder attribute, no
  ``getattr`` of a computed or dunder name, no path into Triton's runtime, compiler or tools.

Neither gate decides a verdict; they decide whether the compile subprocess is started at all. The
subprocess is sandboxed as well (:mod:`.triton_worker`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

# Callables that are pure (no I/O, no global state) when called at import time.
PURE_CALLS = frozenset({
    "triton.Config", "triton.autotune", "triton.heuristics", "triton.jit", "triton.cdiv", "triton.next_power_of_2",
    "triton.language.constexpr", "triton.language.dtype", "triton.language.constexpr_function", "triton.constexpr_function",
    "triton.runtime.Config", "triton.runtime.autotune", "triton.runtime.heuristics", "triton.runtime.jit",
    "triton.tools.tensor_descriptor.TensorDescriptor",
    "functools.partial", "functools.lru_cache", "functools.cache", "functools.wraps", "functools.reduce",
    "dataclasses.dataclass", "dataclasses.field", "typing.TypeVar", "typing.NamedTuple", "typing.cast",
    "collections.namedtuple", "collections.OrderedDict", "collections.defaultdict", "enum.Enum", "enum.auto",
    "itertools.product", "itertools.chain", "torch.device", "torch.dtype", "math.log2", "math.log", "math.sqrt",
    "math.ceil", "math.floor", "math.exp", "math.prod", "math.gcd", "math.isqrt", "os.path.join", "os.path.dirname",
    "os.path.abspath", "os.path.basename", "os.environ.get", "os.getenv",
})
PURE_BUILTINS = frozenset({
    "int", "float", "bool", "str", "tuple", "list", "dict", "set", "frozenset", "range", "len", "min", "max", "abs",
    "sum", "sorted", "reversed", "zip", "enumerate", "map", "filter", "any", "all", "round", "pow", "divmod",
    "isinstance", "getattr", "hasattr", "property", "staticmethod", "classmethod", "object", "super", "type",
})
# Container methods that only touch the container they are called on.
PURE_METHODS = frozenset({"append", "extend", "insert", "update", "copy", "items", "keys", "values", "get", "setdefault",
                          "pop", "index", "count", "format", "join", "split", "strip", "lower", "upper", "replace"})
# The Python builtins Triton's code generator lets a kernel call (plus constants).
KERNEL_BUILTINS = frozenset({"len", "list", "range", "float", "int", "isinstance", "getattr", "hasattr", "print", "min",
                             "max", "True", "False", "None"})
# Module roots a kernel body may reach, and the attribute names no path inside them may cross.
KERNEL_MODULES = ("triton.language", "triton.experimental.gluon.language", "math")
KERNEL_TRITON_NAMES = frozenset({"cdiv", "next_power_of_2", "language", "jit", "constexpr"})
FORBIDDEN_SEGMENTS = frozenset({"os", "sys", "subprocess", "builtins", "importlib", "shutil", "socket", "io", "pathlib",
                                "ctypes", "runtime", "compiler", "knobs", "backends", "tools", "testing", "_C", "torch",
                                "inspect", "pickle", "tempfile", "signal", "threading", "multiprocessing", "open"})


@dataclass(frozen=True)
class Refusal:
    """Why a module or kernel is not compiled: where, and what would have run."""

    file: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.what}"


def aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> canonical dotted name for every import anywhere in the module
    (``import triton.language as tl`` gives ``tl -> triton.language``)."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def dotted(node: ast.AST, names: dict[str, str]) -> str | None:
    """``tl.dot`` -> ``triton.language.dot`` (None for anything but a chain of names)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(names.get(node.id, node.id))
    return ".".join(reversed(parts))


def _segment(line: ast.AST) -> str:
    try:
        return ast.unparse(line)[:80]
    except Exception:  # noqa: BLE001 - only for the message
        return type(line).__name__


# --- the import gate -------------------------------------------------------------------------------


class _ImportGate:
    """Walks a module's top level; ``refusal`` is the first statement that would do more than define."""

    def __init__(self, tree: ast.Module, file: str):
        self.file = file
        self.names = aliases(tree)
        self.functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.module_level = {t.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                             for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
        self.checked: set[str] = set()
        self.refusal: Refusal | None = None

    def refuse(self, node: ast.AST, what: str) -> bool:
        if self.refusal is None:
            self.refusal = Refusal(self.file, getattr(node, "lineno", 0), what)
        return False

    # statements ---------------------------------------------------------------------------------
    def statements(self, body: list[ast.stmt], in_function: bool = False) -> bool:
        return all(self.statement(s, in_function) for s in body)

    def statement(self, s: ast.stmt, in_function: bool) -> bool:
        if isinstance(s, (ast.Import, ast.ImportFrom, ast.Pass, ast.Global, ast.Nonlocal, ast.Break, ast.Continue)):
            return True
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return self.signature(s) and all(self.expr(d) for d in s.decorator_list)
        if isinstance(s, ast.ClassDef):
            return all(self.expr(e) for e in [*s.bases, *s.decorator_list, *(k.value for k in s.keywords)]) and self.statements(s.body)
        if isinstance(s, ast.Assign):
            return all(self.target(t, in_function) for t in s.targets) and self.expr(s.value)
        if isinstance(s, ast.AnnAssign):
            return self.target(s.target, in_function) and (s.value is None or self.expr(s.value))
        if isinstance(s, ast.AugAssign):
            return self.target(s.target, in_function) and self.expr(s.value)
        if isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Constant):
                return True  # a docstring
            return self.expr(s.value)
        if isinstance(s, ast.If):
            if not in_function and _is_main_guard(s.test):
                return self.statements(s.orelse)
            return self.expr(s.test) and self.statements(s.body, in_function) and self.statements(s.orelse, in_function)
        if isinstance(s, ast.For):
            return self.expr(s.iter) and self.target(s.target, True) and self.statements(s.body, in_function) and self.statements(s.orelse, in_function)
        if isinstance(s, ast.Try):
            handlers = [h for h in s.handlers if h.type is None or self.expr(h.type)]
            return (len(handlers) == len(s.handlers) and self.statements(s.body, in_function)
                    and all(self.statements(h.body, in_function) for h in s.handlers)
                    and self.statements(s.orelse, in_function) and self.statements(s.finalbody, in_function))
        if in_function and isinstance(s, ast.Return):
            return s.value is None or self.expr(s.value)
        if in_function and isinstance(s, (ast.Assert, ast.Raise)):
            return True
        if in_function and isinstance(s, ast.While):
            return self.expr(s.test) and self.statements(s.body, True)
        return self.refuse(s, f"`{_segment(s)}` runs at import ({type(s).__name__.lower()} statement)")

    def signature(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Defaults are evaluated when the ``def`` runs; annotations too, unless postponed."""
        defaults = [*fn.args.defaults, *(d for d in fn.args.kw_defaults if d is not None)]
        return all(self.expr(d) for d in defaults)

    def target(self, t: ast.expr, in_function: bool) -> bool:
        if isinstance(t, ast.Name):
            return True
        if isinstance(t, (ast.Tuple, ast.List)):
            return all(self.target(e, in_function) for e in t.elts)
        if isinstance(t, ast.Starred):
            return self.target(t.value, in_function)
        if isinstance(t, (ast.Attribute, ast.Subscript)):
            root = t
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name) and root.id not in self.names and (in_function or root.id in self.module_level):
                return self.expr(t.value) and (not isinstance(t, ast.Subscript) or self.expr(t.slice))
            return self.refuse(t, f"`{_segment(t)} = ...` changes state outside the module")
        return self.refuse(t, f"cannot check assignment target `{_segment(t)}`")

    # expressions --------------------------------------------------------------------------------
    def expr(self, e: ast.expr) -> bool:
        for node in ast.walk(e):
            if isinstance(node, ast.Call) and not self.call(node):
                return False
            if isinstance(node, ast.Attribute) and node.attr.startswith("__") and node.attr.endswith("__"):
                return self.refuse(node, f"`{_segment(node)}` reaches a dunder attribute")
            if isinstance(node, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
                return self.refuse(node, f"`{_segment(node)}` is not a definition")
        return True

    def call(self, c: ast.Call) -> bool:
        fn = c.func
        name = dotted(fn, self.names)
        if name in PURE_CALLS or (isinstance(fn, ast.Name) and fn.id in PURE_BUILTINS and fn.id not in self.names):
            return True
        if isinstance(fn, ast.Name) and fn.id in self.functions:
            return self.local_function(fn.id, c)
        if isinstance(fn, ast.Attribute) and fn.attr in PURE_METHODS and not (name and name.split(".")[0] in set(self.names.values())):
            return True
        if isinstance(fn, ast.Call) and dotted(fn.func, self.names) in PURE_CALLS:
            return True  # triton.autotune(...)(kernel)
        if isinstance(fn, ast.Lambda):
            return self.expr(fn.body)
        return self.refuse(c, f"`{_segment(c)}` calls {name or 'an expression'} at import")

    def local_function(self, name: str, c: ast.Call) -> bool:
        """A call of the module's own function is pure when its body is (checked once)."""
        if name in self.checked:
            return True
        self.checked.add(name)
        fn = self.functions[name]
        if any(dotted(d, self.names) in ("triton.jit", "triton.runtime.jit") for d in fn.decorator_list):
            return True  # calling a jit function at import only raises
        return self.statements(fn.body, in_function=True)


def _is_main_guard(test: ast.expr) -> bool:
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators))


def import_refusal(tree: ast.Module, file: str) -> Refusal | None:
    """None when importing the module only defines things; else the first statement that would not."""
    gate = _ImportGate(tree, file)
    gate.statements(tree.body)
    return gate.refusal


# --- the kernel gate -------------------------------------------------------------------------------


def is_jit(fn: ast.AST, names: dict[str, str]) -> bool:
    """Decorated with ``triton.jit`` (or ``triton.jit(...)``), however it was imported."""
    if not isinstance(fn, ast.FunctionDef):
        return False
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if dotted(target, names) in ("triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit"):
            return True
    return False


def _kernel_path_ok(path: str) -> bool:
    segments = path.split(".")
    if any(s in FORBIDDEN_SEGMENTS or (s.startswith("__") and s.endswith("__")) for s in segments[1:]):
        return False
    if path.startswith(KERNEL_MODULES):
        return True
    return segments[0] == "triton" and len(segments) >= 2 and segments[1] in KERNEL_TRITON_NAMES


def kernel_refusal(fn: ast.FunctionDef, names: dict[str, str], module_names: set[str], file: str) -> Refusal | None:
    """None when compiling ``fn`` can only run the Triton language; else what it could reach.

    ``module_names`` are the module-level names the sanitized module keeps (jit functions and
    constants): a kernel may name them, its own locals and parameters, and the Triton language."""
    local = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
    local |= {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    local |= {n.arg for n in ast.walk(fn) if isinstance(n, ast.arg)}
    body = [*fn.body, *fn.args.defaults, *(d for d in fn.args.kw_defaults if d is not None),
            *(a.annotation for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs] if a.annotation is not None)]
    for node in (n for part in body for n in ast.walk(part)):
        if isinstance(node, ast.Attribute):
            if node.attr.startswith("__") and node.attr.endswith("__"):
                return Refusal(file, node.lineno, f"kernel {fn.name} reaches the dunder attribute `{_segment(node)}`")
            path = dotted(node, names)
            root = path.split(".")[0] if path else None
            if path and root not in local and root not in module_names and not _kernel_path_ok(path):
                return Refusal(file, node.lineno, f"kernel {fn.name} reaches `{_segment(node)}` outside the Triton language")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            canon = names.get(node.id)
            if node.id in local or node.id in module_names or node.id in KERNEL_BUILTINS:
                continue
            if canon and (_kernel_path_ok(canon) or canon in ("triton", "math")):
                continue
            return Refusal(file, node.lineno, f"kernel {fn.name} names `{node.id}`, which is neither Triton nor defined in the kernel's module")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
            key = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and not key.value.startswith("__")):
                return Refusal(file, node.lineno, f"kernel {fn.name} calls {node.func.id} with a computed or dunder name")
        elif isinstance(node, (ast.Lambda, ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom)):
            return Refusal(file, node.lineno, f"kernel {fn.name} contains `{_segment(node)}`")
    return None
