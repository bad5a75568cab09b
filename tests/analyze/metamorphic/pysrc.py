"""Python/Triton facts for the transformers, from libcst: jit functions, launches, load_inline.

Kept separate from the rewriting code because several transformations ask the same questions:
which ``@triton.jit`` functions are kernels (their names key the corpus labels) and which are
helpers called from other jit code, which user function a call or a ``kernel[grid](...)`` launch
reaches (so that keyword arguments can follow a renamed parameter), and which string literals are
C++ source handed to ``torch.utils.cpp_extension.load_inline``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

# Keyword arguments of Triton's autotuner / load_inline whose list elements name parameters or
# C++ functions (and so follow a rename).
NAME_LIST_KWARGS = {"key", "functions", "reset_to_zero", "restore_value", "do_not_specialize",
                    "do_not_specialize_on_alignment"}
# Callback parameters that a library passes by keyword: their names are the library's, not ours
# (triton's autotuner calls ``do_bench(kernel_call, quantiles=...)``, ``post_hook(args, exception=...)``,
# ``pre_hook(args, reset_only=...)``).
CALLBACK_KEYWORDS = {"do_bench": {"quantiles"}, "post_hook": {"exception"}, "pre_hook": {"reset_only"}}
# Names the harness or Python itself looks up (never renamed).
ENTRY_NAMES = {"run", "ModelNew", "forward", "__init__", "self_test"}


def dotted(expr: cst.BaseExpression) -> str:
    """``triton.language.constexpr`` for an Attribute chain / Name, "" otherwise."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        head = dotted(expr.value)
        return f"{head}.{expr.attr.value}" if head else ""
    return ""


def _decorator_names(fn: cst.FunctionDef) -> list[str]:
    out = []
    for d in fn.decorators:
        e = d.decorator
        out.append(dotted(e.func) if isinstance(e, cst.Call) else dotted(e))
    return out


def is_jit(fn: cst.FunctionDef) -> bool:
    return any(n.split(".")[-1] == "jit" for n in _decorator_names(fn))


@dataclass
class ModuleFacts:
    """What the transformers need to know about one Python module."""

    functions: dict[str, cst.FunctionDef] = field(default_factory=dict)  # every def, by name
    jit: dict[str, cst.FunctionDef] = field(default_factory=dict)
    jit_helpers: set[str] = field(default_factory=set)  # jit functions named inside other jit functions
    aliases: dict[str, str] = field(default_factory=dict)  # X = triton.autotune(...)(K) -> X: K
    callback_params: set[str] = field(default_factory=set)  # see CALLBACK_KEYWORDS
    launches: list[cst.Call] = field(default_factory=list)  # K[grid](...) calls of jit kernels
    load_inline_calls: list[cst.Call] = field(default_factory=list)
    module_assigns: dict[str, cst.BaseExpression] = field(default_factory=dict)  # NAME = value (module level)

    @property
    def kernels(self) -> set[str]:
        return set(self.jit) - self.jit_helpers

    def resolve(self, name: str) -> cst.FunctionDef | None:
        """The user function a callee name reaches (through autotune/jit wrapper aliases)."""
        seen = set()
        while name in self.aliases and name not in seen:
            seen.add(name)
            name = self.aliases[name]
        return self.functions.get(name)

    def callee(self, call: cst.Call) -> cst.FunctionDef | None:
        """The user function reached by ``f(...)`` or by the launch ``k[grid](...)``."""
        func = call.func
        if isinstance(func, cst.Subscript):
            func = func.value
        return self.resolve(func.value) if isinstance(func, cst.Name) else None


def param_names(fn: cst.FunctionDef) -> list[str]:
    """Every parameter name of ``fn`` (positional, keyword-only, *args, **kwargs)."""
    p = fn.params
    every = list(p.posonly_params) + list(p.params) + list(p.kwonly_params)
    every += [x for x in (p.star_arg, p.star_kwarg) if isinstance(x, cst.Param)]
    return [x.name.value for x in every]


class _Collector(cst.CSTVisitor):
    """One pass over a module for :class:`ModuleFacts`."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.f = facts
        self.depth = 0
        self.callbacks: dict[str, set[str]] = {}  # function name -> library keyword parameters
        self.subscript_calls: list[cst.Call] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.f.functions.setdefault(node.name.value, node)
        if is_jit(node):
            self.f.jit[node.name.value] = node
        self.depth += 1

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.depth -= 1

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.depth == 0 and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.f.module_assigns[node.targets[0].target.value] = node.value
        target = node.targets[0].target if len(node.targets) == 1 else None
        # X = triton.autotune(...)(K)  /  X = triton.jit(K)  /  X = K: launching X launches K.
        if isinstance(target, cst.Name):
            wrapped = _wrapped_function(node.value)
            if wrapped is not None:
                self.f.aliases[target.value] = wrapped

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if self.depth == 0 and isinstance(node.target, cst.Name) and node.value is not None:
            self.f.module_assigns[node.target.value] = node.value

    def visit_Call(self, node: cst.Call) -> None:
        name = dotted(node.func)
        if name.split(".")[-1] == "load_inline":
            self.f.load_inline_calls.append(node)
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in CALLBACK_KEYWORDS:
                for n in _names_in(arg.value):
                    self.callbacks.setdefault(n, set()).update(CALLBACK_KEYWORDS[arg.keyword.value])
        if isinstance(node.func, cst.Subscript):
            self.subscript_calls.append(node)


def _wrapped_function(value: cst.BaseExpression) -> str | None:
    """K for ``K``, ``wrapper(K)`` and ``wrapper(...)(K)`` (decorators applied by hand)."""
    if isinstance(value, cst.Name):
        return value.value
    if isinstance(value, cst.Call) and value.args and isinstance(value.args[0].value, cst.Name):
        head = value.func.func if isinstance(value.func, cst.Call) else value.func
        if dotted(head).split(".")[-1] in ("jit", "autotune", "heuristics"):
            return value.args[0].value.value
    return None


class _Names(cst.CSTVisitor):
    """Collects Name nodes."""

    def __init__(self) -> None:
        self.nodes: list[cst.Name] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.nodes.append(node)


def name_nodes(node: cst.CSTNode) -> list[cst.Name]:
    """Every Name node under ``node`` (a plain visitor: much faster than matchers.findall)."""
    v = _Names()
    node.visit(v)
    return v.nodes


def _names_in(expr: cst.CSTNode) -> set[str]:
    return {n.value for n in name_nodes(expr)}


def module_facts(module: cst.Module) -> ModuleFacts:
    """Collect :class:`ModuleFacts` for ``module`` (node identities refer to this very tree)."""
    facts = ModuleFacts()
    c = _Collector(facts)
    module.visit(c)
    # A jit function named inside another jit function is a helper (a call, or a tl.reduce combine fn).
    for name, fn in facts.jit.items():
        inner = _names_in(fn.body)
        facts.jit_helpers |= {h for h in inner if h in facts.jit and h != name}
    for fname, params in c.callbacks.items():
        fn = facts.functions.get(fname)
        if fn is not None:
            facts.callback_params |= set(param_names(fn)) & params
    facts.launches = [call for call in c.subscript_calls
                      if (fn := facts.callee(call)) is not None and fn.name.value in facts.jit]
    return facts


def load_inline_kwarg(call: cst.Call, name: str) -> cst.BaseExpression | None:
    """The expression passed to ``load_inline`` for ``name`` (keyword or position), if any."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    positions = {"name": 0, "cpp_sources": 1, "cuda_sources": 2, "functions": 3}
    positional = [a for a in call.args if a.keyword is None and a.star == ""]
    idx = positions.get(name)
    return positional[idx].value if idx is not None and idx < len(positional) else None


class UnsupportedSource(Exception):
    """C++ source built in a way the transformers do not rewrite (say so rather than skip it)."""


def embedded_cpp_strings(module: cst.Module, facts: ModuleFacts | None = None) -> list[cst.SimpleString]:
    """String literals whose text is C++ handed to load_inline (``cpp_sources``/``cuda_sources``),
    followed through module-level names, ``+``, lists and ``.replace``/``.format`` receivers."""
    facts = facts or module_facts(module)
    out: list[cst.SimpleString] = []

    def follow(expr: cst.BaseExpression, seen: set[str]) -> None:
        if isinstance(expr, cst.SimpleString):
            if expr.prefix.lower().replace("r", "") not in ("",):
                raise UnsupportedSource(f"C++ in a {expr.prefix!r}-prefixed string literal")
            out.append(expr)
        elif isinstance(expr, cst.Name):
            if expr.value in facts.module_assigns and expr.value not in seen:
                follow(facts.module_assigns[expr.value], seen | {expr.value})
        elif isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("replace", "format", "strip"):
                follow(expr.func.value, seen)  # the receiver is the source; the arguments are names
            # other calls (Path(...).read_text()) read a file: that file is transformed on its own
        elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            follow(expr.left, seen)
            follow(expr.right, seen)
        elif isinstance(expr, (cst.List, cst.Tuple)):
            for el in expr.elements:
                follow(el.value, seen)
        elif isinstance(expr, (cst.ConcatenatedString, cst.FormattedString)):
            raise UnsupportedSource("C++ in an implicitly concatenated or f-string literal")

    for call in facts.load_inline_calls:
        for kw in ("cpp_sources", "cuda_sources"):
            value = load_inline_kwarg(call, kw)
            if value is not None:
                follow(value, set())
    return out


def string_value(node: cst.SimpleString) -> str:
    return node.evaluated_value if isinstance(node.evaluated_value, str) else ""


def with_value(node: cst.SimpleString, value: str) -> cst.SimpleString:
    """``node`` with new text, in the same prefix and quotes (raw strings stay raw)."""
    prefix, quote = node.prefix, node.quote
    if "r" in prefix.lower():
        if quote in value or value.endswith("\\"):
            raise UnsupportedSource("rewritten text cannot be written back as the same raw literal")
        body = value
    else:
        body = value.replace("\\", "\\\\")
        body = body.replace(quote[0], "\\" + quote[0]) if len(quote) == 1 else body.replace(quote, "\\" + quote)
        body = body.replace("\n", "\\n") if len(quote) == 1 else body
    return node.with_changes(value=f"{prefix}{quote}{body}{quote}")
