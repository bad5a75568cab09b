"""What the unit builders share: the parsed submission, Python reachability, host context.

``parse_files`` parses each file of one submission once (Python files also yield the CUDA strings
they compile); the CUDA and Triton unit builders (:mod:`.cuda_units`, :mod:`.triton_units`) then
work from this :class:`ParsedSubmission`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import liveness, macros, translation_units
from ..model import SourceFile
from .cuda import CudaSource, parse_cuda
from .python import PySource, parse_python

MAX_ENVS = 64  # constant sets per unit (launch sites x autotune configs); beyond that, stop folding
ENTRY_POINTS = ("run", "ModelNew")


@dataclass
class ParsedSubmission:
    cuda: list[CudaSource] = field(default_factory=list)
    python: list[PySource] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    file_lines: dict[str, list[str]] = field(default_factory=dict)
    scope: translation_units.Scope | None = None  # which CUDA files see which (None: no CUDA)


def parse_files(files: list[SourceFile], display=str) -> ParsedSubmission:
    """Parse each readable file once; CUDA strings compiled from Python become CUDA sources.

    The macros a CUDA text sees are expanded before parsing (see :mod:`.macros`): its own, those
    of the files it includes, and the submission's headers; never another ``.cu`` file's (see
    :mod:`.translation_units`)."""
    parsed = ParsedSubmission()
    cuda_texts: list[tuple[str, str, dict]] = []  # (display name, text, parse_cuda keyword arguments)
    for f in files:
        if f.text is None:
            continue
        name = display(f.path)
        parsed.file_lines[name] = f.text.split("\n")
        try:
            if f.kind == "cuda":
                cuda_texts.append((name, f.text, {}))
            elif f.kind == "python":
                py = parse_python(f.text, name)
                parsed.python.append(py)
                parsed.warnings += py.warnings
                for emb in py.embedded:
                    if emb.compiled:  # a CUDA string nobody compiles (docstring, example) earns nothing
                        cuda_texts.append((name, emb.text, dict(line_offset=emb.row, embedded=True, flat_line=emb.row + 1 if emb.flat else None)))
        except (RecursionError, ValueError, MemoryError) as exc:  # never let one file stop the rest
            parsed.warnings.append(f"{name}: could not be parsed ({type(exc).__name__})")
    if cuda_texts:
        parsed.scope = translation_units.scope_of((name, text, bool(kwargs.get("embedded"))) for name, text, kwargs in cuda_texts)
    tables, defined = _macro_tables(cuda_texts, parsed.scope)
    for name, source_text, kwargs in cuda_texts:
        try:
            src = parse_cuda(macros.expand(source_text, tables[name]), name, defined=defined[name], **kwargs)
        except (RecursionError, ValueError, MemoryError) as exc:
            parsed.warnings.append(f"{name}: could not be parsed ({type(exc).__name__})")
            continue
        parsed.cuda.append(src)
        parsed.warnings += src.warnings
    return parsed


def _macro_tables(cuda_texts: list[tuple[str, str, dict]], scope) -> tuple[dict[str, dict[str, macros.Macro]], dict[str, dict[str, str]]]:
    """The macro table of each CUDA file: the file's own ``#define`` lines first, then those of the
    files it sees (:func:`.translation_units.visibility`), then the shared ones (headers and
    embedded strings), so that a header's ``#define`` reaches the files that include it and a
    sibling program's ``#define STAGES 4`` does not reach ``main.cu``. Also the names each file
    sees defined outside any ``#if``, with their values (what its ``#ifdef`` / ``#if`` tests can
    rely on)."""
    texts: dict[str, list[str]] = {}
    for name, text, _kwargs in cuda_texts:
        texts.setdefault(name, []).append(text)
    defined = {n: [macros.defines(t) for t in ts] for n, ts in texts.items()}
    always = {n: {k: v for t in ts for k, v in macros.unconditional_defines(t).items()} for n, ts in texts.items()}
    tables: dict[str, dict[str, macros.Macro]] = {}
    sure: dict[str, dict[str, str]] = {}
    for name in texts:
        visible = scope.visible[name]
        order = [name] + sorted(visible - {name}) + [s for s in scope.shared if s not in visible]
        tables[name] = macros.collect([t for n in order for t in texts[n]], [d for n in order for d in defined[n]])
        sure[name] = {k: v for n in reversed(order) for k, v in always[n].items()}  # the file's own value wins
    return tables, sure


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


def build_facts(make):
    """(facts, None) or (None, "Kind: message"): one kernel whose facts cannot be built must not
    take the other kernels of its submission down; the failure is reported with its kind."""
    try:
        return make(), None
    except (RecursionError, MemoryError) as exc:
        return None, type(exc).__name__
    except Exception as exc:  # noqa: BLE001 - an analyzer bug, recorded per kernel
        return None, f"{type(exc).__name__}: {exc}"


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
