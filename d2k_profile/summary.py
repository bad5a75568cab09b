"""Per-submission summary of a results file: correctness, geomean speedups, Performance Score.

The rules (correct = ok on every workload the task requires, speedup = geomean over them, the
Performance Score, smoke checks) are :mod:`d2k_spec.run_metrics`', shared with ``d2k-report``;
this module only turns records into its inputs and prints the table. The table is printed with
rich when it is installed and as plain text otherwise (the GPU machines may lack rich).
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Mapping, TextIO

from d2k_spec import run_metrics
from d2k_spec.task import Task

from .results import Record, Status


@dataclass
class SubmissionSummary:
    task: str
    submission: str
    role: str
    mode: str
    workloads: int
    ok: int
    statuses: str
    correct: bool
    speedup_vs_reference: float | None
    speed_vs_expert: float | None
    performance_score: int | None
    weak_workloads: list[str] = field(default_factory=list)
    first_problem: str = ""
    scope: str = "task"  # "task": every timed workload required; "smoke": a smoke check (run_metrics)


def summarize(records: list[Record], reference_is_expert: dict[str, bool] | None = None,
              tasks: Mapping[str, Task] | None = None) -> list[SubmissionSummary]:
    """One row per (task, submission path, mode), from the latest record of each workload. With
    ``tasks`` (id -> spec), every workload the task requires counts, run or not; without, only the
    recorded ones."""
    latest: dict[str, Record] = {}
    for r in records:
        latest[r.key] = r
    groups: dict[tuple, list[Record]] = {}
    for r in latest.values():
        groups.setdefault((r.task, r.path, r.mode), []).append(r)
    rows = []
    for (task, _path, mode), recs in sorted(groups.items()):
        recs.sort(key=lambda r: r.workload)
        spec = (tasks or {}).get(task)
        m = run_metrics.submission_metrics(
            {r.workload: run_metrics.WorkloadResult(r.workload, r.status == Status.OK, r.speedup_vs_reference, r.speedup_vs_expert) for r in recs},
            timed=mode != "cpu", task_workloads=[w.name for w in spec.workloads] if spec else None,
            smoke_workload=spec.smoke.name if spec else None,
            reference_is_expert=spec.baseline.reference_is_expert if spec else (reference_is_expert or {}).get(task, False),
            is_expert=recs[0].role == "expert",
        )
        problem = next((f"{r.workload}: {r.status.value}: {r.reason.splitlines()[-1] if r.reason else ''}" for r in recs if r.status != Status.OK), "")
        if m.not_run:
            problem = problem or f"not run: {', '.join(m.not_run)}"
        rows.append(SubmissionSummary(
            task, recs[0].submission, recs[0].role, mode, len(m.required), m.ok,
            ", ".join(f"{k} {v}" for k, v in Counter(r.status.value for r in recs).most_common()),
            m.correct, m.speedup_vs_reference, m.speed_vs_expert, m.performance_score,
            sorted({f"{r.workload} ({'/'.join(r.weak_workload)})" for r in recs if r.weak_workload}), problem, m.scope,
        ))
    return rows


def write_csv(rows: list[SubmissionSummary], path: Path) -> None:
    """The summary as CSV (loads with ``pandas.read_csv``), written atomically (a killed run leaves
    the previous summary or the new one, never half of one: :func:`d2k_spec.outputs.write_text`)."""
    from d2k_spec.outputs import write_text

    buf = io.StringIO()
    fields = list(asdict(rows[0]).keys()) if rows else ["task"]
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for r in rows:
        d = asdict(r)
        d["weak_workloads"] = "; ".join(r.weak_workloads)
        w.writerow(d)
    write_text(Path(path), buf.getvalue())


def _fmt(x: float | None, spec: str = ".2f") -> str:
    return "-" if x is None else format(x, spec)


COLUMNS = ("task", "submission", "ok", "statuses", "speedup×ref", "vs expert", "score", "first problem")


def table_rows(rows: list[SubmissionSummary]) -> list[tuple[str, ...]]:
    return [
        (r.task, r.submission, f"{r.ok}/{r.workloads}", r.statuses, _fmt(r.speedup_vs_reference), _fmt(r.speed_vs_expert),
         "-" if r.performance_score is None else str(r.performance_score), r.first_problem)
        for r in rows
    ]


def print_table(rows: list[SubmissionSummary], out: TextIO | None = None) -> None:
    """The one place a table is printed: rich if available, else aligned plain text."""
    body = table_rows(rows)
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        import sys

        out = out or sys.stdout
        widths = [max(len(c), *(len(row[i]) for row in body)) if body else len(c) for i, c in enumerate(COLUMNS)]
        for row in [COLUMNS, *body]:
            out.write("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() + "\n")
        return
    table = Table(title="d2k-profile summary")
    for c in COLUMNS:
        table.add_column(c, overflow="fold")
    for row in body:
        table.add_row(*row)
    Console(file=out, width=180).print(table)
