"""CUDA kernel units: ``__global__`` functions with their device helpers, macros and launches.

A kernel counts as launched when a host function reached from the entry point launches it (or
names it, as ``cudaLaunchKernelEx`` does). Its constants are the template arguments at each launch
site plus the file constants; they decide which ``if constexpr`` branches are dead.
"""

from __future__ import annotations

from . import liveness
from .liveness import UNKNOWN
from ..model import KernelUnit, Span
from .common import MAX_ENVS, ParsedSubmission, build_facts, in_span, summarise
from .cuda import CudaFunction
from .translation_units import Scope, file_scope
from .treesitter import text


def _cuda_file_constants(parsed: ParsedSubmission) -> dict[str, object]:
    raw: dict[str, str] = {}
    for src in parsed.cuda:
        raw.update(src.constants)
    return liveness.resolve_constants(raw, "cuda")


def _cuda_launched(parsed: ParsedSubmission, py_reach: set[str], has_python: bool) -> tuple[set[str], dict[str, list[tuple[CudaFunction, object]]]]:
    """Kernel names launched from the entry point; and every launch site (host fn, site) per kernel."""
    funcs = [f for src in parsed.cuda for f in src.functions]
    kernels = {f.name for f in funcs if f.is_kernel}
    hosts = [f for f in funcs if f.is_host and not f.is_kernel]
    by_name: dict[str, list[CudaFunction]] = {}
    for f in funcs:
        by_name.setdefault(f.name, []).append(f)
    sites: dict[str, list[tuple[CudaFunction, object]]] = {}
    for f in funcs:
        for site in f.launches:
            sites.setdefault(site.kernel, []).append((f, site))
        if not f.is_kernel:
            for k in (f.names & kernels) - {site.kernel for site in f.launches}:
                sites.setdefault(k, []).append((f, None))  # kernel named as a value (cudaLaunchKernelEx)
    if has_python:
        roots = {h.name for h in hosts if h.name in py_reach or h.name in ("PYBIND11_MODULE", "TORCH_LIBRARY", "TORCH_LIBRARY_IMPL")}
        direct = kernels & py_reach  # cupy RawKernel / get_function("name")
    else:
        roots = {h.name for h in hosts}
        direct = set()
    edges: dict[str, set[str]] = {}
    for f in funcs:
        uses = set(f.calls) | {s.kernel for s in f.launches}
        if not f.is_kernel:
            uses |= f.names  # host code passes functions by name: m.def("f", &f), cudaLaunchKernelEx(.., k)
        edges.setdefault(f.name, set()).update(uses)
    # Only follow edges into host functions and kernels launched (not device helpers).
    reach = liveness.reachable(roots | direct, edges)
    return (reach & kernels) | direct, sites


def _device_closure(kernel: CudaFunction, by_name: dict[str, list[CudaFunction]], scope: Scope) -> list[CudaFunction]:
    """The helpers a kernel calls, transitively: of each name, the definitions its caller's file
    sees first (a sibling program's helper of the same name only when none is in sight)."""
    out: list[CudaFunction] = []
    seen = {kernel.name}
    todo = [kernel]
    while todo:
        f = todo.pop()
        for name in sorted(f.calls):
            short = name.split("::")[-1]
            if short in seen:
                continue
            cands = [g for g in by_name.get(short, []) if not g.is_kernel]
            if cands:
                best = min(scope.rank(f.source.file, g.source.file) for g in cands)
                cands = [g for g in cands if scope.rank(f.source.file, g.source.file) == best]
            for g in cands:
                seen.add(short)
                out.append(g)
                todo.append(g)
    return out


def _sites_of(fn: CudaFunction, sites: list[tuple[CudaFunction, object]], kernels: list[CudaFunction], scope: Scope) -> list[tuple[CudaFunction, object]]:
    """The launch sites that reach this definition of a kernel name: a site whose file sees a
    definition of the name reaches that one only (see :meth:`.facts.build.HostIndex.of`)."""
    defs = {k.source.file for k in kernels if k.name == fn.name}
    return [(host_fn, site) for host_fn, site in sites
            if scope.reaches(host_fn.source.file, fn.source.file, defs, bool(fn.template_params))]


def _template_envs(fn: CudaFunction, sites: list[tuple[CudaFunction, object]], base: dict[str, object]) -> list[dict[str, object]]:
    """One env per launch site: template arguments bound to the kernel's template parameters."""
    defaults = {}
    for name, default in fn.template_params:
        if default:
            v = liveness.literal_value(default, base, "cuda")
            if v is not UNKNOWN:
                defaults[name] = v
    envs: list[dict[str, object]] = []
    for _host, site in sites:
        env = dict(base)
        env.update(defaults)
        targs = getattr(site, "template_args", []) if site is not None else []
        for (pname, _), arg in zip(fn.template_params, targs):
            v = liveness.literal_value(arg, base, "cuda")
            if v is UNKNOWN:
                env.pop(pname, None)
            else:
                env[pname] = v
        envs.append(env)
    if not envs:
        env = dict(base)
        env.update(defaults)
        envs.append(env)
    # Template parameters without a known value stay out of every env (conditions on them are live).
    return envs[:MAX_ENVS]


def cuda_units(parsed: ParsedSubmission, py_reach: set[str], has_python: bool, program=None, host=None) -> list[KernelUnit]:
    from ..facts.build import cuda_kernel_facts

    funcs = [f for src in parsed.cuda for f in src.functions]
    by_name: dict[str, list[CudaFunction]] = {}
    for f in funcs:
        by_name.setdefault(f.name, []).append(f)
    launched, sites = _cuda_launched(parsed, py_reach, has_python)
    scope = program.scope if program is not None else (parsed.scope or file_scope(parsed.cuda))
    kernels = [f for f in funcs if f.is_kernel]
    base = _cuda_file_constants(parsed)
    units: list[KernelUnit] = []
    seen: set[tuple[str, str]] = set()
    for fn in funcs:
        # An explicit specialisation is a unit of its own (``k<__half>``): its body is other code.
        name = fn.name + fn.specialization
        if not fn.is_kernel or (fn.source.file, name) in seen or not fn.name:
            continue
        seen.add((fn.source.file, name))
        src = fn.source
        ksites = _sites_of(fn, sites.get(fn.name, []), kernels, scope)
        envs = _template_envs(fn, ksites, base)
        facts, failure = build_facts(lambda: cuda_kernel_facts(program, fn, host, parsed.file_lines))
        helpers = _device_closure(fn, by_name, scope)
        start, end = src.line(fn.node.start_point[0]), src.line(fn.node.end_point[0])
        launch_spans: list[Span] = []
        for host_fn, site in ksites:
            hs = host_fn.source
            row = site.row if site is not None else host_fn.node.start_point[0]
            launch_spans.append(Span(hs.file, hs.line(row), hs.line(site.end_row if site is not None else row)))
        warnings = [w for w in src.warnings if in_span(w, start, end)] + ([f"{src.file}:{start}: internal error while building facts ({failure})"] if failure else [])
        units.append(
            KernelUnit(
                name=name, language="cuda", file=src.file, span=Span(src.file, start, end),
                source=_unit_source([fn] + helpers), helpers=[h.name for h in helpers],
                launched=fn.name in launched, launch_sites=launch_spans,
                launch_constants=summarise(envs, [p for p, _ in fn.template_params]),
                code_lines=({ln for f, ln in facts.lines if f == src.file} if facts is not None else set()) | _signature_lines(fn.node, src.line),
                parse_warnings=warnings, ast=facts,
            )
        )
    return units


def _unit_source(fns: list) -> str:
    return "\n\n".join(text(f.node) for f in fns)


def _signature_lines(node, line_of) -> set[int]:
    """The lines of a kernel's declaration (name, parameters) up to where its body opens: code,
    though no statement runs on them."""
    decl = node.child_by_field_name("declarator")  # name and parameter list, however many lines
    last = decl.end_point[0] if decl is not None else node.start_point[0]
    return {line_of(r) for r in range(node.start_point[0], last + 1)}
