"""SARIF 2.1.0, so missing design items show up in code review tools (GitHub code scanning, IDEs).

One run per task (design-item ids are only unique within a task, and SARIF rule ids must be unique
within a run). Each missing item (final verdict absent, or partial) of each submission becomes one
result: ruleId = the design item id; the message says why it is missing (what the detectors found
instead, with lines) and what to do (:mod:`.explain`); the location is the line that matters, the
first line a detector points at (the load that is re-read, the scalar access), with every other
evidence line as a related location. Where no detector points at a line, the result sits on the
first line of the launched kernel. The rule's help holds the item's full guidance.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..model import Span, Verdict
from .explain import Explanation, explain
from .result import Report, SubmissionResult, rel

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL = "d2k-analyze"
LEVEL = {Verdict.ABSENT: "warning", Verdict.PARTIAL: "note"}


def _uri(path: str) -> str:
    r = rel(path)
    return Path(r).as_uri() if Path(r).is_absolute() else r


def _location(span: Span) -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": _uri(span.file)},
            "region": {"startLine": max(1, span.start_line), "endLine": max(1, span.end_line, span.start_line)},
        }
    }


def _kernel_lines(r: SubmissionResult) -> list[Span]:
    """The first line of each launched kernel (else of every kernel, else the submission's module)."""
    units = r.analysis.live_units or r.analysis.units
    if units:
        return [Span(ua.unit.span.file, ua.unit.span.start_line, ua.unit.span.start_line) for ua in units]
    path = Path(r.analysis.path)
    module = path / "submission.py" if path.is_dir() else path
    return [Span(str(module), 1, 1)]


def _spans(r: SubmissionResult, x: Explanation) -> list[Span]:
    """The evidence lines of the item's causes, in order and without repeats, then the kernels."""
    spans = list(dict.fromkeys(e.span for e in x.evidence))
    return spans + [k for k in _kernel_lines(r) if k not in spans]


def _rule(item, task_id: str) -> dict[str, Any]:
    return {
        "id": item.id,
        "name": item.id,
        "shortDescription": {"text": item.title},
        "fullDescription": {"text": item.guidance.strip()},
        "help": {"text": item.guidance.strip()},
        "defaultConfiguration": {"level": "warning"},
        "properties": {"task": task_id, "level": item.level, "weight": item.weight, "tags": ["performance", item.level]},
    }


def build(report: Report) -> dict[str, Any]:
    by_task: dict[str, list[SubmissionResult]] = {}
    for r in report.results:
        if r.score is not None and r.score.task in report.tasks:
            by_task.setdefault(r.score.task, []).append(r)
    runs = []
    for task_id, results in sorted(by_task.items()):
        task = report.tasks[task_id]
        index = {d.id: i for i, d in enumerate(task.design)}
        out = []
        for r in results:
            levels = {v.item: v.level for v in r.score.items}  # type: ignore[union-attr]
            for x in explain(r, task):
                spans = _spans(r, x)
                result: dict[str, Any] = {
                    "ruleId": x.item,
                    "ruleIndex": index[x.item],
                    "level": LEVEL[x.verdict],
                    "message": {"text": f"{x.item} ({levels[x.item]}) is {x.verdict.value}: {x.why()}. To do: {x.todo}"},
                    "locations": [_location(spans[0])],
                    "properties": {"submission": r.analysis.name, "verdict": x.verdict.value, "why": x.why(), "todo": x.todo},
                }
                if len(spans) > 1:
                    result["relatedLocations"] = [{"id": i, **_location(s)} for i, s in enumerate(spans[1:], 1)]
                out.append(result)
        runs.append({
            "tool": {"driver": {"name": TOOL, "rules": [_rule(d, task_id) for d in task.design]}},
            "automationDetails": {"id": f"d2k-analyze/{task_id}/"},
            "results": out,
        })
    if not runs:
        runs.append({"tool": {"driver": {"name": TOOL, "rules": []}}, "results": []})
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": runs}


def render(report: Report) -> str:
    return json.dumps(build(report), indent=2) + "\n"
