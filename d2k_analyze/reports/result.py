"""What every report format renders: one record per submission, plus the optional evaluation."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from d2k_spec.catalogue import Catalogue
from d2k_spec.task import Task

from ..compiled import KernelArtifact
from ..eval_labels import Evaluation
from ..judge.records import JudgeTotals, SubmissionJudgement
from ..model import Span, SubmissionAnalysis, SubmissionScore


COMPILE_FAILED = "compiled layer: failed"  # the status line of a failed nvcc run (compiled.combine)


@dataclass
class SubmissionResult:
    """One analysed submission. ``score`` is None without a known task; ``compiled`` is the
    compiled layer's status line; ``kernels`` maps a unit name to its compiled instances
    (registers, spills, shared memory). With the LLM judge on, ``judge`` holds its records and
    verdicts, ``score`` is the combined score and ``static_score`` the static-only one."""

    analysis: SubmissionAnalysis
    score: SubmissionScore | None = None
    compiled: str = ""
    kernels: dict[str, list[KernelArtifact]] = field(default_factory=dict)
    judge: SubmissionJudgement | None = None
    static_score: SubmissionScore | None = None

    @property
    def failed(self) -> bool:
        return bool(self.analysis.errors)

    @property
    def problems(self) -> list[str]:
        """Why this submission could not be analysed in full, one line each: files that could not
        be read (unreadable, binary, too large), a failed compile in the compiled layer, a judge
        request that failed. Any of them makes the run's exit status 1 (d2k_spec.exit_codes)."""
        out = list(self.analysis.errors)
        if self.compiled.startswith(COMPILE_FAILED):
            out.append(self.compiled)
        if self.judge is not None:
            out += [f"judge ({g.kind}): {g.error}" for g in self.judge.records if g.error]
        return out


@dataclass
class Report:
    results: list[SubmissionResult]
    catalogue: Catalogue
    tasks: dict[str, Task] = field(default_factory=dict)
    evaluation: Evaluation | None = None
    judge_totals: JudgeTotals | None = None


def rel(path: str | Path) -> str:
    """A path relative to the working directory where it lies below it (short, portable), as posix."""
    p = Path(path)
    try:
        r = os.path.relpath(p)
        if not r.startswith(".."):
            return Path(r).as_posix()
    except ValueError:
        pass
    return p.as_posix()


def where(span: Span) -> str:
    lines = f"{span.start_line}" if span.start_line == span.end_line else f"{span.start_line}-{span.end_line}"
    return f"{rel(span.file)}:{lines}"


def resources(kernels: list[KernelArtifact]) -> str:
    """"64 regs, 16384 B smem, 0 B spills" (the worst instance where a template has several)."""
    if not kernels:
        return ""
    regs = max((k.registers or 0) for k in kernels)
    smem = max((k.smem_bytes or 0) for k in kernels)
    spills = max((k.spill_stores or 0) + (k.spill_loads or 0) for k in kernels)
    return f"{regs} regs, {smem} B smem, {spills} B spills"
