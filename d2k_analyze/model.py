"""The analyzer's records: what flows from parsing to detectors to scoring to reports.

    SourceFile --parse--> KernelUnit --detectors--> PropertyFinding(Evidence...)
    Submission + Task --scoring--> ItemVerdict --> SubmissionScore --> reports

Everything here is plain data (frozen dataclasses) so reports, the JSON Lines output and pandas
tables are straight conversions, and layers (syntax, compiled, judge) exchange nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Literal

Language = Literal["cuda", "triton"]
Layer = Literal["syntax", "compiled", "judge"]
Confidence = Literal["high", "medium", "low"]


class Status(str, Enum):
    """A property's state in one kernel unit."""

    PRESENT = "present"
    ABSENT = "absent"
    NOT_APPLICABLE = "not_applicable"  # the source cannot decide it (e.g. Triton conventions)


class Verdict(str, Enum):
    """A design item's state in one submission."""

    IMPLEMENTED = "implemented"
    PARTIAL = "partial"
    ABSENT = "absent"
    NOT_ASSESSED = "not_assessed"  # no layer could decide it

    @property
    def value01(self) -> float | None:
        return {"implemented": 1.0, "partial": 0.5, "absent": 0.0}.get(self.value)


@dataclass(frozen=True)
class Span:
    """1-based inclusive line span in ``file`` (for embedded CUDA: lines of the Python file)."""

    file: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class Evidence:
    """Where a property shows, and how sure the layer that found it is."""

    span: Span
    snippet: str
    layer: Layer
    confidence: Confidence
    detail: str = ""


@dataclass(frozen=True)
class SourceFile:
    """A file the analyzer read. ``text`` is None when it could not be read (``error`` says why)."""

    path: Path
    kind: Literal["cuda", "python", "other"]
    text: str | None
    error: str | None = None


@dataclass
class KernelUnit:
    """One kernel with the device helpers it calls.

    ``code_lines`` are the lines that count as live code of this unit (comments, strings and
    constexpr-dead branches removed), used by detectors and by the judge's citation check.
    ``launch_constants`` are the constexpr/template values seen at its launch sites.
    """

    name: str
    language: Language
    file: str
    span: Span
    source: str  # the unit's text, including helper bodies
    helpers: list[str] = field(default_factory=list)
    launched: bool = False
    launch_sites: list[Span] = field(default_factory=list)
    launch_constants: dict[str, object] = field(default_factory=dict)
    code_lines: set[int] = field(default_factory=set)
    parse_warnings: list[str] = field(default_factory=list)
    # Parser-specific handles (tree-sitter nodes, libcst trees); never serialised.
    ast: object = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class PropertyFinding:
    """``error`` names the kind of internal failure behind a finding ("detector": the detector
    raised); None for every honest finding, including "cannot be decided" ones."""

    property: str
    status: Status
    confidence: Confidence
    evidence: tuple[Evidence, ...] = ()
    reason: str = ""
    error: str | None = None


@dataclass(frozen=True)
class ItemVerdict:
    """A task design item judged for one submission, before and after dependency capping."""

    item: str
    level: str
    weight: float
    raw: Verdict
    final: Verdict
    sources: tuple[Layer, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class SubmissionScore:
    """0-100 implementation score overall and per level; None where nothing was assessed."""

    submission: str
    task: str
    overall: float | None
    per_level: dict[str, float | None]
    items: tuple[ItemVerdict, ...]
    not_assessed: tuple[str, ...] = ()


@dataclass
class UnitAnalysis:
    """A kernel unit with the finding of every catalogue property that applies to its language."""

    unit: KernelUnit
    findings: dict[str, PropertyFinding]


@dataclass
class SubmissionAnalysis:
    """Everything the static layers found in one submission folder (or standalone file).

    ``task`` is the task id inferred from the layout (``corpus/<task>/...``, ``runs/<run>/<task>/...``,
    ``tasks/<task>/expert``) or given with ``--task``; None when unknown. ``warnings`` are
    user-facing messages (file:line: what), ``errors`` are files that could not be analysed.
    """

    name: str
    path: Path
    task: str | None
    units: list[UnitAnalysis]
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def live_units(self) -> list[UnitAnalysis]:
        return [u for u in self.units if u.unit.launched]
