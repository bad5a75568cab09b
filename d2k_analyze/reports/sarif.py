"""SARIF 2.1.0, so missing design items show up in code review tools (GitHub code scanning, IDEs).

One run per task (design-item ids are only unique within a task, and SARIF rule ids must be unique
within a run). Each missing item (final verdict absent, or partial) of each submission becomes one
result: ruleId = the design item id, the message = the item's guidance, located at the launched
kernel's file and line span (other launched kernels as related locations).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..model import Span, Verdict
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


def _spans(r: SubmissionResult) -> list[Span]:
    """Where to point: launched kernels, else every kernel, else the submission's module."""
    units = r.analysis.live_units or r.analysis.units
    if units:
        return [ua.unit.span for ua in units]
    path = Path(r.analysis.path)
    module = path / "submission.py" if path.is_dir() else path
    return [Span(str(module), 1, 1)]


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
            spans = _spans(r)
            for v in r.score.items:  # type: ignore[union-attr]
                if v.final not in LEVEL:
                    continue
                item = task.design_item(v.item)
                result: dict[str, Any] = {
                    "ruleId": v.item,
                    "ruleIndex": index[v.item],
                    "level": LEVEL[v.final],
                    "message": {"text": f"{item.title} ({v.level}) is {v.final.value}: {item.guidance.strip()}"},
                    "locations": [_location(spans[0])],
                    "properties": {"submission": r.analysis.name, "verdict": v.final.value, "reason": v.reason},
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
