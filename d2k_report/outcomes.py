"""Per-task outcomes of a run: its profile and analyze results joined to its submissions.

Profile side: the d2k-profile records of the task's submission are summarised by
:func:`d2k_profile.summary.summarize` with the task spec, exactly as ``d2k-profile`` prints them
(the rules live in :mod:`d2k_spec.run_metrics`, not here): a submission is correct only with an
``ok`` record for *every* timed workload of its task, a workload with no record leaves correctness
unproven, and smoke-only results (CPU mode, ``--smoke``) do not make a task correct.

Analyze side: the ``submission`` row of ``d2k-analyze --format jsonl`` gives the implementation
score overall and per level, the ``item`` rows the per-design-item values, and the ``unit`` and
``finding`` rows the state of each catalogue property in the submission's live kernels.

Matching a result to a run's submission: by task; where a result file holds several submissions of
one task, by the last two parts of the submission path (``<task>/<variant>``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from d2k_profile.results import Record, record_from_dict
from d2k_profile.summary import SubmissionSummary, summarize
from d2k_spec.catalogue import Catalogue
from d2k_spec.task import Task

from .runs import Run

LEVELS = ("L1", "L2", "L3")
MODE_PREFERENCE = ("eager", "graph", "cpu")
PLACEHOLDER = "~not-in-checkout-"


@dataclass
class TaskOutcome:
    """Everything the report knows about one task of one run. A task with no submission keeps
    every default: incorrect, Performance Score 0, not analysed."""

    task: str
    submitted: bool = False
    profiled: bool = False
    correct: bool = False
    workloads_ok: int = 0
    workloads_total: int = 0
    speedup: float | None = None  # geomean over workloads of reference time / submission time
    speed_vs_expert: float | None = None
    performance_score: int = 0
    expert_speedup: float | None = None  # the expert's own geomean speedup over the reference
    analyzed: bool = False
    impl_score: float | None = None
    impl_levels: dict[str, float | None] = field(default_factory=dict)
    items: dict[str, float | None] = field(default_factory=dict)  # design item -> 0/0.5/1, None: not assessed
    properties: dict[str, str] = field(default_factory=dict)  # property -> present | absent | undecided
    proposed: dict[str, bool] | None = None  # design item -> named in the design notes (None: no notes)
    notes: list[str] = field(default_factory=list)


def _tail(path: str | Path) -> tuple[str, ...]:
    return Path(str(path)).parts[-2:]


def pick_by_path(candidates: dict[str, Any], submission: Path) -> tuple[str | None, str]:
    """The candidate key (a result's submission path) for ``submission``; ('', note) if ambiguous."""
    if len(candidates) == 1:
        return next(iter(candidates)), ""
    matches = [k for k in candidates if _tail(k) == _tail(submission)]
    if len(matches) == 1:
        return matches[0], ""
    return None, f"{len(candidates)} submissions of this task in the results and none matches {'/'.join(_tail(submission))}"


# --- profile results --------------------------------------------------------------------------


def read_records(path: Path, notes: list[str]) -> list[Record]:
    """d2k-profile JSON Lines; unreadable lines are skipped with one note (never a crash)."""
    records, bad = [], 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            records.append(record_from_dict(json.loads(line)))
        except (json.JSONDecodeError, TypeError, ValueError, KeyError):
            bad += 1
    if bad:
        notes.append(f"{path.name}: {bad} line(s) are not d2k-profile records and were skipped")
    return records


def _preferred_mode(rows: list[SubmissionSummary]) -> SubmissionSummary | None:
    for mode in MODE_PREFERENCE:
        for r in rows:
            if r.mode == mode:
                return r
    return rows[0] if rows else None


def apply_profile(out: TaskOutcome, records: list[Record], submission: Path, task: Task | None) -> None:
    """Fill the profile side of ``out`` from the run's records of this task."""
    mine = [r for r in records if r.task == out.task]
    subs = {r.path: r for r in mine if r.role == "submission"}
    if not subs:
        out.notes.append("no profile results: counts as incorrect (Performance Score 0)")
        return
    key, why = pick_by_path(subs, submission)
    if key is None:
        out.notes.append(f"profile results ambiguous ({why}): counts as incorrect")
        return
    specs = {out.task: task} if task is not None else {}
    row = _preferred_mode(summarize([r for r in mine if r.path == key], tasks=specs))
    experts = _preferred_mode(summarize([r for r in mine if r.role == "expert"], tasks=specs))
    out.profiled = True
    out.workloads_ok, out.workloads_total = row.ok, row.workloads
    out.correct = row.correct and row.scope == "task"
    out.speedup, out.speed_vs_expert = row.speedup_vs_reference, row.speed_vs_expert
    out.performance_score = row.performance_score or 0
    if row.scope == "smoke":
        out.notes.append("only smoke-workload results (CPU mode or --smoke): correctness on the task's workloads "
                         "is not established, so it counts as incorrect")
    elif not row.correct:
        out.notes.append(f"{row.ok} of {row.workloads} workloads ok ({row.first_problem}): counts as incorrect")
    if task is None:
        out.notes.append("task spec not available: correctness over the recorded workloads only")
    if experts is not None and experts.correct and experts.scope == "task":
        out.expert_speedup = experts.speedup_vs_reference


# --- analyze results --------------------------------------------------------------------------


def read_analyze(path: Path, notes: list[str]) -> list[dict[str, Any]]:
    """d2k-analyze JSON Lines rows (the flat table of :mod:`d2k_analyze.reports.rows`)."""
    rows, bad = [], 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict) or "row_type" not in row:
                raise ValueError
            rows.append(row)
        except (json.JSONDecodeError, ValueError):
            bad += 1
    if bad:
        notes.append(f"{path.name}: {bad} line(s) are not d2k-analyze rows and were skipped")
    return rows


def property_states(unit_rows: list[dict], prop_rows: list[dict], catalogue: Catalogue | None) -> dict[str, str]:
    """State of each property in the submission, mirroring step 1 of :mod:`d2k_analyze.scoring`:
    present if present in any launched kernel; absent if absent in every launched kernel it applies
    to; otherwise (not applicable, low confidence, no launched kernel) undecided."""
    live = {(u.get("file"), u.get("unit")) for u in unit_rows if u.get("launched")}
    if unit_rows and not live:
        return {p: "absent" for p in {r["property"] for r in prop_rows}}
    seen: dict[str, list[str]] = {}
    for r in prop_rows:
        if (r.get("file"), r.get("unit")) not in live:
            continue
        status = r.get("status")
        if r.get("confidence") == "low" or status not in ("present", "absent"):
            status = "undecided"
        seen.setdefault(r["property"], []).append(status)
    out = {}
    for prop, states in seen.items():
        if "present" in states:
            out[prop] = "present"
        elif all(s == "absent" for s in states):
            out[prop] = "absent"
        else:
            out[prop] = "undecided"
    return out


def apply_analysis(out: TaskOutcome, rows: list[dict], submission: Path, catalogue: Catalogue | None) -> None:
    """Fill the analyze side of ``out`` from the run's analyze rows."""
    subs = {r["path"] or r["submission"]: r for r in rows if r["row_type"] == "submission" and r.get("task") == out.task}
    if not subs:
        out.notes.append("no analyze results: implementation score not known")
        return
    key, why = pick_by_path(subs, submission)
    if key is None:
        out.notes.append(f"analyze results ambiguous ({why})")
        return
    sub = subs[key]
    name = sub["submission"]
    mine = [r for r in rows if r.get("submission") == name]
    out.analyzed = sub.get("score") is not None
    out.impl_score = sub.get("score")
    out.impl_levels = {lvl: sub.get(f"score_{lvl}") for lvl in LEVELS}
    out.items = {r["item"]: r.get("value") for r in mine if r["row_type"] == "item"}
    out.properties = property_states(  # "finding" rows; files from before the tidy tables call them "property"
        [r for r in mine if r["row_type"] == "unit"], [r for r in mine if r["row_type"] in ("finding", "property")], catalogue
    )
    if sub.get("errors"):
        out.notes.append(f"analysis errors: {sub['errors'][:120]}")
    if not out.analyzed:
        out.notes.append("analysed without a known task: no implementation score")


# --- one run ----------------------------------------------------------------------------------


def run_records(run: Run) -> list[Record]:
    """The run's d2k-profile records (none when it has no profile file); unreadable lines become
    one of the run's problems."""
    return read_records(run.profile_path, run.problems) if run.profile_path.is_file() else []


def run_outcomes(run: Run, tasks: dict[str, Task], catalogue: Catalogue | None, records: list[Record]) -> dict[str, TaskOutcome]:
    """One :class:`TaskOutcome` per submitted task of ``run`` (missing tasks are added by the
    caller), from its profile ``records`` (:func:`run_records`) and its analysis results."""
    from .discovery import proposed_items

    rows = read_analyze(run.analyze_path, run.problems) if run.analyze_path.is_file() else []
    outcomes = {}
    for task_id, folder in run.submissions.items():
        out = TaskOutcome(task_id, submitted=True)
        task = tasks.get(task_id)
        if run.profile_path.is_file():
            apply_profile(out, records, folder, task)
        if run.analyze_path.is_file():
            apply_analysis(out, rows, folder, catalogue)
        if task_id in run.design_notes and task is not None:
            out.proposed = proposed_items(run.design_notes[task_id], task, catalogue)
        outcomes[task_id] = out
    return outcomes


def suite_universe(known_tasks: Iterable[str], submitted: Iterable[str], suite_size: int) -> list[str]:
    """Every task slot of the suite, in a fixed order shared by all runs (so that pairs line up):
    the known and submitted task ids, sorted, then placeholders for the suite's tasks that are not
    in this checkout, up to ``suite_size``."""
    ids = sorted(set(known_tasks) | set(submitted))
    return ids + [f"{PLACEHOLDER}{i + 1}" for i in range(max(0, suite_size - len(ids)))]


def suite_slots(outcomes: dict[str, TaskOutcome], universe: list[str]) -> list[TaskOutcome]:
    """The run's outcome for every slot of the suite; a task with no submission keeps the defaults
    (incorrect, Performance Score 0, not analysed)."""
    return [outcomes.get(t) or TaskOutcome(t) for t in universe]
