"""What the unit builders share: the parsed submission, Python reachability, host context.

``parse_files`` parses each file of one submission once (Python files also yield the CUDA strings
they compile); the CUDA and Triton unit builders (:mod:`.cuda_units`, :mod:`.triton_units`) then
work from this :class:`ParsedSubmission`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import liveness
from ..model import SourceFile
from .cuda import CudaSource, parse_cuda
from .facts import Call, HostContext, Line, py_args, py_name
from .python import PySource, parse_python
from .treesitter import Node, text, walk

MAX_ENVS = 64  # constant sets per unit (launch sites x autotune configs); beyond that, stop folding
ENTRY_POINTS = ("run", "ModelNew")


@dataclass
class ParsedSubmission:
    cuda: list[CudaSource] = field(default_factory=list)
    python: list[PySource] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    file_lines: dict[str, list[str]] = field(default_factory=dict)


def parse_files(files: list[SourceFile], display=str) -> ParsedSubmission:
    """Parse each readable file once; CUDA strings compiled from Python become CUDA sources."""
    parsed = ParsedSubmission()
    for f in files:
        if f.text is None:
            continue
        name = display(f.path)
        parsed.file_lines[name] = f.text.split("\n")
        try:
            if f.kind == "cuda":
                src = parse_cuda(f.text, name)
                parsed.cuda.append(src)
                parsed.warnings += src.warnings
            elif f.kind == "python":
                py = parse_python(f.text, name)
                parsed.python.append(py)
                parsed.warnings += py.warnings
                for emb in py.embedded:
                    if not emb.compiled:
                        continue  # a CUDA string nobody compiles (docstring, example) earns nothing
                    cs = parse_cuda(emb.text, name, line_offset=emb.row, embedded=True, flat_line=emb.row + 1 if emb.flat else None)
                    parsed.cuda.append(cs)
                    parsed.warnings += cs.warnings
        except (RecursionError, ValueError, MemoryError) as exc:  # never let one file stop the rest
            parsed.warnings.append(f"{name}: could not be parsed ({type(exc).__name__})")
    return parsed


def python_reachable(parsed: ParsedSubmission) -> tuple[set[str], bool]:
    """Names reachable from the entry point; and whether an entry point exists at all."""
    edges: dict[str, set[str]] = {}
    module_names: set[str] = set()
    for py in parsed.python:
        module_names |= py.module_names
        for fn in py.functions:
            edges.setdefault(fn.name, set()).update(fn.names)
    has_entry = any(e in edges for e in ENTRY_POINTS)
    if not parsed.python:
        return set(), False
    roots = set(ENTRY_POINTS) | module_names if has_entry else set(edges) | module_names
    return liveness.reachable(roots, edges), has_entry


# Host code (launchers) is shared by every kernel it launches: extract its lines and calls once.
_HOST_CACHE: dict[tuple[int, int, str], HostContext] = {}


def clear_host_cache() -> None:
    _HOST_CACHE.clear()


def add_host_lines(ctx: HostContext, node: Node, file: str, line_of, data: bytes, python: bool = False) -> None:
    """Append the comment-free lines and calls of a host function (memoised per node: every
    kernel launched from the same host code shares it)."""
    key = (id(data), node.start_byte, file)
    cached = _HOST_CACHE.get(key)
    if cached is None:
        cached = HostContext()
        _host_lines(cached, node, file, line_of, data, python)
        _HOST_CACHE[key] = cached
    ctx.lines += cached.lines
    ctx.calls += cached.calls


def _host_lines(ctx: HostContext, node: Node, file: str, line_of, data: bytes, python: bool) -> None:
    row0 = node.start_point[0]
    for i, raw in enumerate(data[node.start_byte : node.end_byte].decode("utf-8", errors="replace").split("\n")):
        s = raw.split("#", 1)[0] if python else raw.split("//", 1)[0]
        if s.strip():
            ctx.lines.append(Line(file, line_of(row0 + i), s))
    for n in walk(node):
        if n.type in ("call", "call_expression"):
            fn = n.child_by_field_name("function")
            if fn is None:
                continue
            if python:
                args, kwargs = py_args(n)
                ctx.calls.append(Call(py_name(fn), file, line_of(n.start_point[0]), line_of(n.end_point[0]), args, kwargs, (), text(n)[:300]))
            else:
                ctx.calls.append(Call(text(fn)[:100], file, line_of(n.start_point[0]), line_of(n.end_point[0]), (), (), (), text(n)[:300]))


def in_span(warning: str, start: int, end: int) -> bool:
    m = re.search(r":(\d+): ", warning)
    return bool(m) and start <= int(m.group(1)) <= end


def summarise(envs: list[dict[str, object]], names: list[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for name in names:
        values = []
        for env in envs:
            if name in env and env[name] not in values:
                values.append(env[name])
        if len(values) == 1:
            out[name] = values[0]
        elif values:
            out[name] = values
    return out
