"""The human-readable report as a format-neutral list of blocks.

The terminal, Markdown and HTML reports show the same things; building the content once here and
rendering it three ways (``terminal.py``, ``markdown.py``, ``html_page.py``) keeps them in step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import Status, Verdict
from .explain import explain, lines_text
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
    line = f"task: {s.task} · implementation score: {fmt_score(s.overall)} ({levels})"
    if r.judge is not None and r.static_score is not None:
        line += f" · static layers alone: {fmt_score(r.static_score.overall)}"
    return line


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
    if r.judge is not None:
        return judged_items_table(r)
    rows = []
    for v in r.score.items:
        note = v.reason.split("; ")[-1] if "prerequisite" in v.reason else ""
        rows.append([v.item, v.level, f"{v.weight:g}", v.final.value, lines_text(v.evidence), note])
    return Table(["Design item", "Level", "Weight", "Verdict", "Evidence", "Note"], rows, "Design items", styled=(3,))


def missing_block(r: SubmissionResult, report: Report) -> list[Block]:
    """Each missing item: why (what was found instead, with its lines) and what to do."""
    task = report.tasks.get(r.score.task) if r.score is not None else None
    explanations = explain(r, task) if task is not None else []
    if not explanations:
        return []
    return [Paragraph("Missing design items: why, and what to do"),
            Bullets([f"{x.item} ({x.verdict.value}): {x.why()}. To do: {x.todo}" for x in explanations])]


def judged_items_table(r: SubmissionResult) -> Table:
    """Static, judge and combined verdict side by side, with the judge's citations and rationale."""
    static = {v.item: v.raw.value for v in r.static_score.items} if r.static_score else {}
    rows = []
    for v in r.score.items:
        ij = r.judge.items.get(v.item)
        judge = ij.verdict.value if ij else "—"
        cites = "; ".join(c.text() for c in ij.citations) if ij else ""
        notes = [x for x in (ij.note if ij else "", v.reason.split("; ")[-1] if "prerequisite" in v.reason else "") if x]
        rationale = (ij.rationale if ij else "")[:300]
        static_evidence = lines_text(tuple(e for e in v.evidence if e.layer != "judge"))
        rows.append([v.item, v.level, f"{v.weight:g}", static.get(v.item, "—"), judge, v.final.value, static_evidence,
                     cites, rationale, "; ".join(notes)])
    return Table(["Design item", "Level", "Weight", "Static", "Judge", "Combined", "Evidence", "Judge cites",
                  "Judge rationale", "Note"], rows, "Design items", styled=(3, 4, 5))


def judge_paragraph(r: SubmissionResult) -> Paragraph:
    parts = []
    for g in r.judge.records:
        cost = "cost unknown" if g.cost_usd is None else f"${g.cost_usd:.4f}"
        state = f"ERROR: {g.error}" if g.error else ("from cache" if g.cached else f"{g.attempts} request(s) via {g.via}")
        flag = "; the judge flagged text addressed to it" if g.injection_flagged else ""
        parts.append(f"{g.kind}: {g.model}, {g.prompt_version}, {g.usage.input_tokens}+{g.usage.output_tokens} tokens, "
                     f"{cost}, {state}{flag}")
    return Paragraph("Judge: " + " | ".join(parts))


def discovery_blocks(r: SubmissionResult) -> list[Block]:
    from ..judge.discovery import discovery_rows, per_level

    if r.judge is None or not r.judge.proposed or r.score is None:
        return []
    rows = discovery_rows(r.judge.proposed, r.score)
    table = Table(["Design item", "Level", "Proposed in design.md", "Implemented", "Outcome"],
                  [[d.item, d.level, d.proposed.value, d.implemented.value, d.outcome.replace("_", " ")] for d in rows],
                  "Design discovery (design.md)", styled=(2, 3))
    counts = per_level(rows)
    summary = Table(["Level", "Proposed and implemented", "Proposed, not implemented", "Implemented, not proposed", "Neither"],
                    [[lvl, *(str(c[k]) for k in ("proposed_and_implemented", "proposed_not_implemented",
                                                  "implemented_not_proposed", "neither"))] for lvl, c in counts.items()],
                    "Design discovery per level")
    return [table, summary]


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


def submission_blocks(r: SubmissionResult, report: Report) -> list[Block]:
    a = r.analysis
    blocks: list[Block] = [Heading(2, rel(a.path)), Paragraph(score_line(r))]
    if r.compiled:
        blocks.append(Paragraph(r.compiled))
    if r.judge is not None:
        blocks.append(judge_paragraph(r))
    if r.score is not None:
        blocks.append(items_table(r))
        blocks += missing_block(r, report)
        blocks += discovery_blocks(r)
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


CORPUS_TITLES = {
    "all": "Detectors against the corpus labels",
    "hand-written": "Detectors against the hand-written corpus (labelled naive / optimized / expert)",
    "wild": "Detectors against real public kernels (corpus/wild, core properties)",
}


def evaluation_blocks(report: Report) -> list[Block]:
    ev = report.evaluation
    if ev is None:
        return []
    f = lambda x: "—" if x is None else f"{x:.2f}"  # noqa: E731
    blocks: list[Block] = []
    for part in ev.parts or [ev]:
        rows = [
            [s.property, s.level, str(s.support), str(s.tp), str(s.fp), str(s.fn), f(s.precision), f(s.recall), f(s.f1)]
            for s in part.scores
        ]
        blocks += [
            Heading(2, CORPUS_TITLES.get(part.corpus, CORPUS_TITLES["all"])),
            Paragraph(
                f"{part.folders} labelled folders, {part.kernels} kernels; macro-F1 over properties with support: "
                f"{f(part.macro_f1)}; {part.skipped} labelled pairs skipped (not applicable / no finding)"
            ),
            Table(["Property", "Level", "Support", "TP", "FP", "FN", "Precision", "Recall", "F1"], rows, "Per property"),
        ]
    if ev.layers is not None and ev.layers.scores:
        blocks += layer_blocks(ev.layers, f)
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


def layer_blocks(layers, f) -> list[Block]:
    """Design-item verdicts of each layer against the labels: is the judge worth its cost?"""
    from ..eval_labels import LAYERS

    keys = list(dict.fromkeys(s.key for s in layers.scores))
    by = {(s.key, s.layer): s for s in layers.scores}
    rows = []
    for key in keys:
        row = [key, str(by[(key, "static")].support)]
        for layer in LAYERS:
            s = by[(key, layer)]
            row += [f(s.f1), f"{s.decided}/{s.decided + s.undecided}"]
        rows.append(row)
    headers = ["Property", "Support"] + [h for layer in LAYERS for h in (f"F1 {layer}", f"decided {layer}")]
    macro = ", ".join(f"{layer} {f(layers.macro_f1(layer))}" for layer in LAYERS)
    note = "" if layers.judged else " (no judge in this run: judge-only verdicts are all undecided)"
    return [
        Paragraph(f"Design items against the labels, per layer: {layers.items} labelled items; macro-F1: {macro}{note}"),
        Table(headers, rows, "Per layer (positive class: implemented)"),
    ]


def build(report: Report) -> list[Block]:
    n = len(report.results)
    blocks: list[Block] = [Heading(1, "D2K-Bench static analysis")]
    units = sum(len(r.analysis.units) for r in report.results)
    blocks.append(Paragraph(f"{n} submission{'s' if n != 1 else ''}, {units} kernel unit{'s' if units != 1 else ''}"))
    if report.judge_totals is not None:
        blocks.append(Paragraph(report.judge_totals.line()))
    if n > 1:
        blocks.append(summary_table(report))
    blocks += evaluation_blocks(report)
    for r in report.results:
        blocks += submission_blocks(r, report)
    return blocks
