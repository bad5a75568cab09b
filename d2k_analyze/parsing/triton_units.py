"""Triton kernel units: ``@triton.jit`` functions with the jit helpers they call.

Units are the jit functions that are launched (``kernel[grid](...)``, also through an autotuned
alias) or called by no other jit function. Constants come from the signature defaults, the
launch sites and the autotune configs; helper branches are folded with the constants the kernel
passes at each call.
"""

from __future__ import annotations

import itertools
import re

from . import liveness
from .liveness import UNKNOWN
from ..model import KernelUnit, Span
from .common import MAX_ENVS, ParsedSubmission, build_facts, in_span, summarise
from .python import PyFunction, PySource, TritonLaunch, py_name, resolve_reference
from .treesitter import text
from .triton_configs import autotune_configs, module_constants


def _launch_env(fn: PyFunction, launch: TritonLaunch, consts: dict[str, object]) -> dict[str, object]:
    env: dict[str, object] = {}
    names = [p for p, _, _ in fn.params]
    for pname, arg in zip(names, launch.args):
        if arg.startswith("*"):
            break
        v = liveness.literal_value(arg, consts)
        env[pname] = v
    for k, v in launch.kwargs.items():
        env[k] = liveness.literal_value(v, consts)
    return env


def _triton_envs(fn: PyFunction, launches: list[tuple[PySource, TritonLaunch]], configs, heuristics: set[str], consts) -> list[dict[str, object]]:
    base: dict[str, object] = dict(consts)
    for pname, _ann, default in fn.params:
        if default:
            v = liveness.literal_value(default, consts)
            if v is not UNKNOWN:
                base[pname] = v
        else:
            base.pop(pname, None)
    cfg_envs: list[dict[str, object]] = []
    for cfg in configs or [{}]:
        keys = [k for k in cfg if k not in ("num_warps", "num_stages", "num_ctas", "maxnreg", "pre_hook")]
        for combo in itertools.product(*[cfg[k] for k in keys]):
            cfg_envs.append(dict(zip(keys, combo)))
            if len(cfg_envs) >= MAX_ENVS:
                break
    launch_envs = [_launch_env(fn, l, module_constants(p)) for p, l in launches] or [{}]
    envs: list[dict[str, object]] = []
    for le in launch_envs:
        for ce in cfg_envs:
            env = dict(base)
            env.update(le)
            env.update(ce)
            for h in heuristics:
                env.pop(h, None)
            envs.append({k: v for k, v in env.items() if v is not UNKNOWN})
            if len(envs) >= MAX_ENVS:
                return envs
    return envs


def _jit_helper_closure(fn: PyFunction, jit_by_name: dict[str, list[tuple[PySource, PyFunction]]],
                        renames: dict[str, str] | None = None) -> list[tuple[PySource, PyFunction]]:
    """The jit functions ``fn`` calls, transitively; a module-level rename (``tile = tile_v1``)
    names the function it was bound to."""
    out: list[tuple[PySource, PyFunction]] = []
    seen = {fn.name}
    todo = [fn]
    while todo:
        f = todo.pop()
        for name in sorted(f.names):
            name = (renames or {}).get(name, name)
            if name in seen or name not in jit_by_name:
                continue
            seen.add(name)
            for pair in jit_by_name[name]:
                out.append(pair)
                todo.append(pair[1])
    return out


def triton_units(parsed: ParsedSubmission, py_reach: set[str], program=None, host=None) -> list[KernelUnit]:
    from ..facts.build import triton_kernel_facts

    jit_by_name: dict[str, list[tuple[PySource, PyFunction]]] = {}
    for py in parsed.python:
        for fn in py.functions:
            if fn.is_jit and not fn.is_class:
                jit_by_name.setdefault(fn.name, []).append((py, fn))
    if not jit_by_name:
        return []
    launches: dict[str, list[tuple[PySource, TritonLaunch, PyFunction | None]]] = {}
    reached_unknown_launch = False
    aliases = {a: k for py in parsed.python for a, k in py.aliases.items()}
    renames = {n: t for py in parsed.python for n, t in py.renames.items() if "." not in t and n != t}
    for py in parsed.python:
        for fn in py.functions:
            for l in fn.launches:
                launches.setdefault(aliases.get(l.kernel, l.kernel), []).append((py, l, fn))
                if fn.name in py_reach and aliases.get(l.kernel, l.kernel) not in jit_by_name:
                    reached_unknown_launch = True
        for l in py.module_launches:
            launches.setdefault(aliases.get(l.kernel, l.kernel), []).append((py, l, None))
    # the jit functions some jit function calls, each call resolved to one definition
    # (``prims.Tile.forward`` inside ``Matmul.forward`` is a call, not recursion)
    called_by_jit: set[int] = set()
    for pairs in jit_by_name.values():
        for fpy, f in pairs:
            # calls, jit functions passed by name (``tl.reduce(x, 0, combine)``), and calls through
            # a module-level alias (``act = activation.identity; ... act(x)``)
            for path in f.calls | {n for n in f.names if n in jit_by_name and n != f.name}:
                path = fpy.renames.get(path, path)
                cands = jit_by_name.get(path.split(".")[-1])
                if cands:
                    target = resolve_reference(cands, path, fpy.file)[1]
                    if target is not f:
                        called_by_jit.add(id(target))
    # a launch site belongs to the one same-named definition its dotted name resolves to
    # (``kernel.Softmax.forward[grid]`` is not ``kernel.Sum.forward``)
    sites_of: dict[int, list[tuple[PySource, TritonLaunch, PyFunction | None]]] = {}
    for name, sites in launches.items():
        for site in sites:
            if name in jit_by_name:
                target = resolve_reference(jit_by_name[name], site[1].path or name, site[0].file)[1]
                sites_of.setdefault(id(target), []).append(site)
    units: list[KernelUnit] = []
    for name, pairs in jit_by_name.items():
        for py, fn in pairs:
            if id(fn) in called_by_jit and id(fn) not in sites_of:
                continue  # a helper: analysed as part of the kernels that call it
            consts = module_constants(py)
            configs, _n_configs = autotune_configs(fn, py, consts, parsed.python)
            heuristics: set[str] = set()
            for expr in fn.decorator_exprs():
                if expr.type == "call" and py_name(expr.child_by_field_name("function")).endswith("heuristics"):
                    heuristics |= set(re.findall(r"['\"](\w+)['\"]\s*:", text(expr)))
            ksites = sites_of.get(id(fn), [])
            envs = _triton_envs(fn, [(p, l) for p, l, _ in ksites], configs, heuristics, consts)
            decorators = [program.lowering(py).expr(e) for e in fn.decorator_exprs()]
            facts, failure = build_facts(lambda: triton_kernel_facts(program, py, fn, envs, host, parsed.file_lines, configs, decorators))
            helpers = _jit_helper_closure(fn, jit_by_name, renames)
            launched = False
            spans: list[Span] = []
            for lpy, l, caller in ksites:
                spans.append(Span(lpy.file, l.row + 1, l.end_row + 1))
                if caller is None or caller.name in py_reach:
                    launched = True
            if not launched and reached_unknown_launch and name in py_reach:
                launched = True  # launched through a variable: `kern = a if c else b; kern[grid](...)`
            start, end = fn.node.start_point[0] + 1, fn.node.end_point[0] + 1
            dec_start = min([d.start_point[0] + 1 for d in fn.decorators] or [start])
            units.append(
                KernelUnit(
                    name=name, language="triton", file=py.file, span=Span(py.file, dec_start, end),
                    source="\n\n".join([text(fn.node)] + [text(h.node) for _, h in helpers]),
                    helpers=[h.name for _, h in helpers], launched=launched, launch_sites=spans,
                    launch_constants=summarise(envs, fn.constexpr_params()),
                    code_lines=({ln for f, ln in facts.lines if f == py.file} if facts is not None else set())
                    | _signature_lines(fn.node),
                    parse_warnings=[w for w in py.warnings if in_span(w, dec_start, end)]
                    + ([f"{py.file}:{dec_start}: internal error while building facts ({failure})"] if failure else []), ast=facts,
                )
            )
    return units


def _signature_lines(node) -> set[int]:
    """The ``def`` line(s) of a kernel up to its body: code, though no statement runs on them."""
    colon = next((c for c in node.children if c.type == ":"), None)  # the header ends at its colon
    last = colon.start_point[0] if colon is not None else node.start_point[0]
    return set(range(node.start_point[0] + 1, last + 2))
