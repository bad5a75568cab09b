"""The human-readable report as a format-neutral list of blocks.

The terminal, Markdown and HTML reports show the same things; building the content once here and
rendering it three ways (``terminal.py``, ``markdown.py``, ``html_page.py``) keeps them in step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import Status, Verdict
from .result import Report, SubmissionResult, rel, resources, where

MAX_WARNINGS = 8


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Bullets:
    items: list[str]


@dataclass(frozen=True)
class Table:
    headers: list[str]
    rows: list[list[str]]
    title: str = ""
    # Cell values the renderers colour: verdicts and statuses.
    styled: tuple[int, ...] = field(default=())


Block = Heading | Paragraph | Bullets | Table


def fmt_score(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def score_line(r: SubmissionResult) -> str:
    s = r.score
    if s is None:
        task = r.analysis.task
        return f"task: {task} (unknown task: properties only)" if task else "task: unknown (properties only)"
    levels = " · ".join(f"{lvl} {fmt_score(s.per_level.get(lvl))}" for lvl in ("L1", "L2", "L3"))
    return f"task: {s.task} · implementation score: {fmt_score(s.overall)} ({levels})"


def summary_table(report: Report) -> Table:
    rows = []
    for r in report.results:
        s = r.score
        missing = [v.item for v in s.items if v.final == Verdict.ABSENT] if s else []
        rows.append([
            rel(r.analysis.path), r.analysis.task or "—", fmt_score(s.overall if s else None),
            *(fmt_score(s.per_level.get(lvl)) if s else "—" for lvl in ("L1", "L2", "L3")),
            str(len(r.analysis.live_units)) + "/" + str(len(r.analysis.units)),
            ", ".join(missing) or ("—" if s else "(no task)"),
        ])
    return Table(["Submission", "Task", "Score", "L1", "L2", "L3", "Live kernels", "Missing items"], rows, "Summary")


def items_table(r: SubmissionResult) -> Table:
    assert r.score is not None
    rows = []
    for v in r.score.items:
        first = where(v.evidence[0].span) if v.evidence else ""
        note = v.reason.split("; ")[-1] if "prerequisite" in v.reason else ""
        rows.append([v.item, v.level, f"{v.weight:g}", v.final.value, first, note])
    return Table(["Design item", "Level", "Weight", "Verdict", "Evidence", "Note"], rows, "Design items", styled=(3,))


def units_table(r: SubmissionResult) -> Table:
    rows = []
    for ua in r.analysis.units:
        u = ua.unit
        present = [p for p, f in ua.findings.items() if f.status == Status.PRESENT]
        refuted = [p for p, f in ua.findings.items() if f.reason.startswith("refuted")]
        upgraded = [p for p, f in ua.findings.items() if f.reason.startswith("upgraded")]
        notes = [f"refuted by compiled code: {', '.join(refuted)}"] if refuted else []
        notes += [f"confirmed only by compiled code: {', '.join(upgraded)}"] if upgraded else []
        rows.append([
            u.name, u.language, where(u.span), "launched" if u.launched else "dead",
            ", ".join(present) or "—", resources(r.kernels.get(u.name, [])), "; ".join(notes),
        ])
    return Table(["Kernel", "Lang", "Where", "Live", "Properties present", "Compiled", "Notes"], rows, "Kernels", styled=(3,))


def submission_blocks(r: SubmissionResult) -> list[Block]:
    a = r.analysis
    blocks: list[Block] = [Heading(2, rel(a.path)), Paragraph(score_line(r))]
    if r.compiled:
        blocks.append(Paragraph(r.compiled))
    if r.score is not None:
        blocks.append(items_table(r))
        if r.score.not_assessed:
            blocks.append(Paragraph(
                "Not assessed (no static layer could decide; the LLM judge fills these in): "
                + ", ".join(r.score.not_assessed)
            ))
    if a.units:
        blocks.append(units_table(r))
    else:
        blocks.append(Paragraph("No kernel found."))
    issues = [f"error: {e}" for e in a.errors] + a.warnings
    if issues:
        shown = issues[:MAX_WARNINGS]
        if len(issues) > MAX_WARNINGS:
            shown.append(f"... and {len(issues) - MAX_WARNINGS} more")
        blocks.append(Bullets(shown))
    return blocks


def evaluation_blocks(report: Report) -> list[Block]:
    ev = report.evaluation
    if ev is None:
        return []
    f = lambda x: "—" if x is None else f"{x:.2f}"  # noqa: E731
    rows = [
        [s.property, s.level, str(s.support), str(s.tp), str(s.fp), str(s.fn), f(s.precision), f(s.recall), f(s.f1)]
        for s in ev.scores
    ]
    blocks: list[Block] = [
        Heading(2, "Detectors against the corpus labels"),
        Paragraph(
            f"{ev.folders} labelled folders, {ev.kernels} kernels; macro-F1 over properties with support: "
            f"{f(ev.macro_f1)}; {ev.skipped} labelled pairs skipped (not applicable / no finding)"
        ),
        Table(["Property", "Level", "Support", "TP", "FP", "FN", "Precision", "Recall", "F1"], rows, "Per property"),
    ]
    if ev.misses:
        miss_rows = [
            [rel(m.folder), m.unit, m.property, str(m.label), str(m.predicted),
             "; ".join(dict.fromkeys(where(e.span) for e in m.evidence)), m.reason[:160]]
            for m in ev.misses
        ]
        blocks.append(Table(["Folder", "Kernel", "Property", "Label", "Predicted", "Evidence", "Reason"], miss_rows, "Misclassified"))
    if ev.problems:
        blocks.append(Bullets(ev.problems[:50] + ([f"... and {len(ev.problems) - 50} more"] if len(ev.problems) > 50 else [])))
    return blocks


def build(report: Report) -> list[Block]:
    n = len(report.results)
    blocks: list[Block] = [Heading(1, "D2K-Bench static analysis")]
    blocks.append(Paragraph(f"{n} submission{'s' if n != 1 else ''}, {sum(len(r.analysis.units) for r in report.results)} kernel units"))
    if n > 1:
        blocks.append(summary_table(report))
    blocks += evaluation_blocks(report)
    for r in report.results:
        blocks += submission_blocks(r)
    return blocks
