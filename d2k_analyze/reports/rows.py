"""The analyzer's result tables, behind JSON Lines, CSV and :func:`load_results`.

Tidy tables, one per kind of thing, each with its own columns (``docs/results.md`` documents every
column); a row's ``row_type`` says which table it belongs to:

* ``submission`` -> **submissions**: one per submission (score overall and per level, counts,
  compiled status, warnings and errors; with the judge, tokens and cost)
* ``item`` -> **items**: one per submission x design item (raw and final verdict, value, evidence;
  for a missing item, why and what to do; with the judge, its verdict, citations and rationale)
* ``unit`` -> **units**: one per kernel unit (where, launched, properties present, compiled resources)
* ``finding`` -> **findings**: one per kernel unit x property (status, confidence, layers, evidence)
* ``judge`` -> **judge**: one per judge request; ``discovery`` -> **discovery**: with a design.md
* ``eval_property`` / ``eval_layer`` / ``eval_miss`` -> **eval_properties** / **eval_layers** /
  **eval_misses**: with ``--eval-labels``

JSON Lines holds each row with its own table's columns only (compact: no columns of other tables);
CSV is one sheet, so it holds the union of the columns, empty where a column is not the row's.
Older files name the findings rows ``property``; readers accept both.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..model import Evidence, Status, Verdict
from .explain import explain
from .result import Report, SubmissionResult, rel, resources, where

KEYS = ["submission", "task", "path"]
UNIT_KEYS = ["unit", "language", "file", "start_line", "end_line", "launched"]
JUDGE_USAGE = ["model", "prompt_version", "input_tokens", "output_tokens", "cost_usd", "judge_error", "injection_flagged"]
EVAL_COUNTS = ["tp", "fp", "fn", "tn", "support"]

# row_type -> the table's columns (after row_type), in order. The one place a column is declared.
SCHEMAS: dict[str, list[str]] = {
    "submission": KEYS + ["score", "score_L1", "score_L2", "score_L3", "units", "live_units", "implemented", "partial",
                          "missing", "not_assessed", "compiled", "warnings", "errors", "static_score", *JUDGE_USAGE],
    "item": KEYS + ["item", "level", "weight", "title", "raw", "final", "value", "sources", "evidence", "reason", "why",
                    "todo", "static", "judge_verdict", "judge_stated", "judge_citations", "judge_rationale", "judge_note"],
    "unit": KEYS + UNIT_KEYS + ["present", "resources"],
    "finding": KEYS + UNIT_KEYS + ["property", "status", "confidence", "sources", "evidence", "reason"],
    "judge": KEYS + ["kind", "via", "cached", "attempts", *JUDGE_USAGE],
    "discovery": KEYS + ["item", "level", "proposed", "final", "outcome"],
    "eval_property": ["corpus", "property", "level", *EVAL_COUNTS, "precision", "recall", "f1"],
    "eval_layer": ["property", "layer", *EVAL_COUNTS, "f1", "accuracy", "decided", "undecided"],
    "eval_miss": ["submission", "path", "unit", "file", "property", "label", "predicted", "evidence", "reason"],
}
# The name each table has in :func:`load_results`.
TABLES = {"submission": "submissions", "item": "items", "unit": "units", "finding": "findings", "judge": "judge",
          "discovery": "discovery", "eval_property": "eval_properties", "eval_layer": "eval_layers", "eval_miss": "eval_misses"}
LEGACY_ROW_TYPES = {"property": "finding"}
# CSV: one sheet with every column of every table.
COLUMNS = ["row_type", *dict.fromkeys(c for cols in SCHEMAS.values() for c in cols)]


def _row(row_type: str, **values: Any) -> dict[str, Any]:
    schema = SCHEMAS[row_type]
    unknown = set(values) - set(schema)
    assert not unknown, f"{row_type}: columns not declared: {unknown}"
    return {"row_type": row_type, **{c: values.get(c) for c in schema}}


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
    g = r.judge.grade if r.judge is not None else None
    judge = {}
    if g is not None:
        judge = dict(
            static_score=r.static_score.overall if r.static_score else None, model=g.model,
            prompt_version=g.prompt_version, judge_error=g.error, injection_flagged=g.injection_flagged,
            input_tokens=sum(x.usage.input_tokens for x in r.judge.records),
            output_tokens=sum(x.usage.output_tokens for x in r.judge.records),
            cost_usd=None if any(x.cost_usd is None for x in r.judge.records) else sum(x.cost_usd for x in r.judge.records),
        )
    return _row("submission", **judge,
        submission=a.name, task=a.task, path=rel(a.path),
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
    static = {v.item: v.raw.value for v in r.static_score.items} if r.static_score else {}
    judged = r.judge.items if r.judge is not None else {}
    missing = {x.item: x for x in explain(r, task)} if task is not None else {}
    for v in r.score.items:
        x = missing.get(v.item)
        title = ""
        if task is not None:
            try:
                title = task.design_item(v.item).title
            except KeyError:
                pass
        yield _row(
            "item", submission=r.analysis.name, task=r.score.task, path=rel(r.analysis.path),
            item=v.item, level=v.level, weight=v.weight, title=title, raw=v.raw.value, final=v.final.value,
            value=v.final.value01, sources=";".join(v.sources), evidence=evidence_text(v.evidence), reason=v.reason,
            why=x.why() if x else None, todo=x.todo if x else None,
            **_judge_item(static.get(v.item), judged.get(v.item)),
        )


def _judge_item(static: str | None, ij) -> dict[str, Any]:
    if ij is None:
        return {"static": static}
    return dict(
        static=static, judge_verdict=ij.verdict.value, judge_stated=ij.stated.value,
        judge_citations="; ".join(c.text() for c in ij.citations), judge_rationale=ij.rationale, judge_note=ij.note,
    )


def judge_rows(r: SubmissionResult) -> Iterator[dict[str, Any]]:
    if r.judge is None:
        return
    for g in r.judge.records:
        yield _row(
            "judge", submission=r.analysis.name, task=r.analysis.task, path=rel(r.analysis.path),
            kind=g.kind, model=g.model, prompt_version=g.prompt_version, via=g.via, cached=g.cached,
            attempts=g.attempts, input_tokens=g.usage.input_tokens, output_tokens=g.usage.output_tokens,
            cost_usd=g.cost_usd, judge_error=g.error, injection_flagged=g.injection_flagged,
        )


def discovery_rows(r: SubmissionResult) -> Iterator[dict[str, Any]]:
    from ..judge.discovery import discovery_rows as classify

    if r.judge is None or not r.judge.proposed or r.score is None:
        return
    for d in classify(r.judge.proposed, r.score):
        yield _row(
            "discovery", submission=r.analysis.name, task=r.score.task, path=rel(r.analysis.path),
            item=d.item, level=d.level, proposed=d.proposed.value, final=d.implemented.value, outcome=d.outcome,
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
        yield _row("unit", present=";".join(present), resources=resources(r.kernels.get(u.name, [])), **common)
        for prop, f in ua.findings.items():
            yield _row(
                "finding", property=prop, status=f.status.value, confidence=f.confidence,
                sources=";".join(dict.fromkeys(e.layer for e in f.evidence)), evidence=evidence_text(f.evidence),
                reason=f.reason, **common,
            )


def eval_rows(report: Report) -> Iterator[dict[str, Any]]:
    ev = report.evaluation
    if ev is None:
        return
    for part in ev.parts or [ev]:
        for s in part.scores:
            yield _row(
                "eval_property", corpus=part.corpus, property=s.property, level=s.level, tp=s.tp, fp=s.fp, fn=s.fn, tn=s.tn,
                support=s.support, precision=s.precision, recall=s.recall, f1=s.f1,
            )
    if ev.layers is not None:
        for ls in ev.layers.scores:
            yield _row(
                "eval_layer", property=ls.key, layer=ls.layer, tp=ls.tp, fp=ls.fp, fn=ls.fn, tn=ls.tn,
                support=ls.support, f1=ls.f1, accuracy=ls.accuracy, decided=ls.decided, undecided=ls.undecided,
            )
    for m in ev.misses:
        yield _row(
            "eval_miss", submission=m.folder, path=rel(m.folder), unit=m.unit, file=m.file,
            property=m.property, label=m.label, predicted=m.predicted, evidence=evidence_text(m.evidence),
            reason=m.reason,
        )


def rows(report: Report) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for r in report.results:
        out.append(submission_row(r))
        out += item_rows(r, report)
        out += judge_rows(r)
        out += discovery_rows(r)
        out += unit_rows(r)
    out += eval_rows(report)
    return out
