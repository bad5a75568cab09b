"""The flat table behind JSON Lines, CSV and :func:`load_results`.

One table, several row kinds told apart by ``row_type`` (so ``df[df.row_type == "item"]`` is the
submission x design-item table):

* ``submission``: one per submission (score overall and per level, counts, compiled status)
* ``item``: one per submission x design item (raw and final verdict, value, evidence, reason)
* ``unit``: one per kernel unit (where, launched, properties present, compiled resources)
* ``property``: one per kernel unit x property finding (status, confidence, layers, evidence)
* ``eval_property`` / ``eval_miss``: with ``--eval-labels``, per-property metrics and disagreements

Every row has every column (None where it does not apply), so CSV and pandas agree.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..model import Evidence, Status, Verdict
from .result import Report, SubmissionResult, rel, resources, where

COLUMNS = [
    "row_type", "submission", "task", "path",
    # submission
    "score", "score_L1", "score_L2", "score_L3", "units", "live_units",
    "implemented", "partial", "missing", "not_assessed", "compiled", "warnings", "errors",
    # item
    "item", "level", "weight", "title", "raw", "final", "value",
    # unit / property
    "unit", "language", "file", "start_line", "end_line", "launched", "present", "resources",
    "property", "status", "confidence",
    # shared detail
    "sources", "evidence", "reason",
    # evaluation
    "tp", "fp", "fn", "tn", "support", "precision", "recall", "f1", "label", "predicted",
]


def _row(**values: Any) -> dict[str, Any]:
    unknown = set(values) - set(COLUMNS)
    assert not unknown, f"columns not declared: {unknown}"
    return {c: values.get(c) for c in COLUMNS}


def evidence_text(evidence: tuple[Evidence, ...]) -> str:
    """``file:12-18 (syntax)`` per distinct location, joined by '; '."""
    seen = dict.fromkeys(f"{where(e.span)} ({e.layer})" for e in evidence)
    return "; ".join(seen)


def _verdict_ids(result: SubmissionResult, *verdicts: Verdict) -> str:
    if result.score is None:
        return ""
    return ";".join(v.item for v in result.score.items if v.final in verdicts)


def submission_row(r: SubmissionResult) -> dict[str, Any]:
    a, s = r.analysis, r.score
    return _row(
        row_type="submission", submission=a.name, task=a.task, path=rel(a.path),
        score=s.overall if s else None,
        score_L1=s.per_level.get("L1") if s else None,
        score_L2=s.per_level.get("L2") if s else None,
        score_L3=s.per_level.get("L3") if s else None,
        units=len(a.units), live_units=len(a.live_units),
        implemented=_verdict_ids(r, Verdict.IMPLEMENTED), partial=_verdict_ids(r, Verdict.PARTIAL),
        missing=_verdict_ids(r, Verdict.ABSENT), not_assessed=";".join(s.not_assessed) if s else "",
        compiled=r.compiled, warnings=" | ".join(a.warnings), errors=" | ".join(a.errors),
    )


def item_rows(r: SubmissionResult, report: Report) -> Iterator[dict[str, Any]]:
    if r.score is None:
        return
    task = report.tasks.get(r.score.task)
    for v in r.score.items:
        title = ""
        if task is not None:
            try:
                title = task.design_item(v.item).title
            except KeyError:
                pass
        yield _row(
            row_type="item", submission=r.analysis.name, task=r.score.task, path=rel(r.analysis.path),
            item=v.item, level=v.level, weight=v.weight, title=title, raw=v.raw.value, final=v.final.value,
            value=v.final.value01, sources=";".join(v.sources), evidence=evidence_text(v.evidence), reason=v.reason,
        )


def unit_rows(r: SubmissionResult) -> Iterator[dict[str, Any]]:
    a = r.analysis
    for ua in a.units:
        u = ua.unit
        common = dict(
            submission=a.name, task=a.task, path=rel(a.path), unit=u.name, language=u.language,
            file=rel(u.file), start_line=u.span.start_line, end_line=u.span.end_line, launched=u.launched,
        )
        present = [p for p, f in ua.findings.items() if f.status == Status.PRESENT]
        yield _row(row_type="unit", present=";".join(present), resources=resources(r.kernels.get(u.name, [])), **common)
        for prop, f in ua.findings.items():
            yield _row(
                row_type="property", property=prop, status=f.status.value, confidence=f.confidence,
                sources=";".join(dict.fromkeys(e.layer for e in f.evidence)), evidence=evidence_text(f.evidence),
                reason=f.reason, **common,
            )


def eval_rows(report: Report) -> Iterator[dict[str, Any]]:
    ev = report.evaluation
    if ev is None:
        return
    for s in ev.scores:
        yield _row(
            row_type="eval_property", property=s.property, level=s.level, tp=s.tp, fp=s.fp, fn=s.fn, tn=s.tn,
            support=s.support, precision=s.precision, recall=s.recall, f1=s.f1,
        )
    for m in ev.misses:
        yield _row(
            row_type="eval_miss", submission=m.folder, path=rel(m.folder), unit=m.unit, file=m.file,
            property=m.property, label=m.label, predicted=m.predicted, evidence=evidence_text(m.evidence),
            reason=m.reason,
        )


def rows(report: Report) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for r in report.results:
        out.append(submission_row(r))
        out += item_rows(r, report)
        out += unit_rows(r)
    out += eval_rows(report)
    return out
