"""CUDA kernel units: ``__global__`` functions with their device helpers, macros and launches.

A kernel counts as launched when a host function reached from the entry point launches it (or
names it, as ``cudaLaunchKernelEx`` does). Its constants are the template arguments at each launch
site plus the file constants; they decide which ``if constexpr`` branches are dead.
"""

from __future__ import annotations

from . import liveness
from .liveness import UNKNOWN
from ..model import KernelUnit, Span
from .common import MAX_ENVS, ParsedSubmission, add_host_lines, in_span, summarise
from .cuda import CudaFunction, CudaSource
from .facts import HostContext, LaunchInfo, Line, Piece, UnitFacts, extract_cuda
from .treesitter import Node, text


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


def _device_closure(kernel: CudaFunction, by_name: dict[str, list[CudaFunction]]) -> list[CudaFunction]:
    out: list[CudaFunction] = []
    seen = {kernel.name}
    todo = [kernel]
    while todo:
        f = todo.pop()
        for name in sorted(f.calls):
            short = name.split("::")[-1]
            if short in seen:
                continue
            for g in by_name.get(short, []):
                if g.is_kernel:
                    continue
                seen.add(short)
                out.append(g)
                todo.append(g)
    return out


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


def _macro_pieces(facts_idents: set[str], parsed: ParsedSubmission) -> list[tuple[CudaSource, Node]]:
    out = []
    seen: set[str] = set()
    for src in parsed.cuda:
        for name, node in src.macros.items():
            if name in facts_idents and name not in seen and node.type == "preproc_function_def":
                seen.add(name)
                out.append((src, node))
            elif name in facts_idents and name not in seen and node.child_by_field_name("value") is not None and "asm" in text(node):
                seen.add(name)
                out.append((src, node))
    return out


def cuda_units(parsed: ParsedSubmission, py_reach: set[str], has_python: bool) -> list[KernelUnit]:
    funcs = [f for src in parsed.cuda for f in src.functions]
    by_name: dict[str, list[CudaFunction]] = {}
    for f in funcs:
        by_name.setdefault(f.name, []).append(f)
    launched, sites = _cuda_launched(parsed, py_reach, has_python)
    base = _cuda_file_constants(parsed)
    raw_constants = {k: v for src in parsed.cuda for k, v in src.constants.items()}
    units: list[KernelUnit] = []
    seen: set[tuple[str, str]] = set()
    for fn in funcs:
        if not fn.is_kernel or (fn.source.file, fn.name) in seen or not fn.name:
            continue
        seen.add((fn.source.file, fn.name))
        src = fn.source
        ksites = sites.get(fn.name, [])
        envs = _template_envs(fn, ksites, base)
        facts = UnitFacts(fn.name, "cuda", src.file, params=list(fn.params), envs=envs, file_lines=parsed.file_lines,
                          constants=raw_constants, low_precision=src.low_precision)
        helpers = _device_closure(fn, by_name)
        for f in [fn] + helpers:
            body = f.node.child_by_field_name("body") or f.node
            dead = liveness.dead_ranges(body, envs if f is fn else _helper_envs(f, fn, helpers, envs, base), "cuda", f.body_nodes.get("branch"))
            extract_cuda(facts, Piece(f.node, f.source.file, f.source.line, f.source.data, dead, "cuda", f.source.pragmas))
        for msrc, mnode in _macro_pieces(facts.idents, parsed):
            extract_cuda(facts, Piece(mnode, msrc.file, msrc.line, msrc.data, [], "cuda"))
        start, end = src.line(fn.node.start_point[0]), src.line(fn.node.end_point[0])
        for row, attr in src.attributes:
            if fn.node.start_point[0] - 2 <= row <= (fn.node.child_by_field_name("body") or fn.node).start_point[0]:
                facts.attributes.append(Line(src.file, src.line(row), attr))
        launch_spans: list[Span] = []
        host_fns: list[CudaFunction] = []
        for host, site in ksites:
            hs = host.source
            row = site.row if site is not None else host.node.start_point[0]
            launch_spans.append(Span(hs.file, hs.line(row), hs.line(site.end_row if site is not None else row)))
            facts.launches.append(LaunchInfo(hs.file, hs.line(row), ", ".join(site.config) if site is not None else "", {}, tuple(getattr(site, "template_args", ()) or ())))
            if host not in host_fns:
                host_fns.append(host)
        facts.host = _cuda_host_context(host_fns, parsed, py_reach)
        facts.launched = fn.name in launched
        warnings = [w for w in src.warnings if in_span(w, start, end)]
        units.append(
            KernelUnit(
                name=fn.name, language="cuda", file=src.file, span=Span(src.file, start, end),
                source=_unit_source([fn] + helpers), helpers=[h.name for h in helpers],
                launched=fn.name in launched, launch_sites=launch_spans,
                launch_constants=summarise(envs, [p for p, _ in fn.template_params]),
                code_lines={ln.line for ln in facts.lines if ln.file == src.file},
                parse_warnings=warnings, ast=facts,
            )
        )
    return units


def _helper_envs(helper: CudaFunction, kernel: CudaFunction, helpers: list[CudaFunction], envs, base) -> list[dict[str, object]]:
    """Template arguments a kernel (or sibling helper) passes to ``helper`` at its call sites."""
    if not helper.template_params:
        return [dict(base)]
    out: list[dict[str, object]] = []
    for caller in [kernel] + helpers:
        if not caller.body_nodes:
            continue  # no body
        for n in caller.body_nodes["call_expression"]:
            fnode = n.child_by_field_name("function")
            if fnode is None or fnode.type != "template_function" or text(fnode.child_by_field_name("name")).split("::")[-1] != helper.name:
                continue
            al = fnode.child_by_field_name("arguments")
            targs = [text(a) for a in (al.named_children if al is not None else [])]
            for env in (envs if caller is kernel else [base]):
                e = dict(base)
                for (pname, _), arg in zip(helper.template_params, targs):
                    v = liveness.literal_value(arg, env, "cuda")
                    if v is not UNKNOWN:
                        e[pname] = v
                out.append(e)
    return out[:MAX_ENVS] or [dict(base)]


def _cuda_host_context(hosts: list[CudaFunction], parsed: ParsedSubmission, py_reach: set[str]) -> HostContext:
    ctx = HostContext()
    for h in hosts:
        add_host_lines(ctx, h.node, h.source.file, h.source.line, h.source.data)
    for py in parsed.python:  # Python wrappers that size grids / call the launchers
        for fn in py.functions:
            if fn.name in py_reach and not fn.is_jit and not fn.is_class:
                add_host_lines(ctx, fn.node, py.file, lambda r: r + 1, py.data, python=True)
        for n in py.module_nodes:
            add_host_lines(ctx, n, py.file, lambda r: r + 1, py.data, python=True)
    return ctx


def _unit_source(fns: list) -> str:
    return "\n\n".join(text(f.node) for f in fns)
