"""Run metrics, defined once: correctness, speedups, Performance Score, fast_p and the suite size.

``d2k-profile``'s summary and ``d2k-report`` both compute them here, so a submission is correct,
and a run scores, the same way in both (docs/report.md states the rules in words):

* **Correct**: an ``ok`` result on *every* workload the task requires. A workload with no result
  (a ``--workloads`` subset, a killed run) leaves correctness unproven: not correct.
* **Scope**: a GPU run is checked against every timed workload of the task; a smoke check (CPU
  mode, or ``--smoke``: nothing but the smoke workload was run) against the smoke workload only.
  A smoke check has no timing and so no Performance Score, and it does not make a task correct in
  the run metrics (:attr:`TaskMetrics.task_correct`).
* **Speedup** of a task: geometric mean over its workloads of reference time / submission time.
* **Performance Score** of a task, 0-3: 0 if not correct, else 1 + [speedup > 1] + [speed >= 0.95 x
  the expert's]; where the reference is the expert library the speed against the expert is the
  speedup over the reference, and the two bonuses are judged independently.
* A **run**'s Performance Score and fast_p average over every task of the suite, a missing task
  counting 0; the suite is the task folders (:func:`suite_size`), not a hard-coded number.

Pure functions over plain values: no torch, no file formats (the callers turn their records into
:class:`WorkloadResult`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Literal, Mapping

Scope = Literal["task", "smoke"]
EXPERT_FRACTION = 0.95  # "as fast as the expert" allows 5 % of measurement noise


@dataclass(frozen=True)
class WorkloadResult:
    """The latest result of one submission on one workload."""

    workload: str
    ok: bool
    speedup_vs_reference: float | None = None
    speedup_vs_expert: float | None = None


@dataclass(frozen=True)
class TaskMetrics:
    """One submission's metrics on its task. ``performance_score`` is None for a smoke check."""

    scope: Scope
    required: tuple[str, ...]
    ok: int  # required workloads with an ok result
    not_run: tuple[str, ...]  # required workloads with no result at all
    correct: bool  # ok on every required workload of the scope
    speedup_vs_reference: float | None
    speed_vs_expert: float | None
    performance_score: int | None

    @property
    def task_correct(self) -> bool:
        """Correct in the sense of the run metrics: on every timed workload of the task."""
        return self.correct and self.scope == "task"


def geomean(values: Iterable[float | None]) -> float | None:
    """Geometric mean of the positive values given (None entries are left out); None when there
    are none or one is not positive (no silent 1.0 for missing data)."""
    vals = [v for v in values if v is not None]
    if not vals or any(v <= 0 for v in vals):
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def performance_score(correct: bool, speedup_vs_reference: float | None, speed_vs_expert: float | None) -> int:
    """Performance Score of one task, 0-3: 0 if incorrect, else 1 + [speedup over the reference
    > 1] + [speed >= 0.95 x the expert's]."""
    if not correct:
        return 0
    score = 1
    if speedup_vs_reference is not None and speedup_vs_reference > 1.0:
        score += 1
    if speed_vs_expert is not None and speed_vs_expert >= EXPERT_FRACTION:
        score += 1
    return score


def check_scope(timed_workloads: Iterable[str], smoke_workload: str, recorded: Iterable[str], timed: bool) -> tuple[Scope, tuple[str, ...]]:
    """The workloads a submission must pass: every timed workload of the task, or only the smoke
    workload for a smoke check (no timing, or nothing but the smoke workload recorded)."""
    recorded = set(recorded)
    if not timed or (recorded and recorded <= {smoke_workload}):
        return "smoke", (smoke_workload,)
    return "task", tuple(timed_workloads)


def task_metrics(
    results: Mapping[str, WorkloadResult],
    scope: Scope,
    required: Iterable[str],
    *,
    reference_is_expert: bool = False,
    is_expert: bool = False,
) -> TaskMetrics:
    """Correctness, speedups and Performance Score of one submission over ``required`` workloads."""
    required = tuple(required)
    have = [results[w] for w in required if w in results]
    not_run = tuple(w for w in required if w not in results)
    ok = sum(r.ok for r in have)
    correct = bool(required) and ok == len(required)
    if scope == "smoke" or not correct:
        return TaskMetrics(scope, required, ok, not_run, correct, None, None, None if scope == "smoke" else 0)
    speedup = geomean(r.speedup_vs_reference for r in have)
    if is_expert:
        vs_expert = 1.0
    elif reference_is_expert:
        vs_expert = speedup
    elif all(r.speedup_vs_expert for r in have):
        vs_expert = geomean(r.speedup_vs_expert for r in have)
    else:
        vs_expert = None  # the expert was not timed on every workload: no bonus claimed
    return TaskMetrics(scope, required, ok, not_run, True, speedup, vs_expert, performance_score(True, speedup, vs_expert))


def submission_metrics(
    results: Mapping[str, WorkloadResult],
    *,
    timed: bool,
    task_workloads: Iterable[str] | None,
    smoke_workload: str | None,
    reference_is_expert: bool = False,
    is_expert: bool = False,
) -> TaskMetrics:
    """:func:`task_metrics` with the scope chosen by :func:`check_scope` from the task's workloads.
    Without the task spec (``task_workloads`` None) the recorded workloads are all there is to
    require, and said so by the caller."""
    if task_workloads is None or smoke_workload is None:
        scope: Scope = "task" if timed else "smoke"
        required = tuple(sorted(results))
    else:
        scope, required = check_scope(task_workloads, smoke_workload, results, timed)
    return task_metrics(results, scope, required, reference_is_expert=reference_is_expert, is_expert=is_expert)


def run_performance_score(task_scores: Iterable[int | None], suite_size: int) -> float:
    """Mean Performance Score over the suite's tasks; a missing task (or None) counts 0."""
    return sum(s or 0 for s in task_scores) / suite_size


def fast_p(task_results: Iterable[tuple[bool, float | None]], p: float, suite_size: int) -> float:
    """Share of the suite's tasks that are correct with a task speedup > p (strictly)."""
    hits = sum(1 for ok, s in task_results if ok and s is not None and s > p)
    return hits / suite_size


def suite_size(tasks_root: Path) -> int:
    """The number of tasks in the suite: the task folders (with a ``task.toml``) under the root."""
    root = Path(tasks_root)
    return sum(1 for p in root.iterdir() if (p / "task.toml").is_file()) if root.is_dir() else 0
