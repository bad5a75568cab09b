"""Why a design item is missing, where, and what to do: what an auditor reads first.

A missing item (final verdict absent or partial) is explained from what the analysis already
holds, never guessed:

* its **causes**: for each of the item's properties that a launched kernel lacks, the detector's
  reason and the lines it points at ("an input is loaded again in a later pass", lines 43 and 47:
  what was found instead of the property); with the judge on, the judge's rationale;
* the **prerequisites** that capped it (an item is worth no more than what it depends on);
* what **to do**: the item's guidance in short (its title; the full text is the task's guidance).

Every renderer (terminal, Markdown, HTML, SARIF, the JSON Lines ``items`` table) uses
:func:`explain`, so they say the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass

from d2k_spec.task import DesignItem, Task

from ..model import Evidence, Status, Verdict
from .result import SubmissionResult, rel

MISSING = (Verdict.ABSENT, Verdict.PARTIAL)


@dataclass(frozen=True)
class Cause:
    """One reason an item is missing: a property a launched kernel lacks (or the judge's word)."""

    property: str  # catalogue property id, or "judge"
    unit: str  # the kernel that lacks it ("" for the judge or the whole submission)
    reason: str
    evidence: tuple[Evidence, ...] = ()

    def text(self) -> str:
        where = lines_text(self.evidence)
        who = f"{self.property} in {self.unit}" if self.unit else self.property
        return f"{who}: {self.reason or 'not found'}" + (f" ({where})" if where else "")


@dataclass(frozen=True)
class Explanation:
    item: str
    verdict: Verdict
    causes: tuple[Cause, ...]
    capped_by: tuple[str, ...]
    todo: str
    guidance: str

    @property
    def evidence(self) -> tuple[Evidence, ...]:
        """The lines that matter, in cause order (what a code-review tool points at)."""
        return tuple(e for c in self.causes for e in c.evidence)

    def why(self) -> str:
        parts = [c.text() for c in self.causes]
        if self.capped_by:
            parts.append("capped by prerequisite " + ", ".join(f"'{d}'" for d in self.capped_by))
        return "; ".join(parts) or "no launched kernel shows it"


def lines_text(evidence: tuple[Evidence, ...]) -> str:
    """Every evidence location, grouped by file: ``kernel.cu:22, 30, 38-41; other.cu:7``."""
    by_file: dict[str, list[tuple[int, int]]] = {}
    for e in evidence:
        spans = by_file.setdefault(rel(e.span.file), [])
        span = (e.span.start_line, max(e.span.end_line, e.span.start_line))
        if span not in spans:
            spans.append(span)
    parts = []
    for file, spans in by_file.items():
        shown = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in sorted(spans))
        parts.append(f"{file}:{shown}")
    return "; ".join(parts)


def _property_causes(r: SubmissionResult, prop: str) -> list[Cause]:
    """The launched kernels that lack ``prop``, with the detector's reason and lines; none if a
    launched kernel has it (then it is not why the item is missing)."""
    live = r.analysis.live_units
    if not live:
        return [Cause(prop, "", "no kernel is launched" if r.analysis.units else "no kernel in the submission")]
    findings = [(ua.unit.name, ua.findings.get(prop)) for ua in live]
    if any(f is not None and f.status == Status.PRESENT for _, f in findings):
        return []
    return [Cause(prop, name, f.reason, f.evidence) for name, f in findings if f is not None and f.status == Status.ABSENT]


def _judge_cause(r: SubmissionResult, item: str) -> list[Cause]:
    ij = r.judge.items.get(item) if r.judge is not None else None
    if ij is None or ij.verdict not in MISSING or not ij.rationale:
        return []
    return [Cause("judge", "", ij.rationale)]


def short_guidance(item: DesignItem) -> str:
    """The guidance in one line: the item's title (the full text stays in the task spec)."""
    return item.title.strip() or " ".join(item.guidance.split())[:200]


def explain(r: SubmissionResult, task: Task) -> list[Explanation]:
    """One :class:`Explanation` per missing design item of the submission, in the task's order."""
    if r.score is None:
        return []
    final = {v.item: v.final for v in r.score.items}
    out = []
    for v in r.score.items:
        if v.final not in MISSING:
            continue
        try:
            item = task.design_item(v.item)
        except KeyError:
            continue
        causes = [c for p in item.properties for c in _property_causes(r, p)] + _judge_cause(r, v.item)
        raw = v.raw.value01
        capped = tuple(d for d in item.depends_on
                       if raw is not None and final.get(d) is not None and final[d].value01 is not None
                       and final[d].value01 < raw)
        out.append(Explanation(v.item, v.final, tuple(causes), capped, short_guidance(item), item.guidance.strip()))
    return out
