"""The report's tables, built from per-task outcomes (pure functions: outcomes in, rows out).

* ``coverage``: what each run holds and what is missing (the rules then applied are in the notes);
* ``headline``: one row per run, one delta row per pair, bootstrap 95 % intervals over tasks;
* ``per_task``: speedup, Performance Score and implementation score per task and run, with the
  expert's speedup beside it;
* ``design_items``: per design item, the implementation value in each run and the change under
  guidance, sorted so that what guidance did not fix comes first;
* ``properties``: the same per catalogue property, as implementation rates over the tasks whose
  design asks for the property (with discovery rates where design notes exist).
"""

from __future__ import annotations

from typing import Any

from d2k_spec.catalogue import Catalogue
from d2k_spec.task import Task

from . import aggregate
from .aggregate import FAST_P, LEVELS, Estimate
from .model import Column, Report, Table
from .outcomes import PLACEHOLDER, TaskOutcome

MISSING = "missing"  # no submission, or no analysis of it
NOT_ASSESSED = "not assessed"  # analysed, but the static layers could not decide

# Outcome of a design item or property under guidance, most worrying first (the sort order).
STATUS_ORDER = (
    "still missing under guidance",
    "regressed under guidance",
    "guided run not assessed",
    "fixed by guidance",
    "implemented in both",
)


def _put(row: dict[str, Any], key: str, est: Estimate) -> None:
    row[key], row[f"{key}_lo"], row[f"{key}_hi"], row[f"{key}_n"] = est.value, est.lo, est.hi, est.n


def _metric_columns() -> list[Column]:
    cols = [
        Column("correctness", "correct (rate)", "rate", ci=True),
        Column("performance_score", "Performance Score (0-3)", "score", ci=True),
        Column("geomean_speedup", "geomean speedup (n tasks)", "speedup", ci=True, n=True),
    ]
    cols += [Column(f"fast_{p}", f"fast_{p}", "rate", ci=True) for p in FAST_P]
    cols += [Column("impl_all", "impl. score (n tasks)", "pct", ci=True, n=True)]
    cols += [Column(f"impl_{lvl}", f"impl. {lvl}", "pct", ci=True, n=True) for lvl in LEVELS]
    return cols


def coverage_table(report: Report, tasks: dict[str, Task]) -> Table:
    rows = []
    for run in report.runs:
        slots = report.slots[run.name]
        missing_known = [s.task for s in slots if not s.submitted and not s.task.startswith(PLACEHOLDER)]
        not_in_checkout = sum(1 for s in slots if s.task.startswith(PLACEHOLDER))
        missing = ", ".join(missing_known) + (f" (+{not_in_checkout} suite tasks not in this checkout)" if not_in_checkout else "")
        rows.append({
            "run": run.name, "condition": run.condition, "model": run.spec.model, "budget": run.spec.budget,
            "demonstration": "DEMONSTRATION" if run.spec.demonstration else "",
            "submitted": sum(s.submitted for s in slots), "suite": len(slots),
            "profiled": sum(s.profiled for s in slots), "analysed": sum(s.analyzed for s in slots),
            "design_notes": len(run.design_notes), "missing_tasks": missing.strip(), "notes": run.spec.notes,
        })
    cols = [
        Column("run", "run"), Column("condition", "condition"), Column("model", "model"), Column("budget", "budget"),
        Column("demonstration", "label"), Column("submitted", "tasks submitted", "int"), Column("suite", "suite size", "int"),
        Column("profiled", "profiled", "int"), Column("analysed", "analysed", "int"),
        Column("design_notes", "design notes", "int"), Column("missing_tasks", "missing tasks (count as 0)"),
        Column("notes", "run notes"),
    ]
    return Table("coverage", "Runs and coverage", "What each run holds; a missing task counts as incorrect with Performance Score 0.", cols, rows)


def headline_table(report: Report) -> Table:
    rows = []
    for run in report.runs:
        row = {"row": run.name, "kind": "run", "condition": run.condition, "note": ""}
        for key, est in aggregate.run_estimates(report.slots[run.name], report.config).items():
            _put(row, key, est)
        rows.append(row)
    for pair in report.pairs:
        pairs = list(zip(report.slots[pair.guided], report.slots[pair.unguided]))
        g, u, n = aggregate.common_geomeans(pairs)
        row = {"row": f"Δ {pair.guided} − {pair.unguided}", "kind": "pair", "condition": "guided − unguided",
               "note": (f"speedup: ratio of geomeans {g:.3g}× / {u:.3g}× over the {n} tasks correct in both" if n
                         else "speedup: no task correct in both")}
        for key, est in aggregate.pair_estimates(pairs, report.config).items():
            _put(row, key, est)
        rows.append(row)
    cols = [Column("row", "run / pair"), Column("condition", "condition"), *_metric_columns(), Column("note", "note")]
    desc = (f"Rates and the Performance Score are over all {report.suite_size} suite tasks (a missing task counts 0); "
            "the geomean speedup is over the run's correct tasks (pair rows: over the tasks correct in both runs); "
            "implementation scores are means over the analysed tasks. Pair rows hold guided − unguided differences. "
            f"[lo, hi]: bootstrap {report.config.level:.0%} interval over tasks ({report.config.n_boot} resamples, seed {report.config.seed}).")
    return Table("headline", "Headline: paired comparison", desc, cols, rows)


def per_task_table(report: Report) -> Table:
    rows = []
    for i, task in enumerate(report.universe):
        if task.startswith(PLACEHOLDER):
            continue
        for run in report.runs:
            s: TaskOutcome = report.slots[run.name][i]
            rows.append({
                "task": task, "run": run.name, "condition": run.condition,
                "status": "correct" if s.correct else ("incorrect" if s.profiled else ("not profiled" if s.submitted else MISSING)),
                "workloads_ok": f"{s.workloads_ok}/{s.workloads_total}" if s.profiled else "",
                "speedup": s.speedup, "speed_vs_expert": s.speed_vs_expert, "expert_speedup": s.expert_speedup,
                "performance_score": s.performance_score, "impl_score": s.impl_score,
                **{f"impl_{lvl}": s.impl_levels.get(lvl) for lvl in LEVELS},
                "notes": "; ".join(s.notes),
            })
    cols = [
        Column("task", "task"), Column("run", "run"), Column("condition", "condition"), Column("status", "status"),
        Column("workloads_ok", "ok workloads"), Column("speedup", "speedup vs ref.", "speedup"),
        Column("expert_speedup", "expert's speedup", "speedup"), Column("speed_vs_expert", "speed vs expert", "ratio"),
        Column("performance_score", "PS", "int"), Column("impl_score", "impl. score", "pct"),
        *[Column(f"impl_{lvl}", lvl, "pct") for lvl in LEVELS], Column("notes", "notes"),
    ]
    desc = ("Speedups are geometric means over the task's workloads of reference time / submission time; "
            "the expert's speedup is its own, measured in the same profile run. PS: Performance Score 0-3.")
    return Table("per_task", "Per task", desc, cols, rows)


def _value(s: TaskOutcome, item: str) -> float | str:
    if not s.analyzed:
        return MISSING
    v = s.items.get(item)
    return NOT_ASSESSED if v is None else v


def item_status(g: float | str, u: float | str) -> str:
    """What guidance did to one item (or property rate): see :data:`STATUS_ORDER`."""
    if not isinstance(g, (int, float)):
        return "guided run not assessed" if g == NOT_ASSESSED else "still missing under guidance"
    if g >= 1.0:
        return "implemented in both" if isinstance(u, (int, float)) and u >= 1.0 else "fixed by guidance"
    if isinstance(u, (int, float)) and u > g:
        return "regressed under guidance"
    return "still missing under guidance"


def _sort_key(row: dict[str, Any], report: Report, prefix: str) -> tuple:
    """Pairs: the first pair's status, then the guided value (lowest first). No pair: mean value."""
    if report.pairs:
        p = report.pairs[0]
        g = row[f"{prefix}{p.guided}"]
        return (STATUS_ORDER.index(row[f"status:{p.label}"]), g if isinstance(g, (int, float)) else -1.0)
    nums = [row[f"{prefix}{r.name}"] for r in report.runs if isinstance(row[f"{prefix}{r.name}"], (int, float))]
    return (0, sum(nums) / len(nums) if nums else -1.0)


def _delta(g: Any, u: Any) -> float | None:
    return g - u if isinstance(g, (int, float)) and isinstance(u, (int, float)) else None


def design_items_table(report: Report, tasks: dict[str, Task]) -> Table:
    with_notes = [r for r in report.runs if r.design_notes]
    rows = []
    for i, task_id in enumerate(report.universe):
        task = tasks.get(task_id)
        if task is None or not any(report.slots[r.name][i].submitted for r in report.runs):
            continue
        for d in task.design:
            row: dict[str, Any] = {"task": task_id, "item": d.id, "level": d.level, "title": d.title, "weight": d.weight}
            for run in report.runs:
                s = report.slots[run.name][i]
                row[f"v:{run.name}"] = _value(s, d.id)
                if run in with_notes:
                    row[f"proposed:{run.name}"] = "" if s.proposed is None else ("yes" if s.proposed.get(d.id) else "no")
            for p in report.pairs:
                g, u = row[f"v:{p.guided}"], row[f"v:{p.unguided}"]
                row[f"delta:{p.label}"] = _delta(g, u)
                row[f"status:{p.label}"] = item_status(g, u)
            rows.append(row)
    rows.sort(key=lambda r: (_sort_key(r, report, "v:"), r["task"], r["item"]))
    cols = [Column("task", "task"), Column("item", "design item"), Column("level", "level"), Column("title", "title")]
    for run in report.runs:
        cols.append(Column(f"v:{run.name}", f"{run.name} ({run.condition})", "value"))
        if run in with_notes:
            cols.append(Column(f"proposed:{run.name}", f"{run.name}: proposed in notes (keywords)"))
    for p in report.pairs:
        cols += [Column(f"delta:{p.label}", f"Δ {p.label}", "delta"), Column(f"status:{p.label}", f"under guidance ({p.label})")]
    desc = ("Implementation value per design item: 1 implemented, 0.5 partial, 0 absent (after dependency caps); "
            "'not assessed': the static layers could not decide; 'missing': no analysed submission. "
            "Sorted so that items guidance did not fix come first.")
    return Table("design_items", "Design items that remain unimplemented", desc, cols, rows)


def property_rates(slots: list[TaskOutcome], universe: list[str], tasks: dict[str, Task], prop: str) -> dict[str, Any]:
    """Implementation (and discovery) rate of one property in one run, over the analysed tasks whose
    design names it. Undecided states are left out of the rate and counted."""
    present = decided = undecided = proposed = with_notes = 0
    for task_id, s in zip(universe, slots):
        task = tasks.get(task_id)
        if task is None or not any(prop in d.properties for d in task.design):
            continue
        if s.analyzed:
            state = s.properties.get(prop, "undecided")
            undecided += state == "undecided"
            decided += state != "undecided"
            present += state == "present"
        if s.proposed is not None:  # discovery needs notes, not an analysis
            with_notes += 1
            proposed += any(s.proposed.get(d.id) for d in task.design if prop in d.properties)
    return {
        "rate": present / decided if decided else None, "n": f"{present}/{decided}" if decided else "0/0",
        "undecided": undecided, "discovery": proposed / with_notes if with_notes else None,
    }


def properties_table(report: Report, tasks: dict[str, Task], catalogue: Catalogue | None) -> Table:
    asked = sorted({p for t in tasks.values() for d in t.design for p in d.properties})
    with_notes = [r for r in report.runs if r.design_notes]
    rows = []
    for prop in asked:
        info = catalogue[prop] if catalogue is not None and prop in catalogue else None
        row: dict[str, Any] = {"property": prop, "level": info.level if info else "", "name": info.name if info else ""}
        any_decided = False
        for run in report.runs:
            r = property_rates(report.slots[run.name], report.universe, tasks, prop)
            row[f"rate:{run.name}"] = r["rate"] if r["rate"] is not None else MISSING
            row[f"n:{run.name}"] = r["n"] + (f" (+{r['undecided']} undecided)" if r["undecided"] else "")
            any_decided |= r["rate"] is not None or r["undecided"] > 0
            if run in with_notes:
                row[f"discovery:{run.name}"] = r["discovery"]
        if not any_decided:
            continue  # no analysed task of any run asks for this property
        for p in report.pairs:
            g, u = row[f"rate:{p.guided}"], row[f"rate:{p.unguided}"]
            row[f"delta:{p.label}"] = _delta(g, u)
            row[f"status:{p.label}"] = item_status(g, u)
        rows.append(row)
    rows.sort(key=lambda r: (_sort_key(r, report, "rate:"), r["property"]))
    cols = [Column("property", "property"), Column("level", "level"), Column("name", "name")]
    for run in report.runs:
        cols += [Column(f"rate:{run.name}", f"{run.name} rate", "rate"), Column(f"n:{run.name}", f"{run.name} present/decided")]
        if run in with_notes:
            cols.append(Column(f"discovery:{run.name}", f"{run.name} discovery rate (keywords)", "rate"))
    for p in report.pairs:
        cols += [Column(f"delta:{p.label}", f"Δ {p.label}", "delta"), Column(f"status:{p.label}", f"under guidance ({p.label})")]
    desc = ("Share of the analysed tasks whose design asks for the property in which the submission's launched kernels "
            "implement it (properties the static layers cannot decide are left out of the rate and counted).")
    return Table("properties", "Catalogue properties: implementation rates", desc, cols, rows)


def build_tables(report: Report, tasks: dict[str, Task], catalogue: Catalogue | None) -> list[Table]:
    return [
        coverage_table(report, tasks),
        headline_table(report),
        per_task_table(report),
        design_items_table(report, tasks),
        properties_table(report, tasks, catalogue),
    ]
