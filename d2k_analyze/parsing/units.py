"""From the source files of one submission to its kernel units.

Steps: parse every file once (:func:`.common.parse_files`), decide what the entry point reaches,
then build CUDA units (:mod:`.cuda_units`) and Triton units (:mod:`.triton_units`). The result is
plain :class:`~d2k_analyze.model.KernelUnit` records whose ``ast`` holds the unit's
:class:`~.facts.UnitFacts` (what detectors read).
"""

from __future__ import annotations

from ..model import KernelUnit, SourceFile
from .common import ParsedSubmission, parse_files, python_reachable
from .cuda_units import cuda_units
from .triton_units import triton_units


def build_units(parsed: ParsedSubmission) -> list[KernelUnit]:
    """Every kernel unit of a parsed submission, with liveness and facts."""
    from ..facts.build import HostIndex
    from ..facts.program import CudaProgram, PyProgram

    py_reach, _has_entry = python_reachable(parsed)
    cuda = CudaProgram(parsed.cuda, parsed.scope) if parsed.cuda else None
    py = PyProgram(parsed.python) if parsed.python else None
    host = HostIndex(cuda, py, parsed.file_lines)
    units = cuda_units(parsed, py_reach, bool(parsed.python), cuda, host) + triton_units(parsed, py_reach, py, host)
    units.sort(key=lambda u: (u.file, u.span.start_line))
    return units


def kernel_units(files: list[SourceFile], display=str) -> tuple[list[KernelUnit], list[str]]:
    """Parse ``files`` (one submission) and return its kernel units and the parse warnings."""
    parsed = parse_files(files, display)
    return build_units(parsed), parsed.warnings


__all__ = ["ParsedSubmission", "build_units", "kernel_units", "parse_files"]
