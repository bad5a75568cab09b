"""The static analysis of submissions: sources -> kernel units -> property findings.

This is the API the CLI, scoring and reports build on: ``analyze_paths`` for whatever the user
points at, ``analyze_submission`` for one folder or file. Nothing here imports torch or triton,
and nothing imports or executes the analysed code.
"""

from __future__ import annotations

import gc
import os
from contextlib import contextmanager
from pathlib import Path

from .detectors import run_detectors
from .model import SubmissionAnalysis, UnitAnalysis
from .parsing import kernel_units
from .sources import collect_sources
from .submissions import find_submissions


def _default_catalogue():
    from d2k_spec.catalogue import load_catalogue

    return load_catalogue()


def _display(root: Path):
    """Paths in messages and evidence: relative to the working directory when possible."""

    def show(p: Path) -> str:
        try:
            rel = os.path.relpath(p)
            return rel if not rel.startswith("..") else str(p)
        except ValueError:
            return str(p)

    return show


RARE_COLLECTIONS = (100_000, 50, 100)  # the cyclic collector's thresholds during an analysis


@contextmanager
def few_collections():
    """Run with Python's cyclic garbage collector triggered rarely.

    The analysis allocates millions of small objects that live as long as the submission's
    analysis (parse trees, lowered IR, interpreted values). With the default young-generation
    threshold (700 allocations) the collector re-scans them over and over: measured at 15-25 %
    of the static analysis time on the bundled corpus, and the cause of super-linear growth
    with a kernel's length (the older generations hold ever more objects). Almost none of
    these objects form cycles, so collecting rarely loses nothing; the old thresholds are
    restored afterwards."""
    old = gc.get_threshold()
    gc.set_threshold(*RARE_COLLECTIONS)
    try:
        yield
    finally:
        gc.set_threshold(*old)


def analyze_submission(name: str, path: Path, task: str | None, catalogue=None) -> SubmissionAnalysis:
    """Analyse one submission folder (or standalone file): every kernel unit, every property."""
    from .facts.expr import forget_nodes

    with few_collections():
        try:
            return _analyze_submission(name, path, task, catalogue)
        finally:
            forget_nodes()


def _analyze_submission(name: str, path: Path, task: str | None, catalogue) -> SubmissionAnalysis:
    catalogue = catalogue if catalogue is not None else _default_catalogue()
    path = Path(path)
    files, warnings = collect_sources([path])
    errors = [f"{f.path}: {f.error}" for f in files if f.text is None]
    try:
        units, parse_warnings = kernel_units(files, _display(path))
    except Exception as exc:  # defensive: report, never crash the whole run
        return SubmissionAnalysis(name, path, task, [], warnings, errors + [f"{path}: analysis failed ({type(exc).__name__}: {exc})"])
    warnings += parse_warnings
    analysed = [UnitAnalysis(u, run_detectors(u, catalogue)) for u in units]
    if not units and files:
        warnings.append(f"{path}: no kernel found (no __global__ function or @triton.jit function)")
    return SubmissionAnalysis(name, path, task, analysed, warnings, errors)


def analyze_paths(paths: list[Path], task: str | None = None, catalogue=None) -> list[SubmissionAnalysis]:
    """Analyse every submission under ``paths``."""
    catalogue = catalogue if catalogue is not None else _default_catalogue()
    paths = [Path(p) for p in paths]
    out: list[SubmissionAnalysis] = []
    found = find_submissions(paths, task)
    for name, path, task_id in found:
        out.append(analyze_submission(name, path, task_id, catalogue))
    if not found:
        _, warnings = collect_sources(paths)
        out.append(SubmissionAnalysis(", ".join(map(str, paths)), paths[0] if paths else Path("."), task, [], warnings or ["no submissions found"], []))
    return out
