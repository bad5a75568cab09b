"""Building the facts of kernel units: host code first (launches), then each kernel.

:class:`HostIndex` interprets, once per submission, every host function that launches a kernel
(C++ launchers, Python wrappers around Triton launches): the launch records it yields carry
the grid, block and arguments as resolved values, and the library names the host code used
(cluster launch attributes, TMA swizzle modes). Each kernel is then interpreted with its
parameters bound (pointers as memory objects, scalars by position) and its template / constexpr
parameters bound to the values every launch agrees on.
"""

from __future__ import annotations

from ..parsing.cuda import CudaFunction
from ..parsing.python import PyFunction, PySource
from .expr import E, Op, Sym, TypeRef
from .interp import Frame, Interp
from .ir import Func
from .kernel import KernelFacts, LaunchFact
from .program import CudaProgram, PyProgram, _value_expr


class HostIndex:
    """Launches per kernel name, found by interpreting the submission's launching host code."""

    def __init__(self, cuda: CudaProgram | None, py: PyProgram | None, file_lines):
        self.launches: dict[str, list[LaunchFact]] = {}
        self.launched_from: set[int] = set()  # host functions whose launches were met
        self.file_lines = file_lines
        if cuda is not None:
            kernels = {k.name for k in cuda.kernels()}
            hosts = [fn for fns in cuda.by_name.values() for fn in fns if not fn.is_kernel and not fn.is_device]
            for fn in _launch_roots(hosts, lambda h: bool(h.launches) or bool(h.names & kernels), lambda h: h.calls):
                for tbind in _instantiations(cuda, fn):
                    self._interpret(cuda, cuda.lower(fn), tbind)
            # a launcher the entry point never reaches under its constants (a TN path when main
            # asks for NT) still launches the kernel in some configuration: read it on its own
            for fn in hosts:
                if fn.launches and not (self.launched_from & {id(fn.node)}):
                    self._interpret(cuda, cuda.lower(fn))
        if py is not None:
            hosts = [(src, fn) for pairs in py.by_name.values() for src, fn in pairs if not fn.is_jit and not fn.is_class]
            for src, fn in _launch_roots(hosts, lambda h: bool(h[1].launches), lambda h: h[1].names):
                self._interpret(py, py.lower(src, fn))

    def _interpret(self, program, func: Func, tbind: dict[str, E] | None = None) -> None:
        scratch = KernelFacts(func.name, program.language, func.loc.file, func.loc)
        interp = Interp(program, scratch)
        interp.host = True
        params = [Sym(f"hparam#{i}") for i in range(len(func.params))]
        try:
            interp.run_kernel(func, params, dict(tbind or {}))
        except RecursionError:
            return
        names = interp.lib_names | {c.fn for c in scratch.calls}
        self.launched_from |= interp.launching_functions
        _mark_exclusive([fact for _, fact in interp.host_launches])
        for kernel, fact in interp.host_launches:
            fact.host = func.name
            fact.host_names = frozenset(names)
            self.launches.setdefault(kernel, []).append(fact)

    def of(self, program, name: str, file: str) -> list[LaunchFact]:
        """The launches of kernel ``name`` defined in ``file`` (:meth:`.Scope.reaches`)."""
        launches = self.launches.get(name, [])
        scope = getattr(program, "scope", None)
        if scope is None or not launches:
            return list(launches)
        kernels = [fn for fn in program.kernels() if fn.name == name]
        defs = {fn.source.file for fn in kernels}
        template = any(fn.template_params for fn in kernels if fn.source.file == file)
        return [lf for lf in launches if scope.reaches(lf.loc.file, file, defs, template)]


def _instantiations(cuda: CudaProgram, fn) -> list[dict[str, E]]:
    """The template bindings a root host function is interpreted under: one per explicit
    instantiation of it (``template void run<float>(...);`` at the end of the file, what the
    library is compiled for when nothing here calls it), or none bound."""
    names = [n for n, _ in fn.template_params]
    if not names:
        return [{}]
    out = []
    for src in cuda.sources:
        for args in src.explicit_instantiations.get(fn.name, []):
            if len(args) == len(names):
                low = cuda.lowering(src)
                out.append({n: low.template_arg(a) for n, a in zip(names, args)})
    return out or [{}]


def _mark_exclusive(launches: list[LaunchFact]) -> None:
    """Each launch's conditions that another launch of the same host code contradicts: ``c`` in
    one launch's guards and ``not c`` in another's (the two sides of an ``if``, or a launch
    before an early return and one after it)."""
    negated = {g.args[0] for lf in launches for g in lf.guards if isinstance(g, Op) and g.op == "not" and len(g.args) == 1}
    held = {g for lf in launches for g in lf.guards}
    for lf in launches:
        lf.exclusive = tuple(g for g in lf.guards
                             if g in negated or (isinstance(g, Op) and g.op == "not" and len(g.args) == 1 and g.args[0] in held))


def _launch_roots(hosts: list, launches, uses) -> list:
    """The host functions to interpret: callers-of-callers first, so that template arguments and
    values flow from the entry point into the launch (``run -> launch<bf16> -> kernel<T><<<>>>``).
    Every function that reaches a launch and is not itself called by another such function is a
    root; a launching function no root reaches is interpreted on its own."""
    name_of = (lambda h: h.name) if not hosts or not isinstance(hosts[0], tuple) else (lambda h: h[1].name)
    by_name = {name_of(h): h for h in hosts}
    reaches: dict[str, bool] = {}
    live = [n for n in by_name if _reaches_launch(n, by_name, launches, uses, reaches)]
    called = {n for c in live for n in uses(by_name[c]) if n in by_name and n != c}
    roots = [n for n in live if n not in called]
    covered = set()
    todo = list(roots)
    while todo:
        n = todo.pop()
        if n in covered:
            continue
        covered.add(n)
        todo += [m for m in uses(by_name[n]) if m in by_name]
    roots += [n for n in live if launches(by_name[n]) and n not in covered]
    return [by_name[n] for n in roots]


def _reaches_launch(name: str, by_name: dict, launches, uses, reaches: dict[str, bool], seen: frozenset = frozenset()) -> bool:
    """Whether host function ``name`` launches a kernel or calls (transitively) one that does;
    answers memoised in ``reaches``. A module-level function, not a closure that calls itself:
    such a closure is a reference cycle that keeps every host function it can see alive until
    the cyclic garbage collector runs."""
    if name in reaches:
        return reaches[name]
    h = by_name[name]
    out = launches(h) or any(_reaches_launch(n, by_name, launches, uses, reaches, seen | {name})
                             for n in uses(h) if n in by_name and n not in seen and n != name)
    reaches[name] = out
    return out


def _bind_arguments(func: Func, launches: list[LaunchFact]) -> None:
    """Match every launch's positional and keyword arguments to the kernel's parameters, so that
    detectors ask "what does parameter 5 get" by position, never by a name."""
    names = [p.name for p in func.params]
    for lf in launches:
        bound: list[E | None] = list(lf.args[: len(names)]) + [None] * max(0, len(names) - len(lf.args))
        for key, value in lf.kwargs.items():
            if key in names:
                bound[names.index(key)] = value
        lf.bound = tuple(bound)


def _facts(name: str, language: str, func: Func, file_lines) -> KernelFacts:
    return KernelFacts(name, language, func.loc.file, func.loc, len(func.params), file_lines=file_lines, attributes=func.attributes)


def cuda_kernel_facts(program: CudaProgram, fn: CudaFunction, host: HostIndex, file_lines) -> KernelFacts:
    func = program.lower(fn)
    facts = _facts(fn.name, "cuda", func, file_lines)
    facts.launches = host.of(program, fn.name, fn.source.file)
    _bind_arguments(func, facts.launches)
    facts.host_names = {n for lf in facts.launches for n in lf.host_names}
    interp = Interp(program, facts)
    tbind = _template_binding(func, facts)
    values: list[E] = []
    # parameter types under the launch's template arguments: ``T* w`` with ``T = half`` points
    # at halves, so a ``half2`` view of it moves two elements per step
    interp.frames.append(Frame(None, [{}], dict(tbind)))
    try:
        for i, p in enumerate(func.params):
            t = interp.resolve_type(p.type)
            if p.pointer or "*" in t or "[" in t:
                values.append(interp.pointer_param(i, t))
            else:
                values.append(Sym(f"param#{i}"))
    finally:
        interp.frames.pop()
    interp.run_kernel(func, values, tbind)
    facts.lib_names = interp.lib_names
    return facts


def _template_binding(func: Func, facts: KernelFacts) -> dict[str, E]:
    tbind: dict[str, E] = {}
    for i, (tname, default) in enumerate(func.tparams):
        seen: list[E] = []
        for launch in facts.launches:
            if i < len(launch.targs):
                v = launch.targs[i]
                if v not in seen:
                    seen.append(v)
        if not facts.launches or not any(i < len(lf.targs) for lf in facts.launches):
            if default is not None:
                seen = [default]
        types = [v.name for v in seen if isinstance(v, TypeRef)]
        if types:
            flat = [t for v in types for t in v.split("|")]
            facts.template_types[tname] = tuple(dict.fromkeys(flat))
        if len(seen) == 1 and not (isinstance(seen[0], Sym)):
            tbind[tname] = seen[0]
        elif types and len(types) == len(seen):
            tbind[tname] = TypeRef("|".join(dict.fromkeys(t for v in types for t in v.split("|"))))
        else:
            tbind[tname] = Sym(f"tparam#{i}")
    return tbind


def triton_kernel_facts(program: PyProgram, py: PySource, fn: PyFunction, envs: list[dict[str, object]], host: HostIndex,
                        file_lines, configs, decorators) -> KernelFacts:
    func = program.lower(py, fn)
    facts = _facts(fn.name, "triton", func, file_lines)
    facts.launches = list(host.launches.get(fn.name, []))
    _bind_arguments(func, facts.launches)
    facts.host_names = {n for lf in facts.launches for n in lf.host_names}
    facts.configs = configs
    facts.decorators = decorators
    interp = Interp(program, facts)
    values: list[E] = []
    for i, p in enumerate(func.params):
        if p.constexpr:
            vals = _env_values(p.name, envs)
            if vals is not None and len(vals) == 1 and _value_expr(vals[0]) is not None:
                values.append(_value_expr(vals[0]))
            else:
                if vals:
                    facts.constexprs[i] = tuple(vals)
                values.append(Sym(f"cexpr#{i}"))
        else:
            values.append(Sym(f"param#{i}"))
    interp.run_kernel(func, values, {})
    facts.lib_names = interp.lib_names
    return facts


def _env_values(name: str, envs: list[dict[str, object]]) -> list[object] | None:
    out: list[object] = []
    for env in envs:
        if name not in env:
            return None
        v = env[name]
        try:
            if v not in out:
                out.append(v)
        except TypeError:
            return None
    return out or None


__all__ = ["HostIndex", "cuda_kernel_facts", "triton_kernel_facts"]
