"""Building the report from run folders, and writing every output format to a folder.

``build_report`` is the library entry point (the CLI is a thin shell around it)::

    from d2k_report import build_report, write_outputs
    report = build_report(["runs/r1-guided", "runs/r1-unguided"], pairs=[("r1-guided", "r1-unguided")])
    write_outputs(report, Path("report/"))
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from d2k_spec import outputs
from d2k_spec.catalogue import Catalogue, load_catalogue
from d2k_spec.run_metrics import suite_size as count_suite
from d2k_spec.task import Task, check_task, default_tasks_root, task_folders

from .bootstrap import BootstrapConfig
from .formatting import csv_text, json_text, markdown
from .html import render as render_html
from .model import Report, RunPair
from .devices import mixed_pair_problem, timing_devices
from .outcomes import PLACEHOLDER, run_outcomes, run_records, suite_slots, suite_universe
from .runs import Run, load_run
from .tables import build_tables

class ReportError(Exception):
    """A mistake in what the user asked for (unknown run in --pair, duplicate run names...)."""


def load_tasks_lenient(root: Path, catalogue: Catalogue | None, notes: list[str], problems: list[str]) -> dict[str, Task]:
    """Every valid task spec; a broken one is a problem (its runs still get profile metrics)."""
    if not root.is_dir():
        notes.append(f"no task specs found ({root}): design items and workload lists are unknown")
        return {}
    tasks = {}
    for folder in task_folders(root):
        task, found = check_task(folder, catalogue)
        if task is None or found:
            problems.append(f"task {folder.name} not usable: {found[0] if found else 'invalid'}")
            continue
        tasks[task.id] = task
    return tasks


def resolve_pairs(runs: list[Run], pairs: Iterable[tuple[str, str]] | None, notes: list[str]) -> list[RunPair]:
    """Explicit pairs (checked), or automatic ones: per model, one guided and one unguided run."""
    names = {r.name: r for r in runs}
    if pairs:
        out = []
        for g, u in pairs:
            for n in (g, u):
                if n not in names:
                    raise ReportError(f"--pair: no run named '{n}' (runs: {', '.join(names)})")
            if g == u:
                raise ReportError(f"--pair: a run cannot be paired with itself ('{g}')")
            if names[g].condition != "guided" or names[u].condition != "unguided":
                notes.append(f"pair {g} vs {u}: conditions are {names[g].condition} / {names[u].condition} "
                             "(expected guided / unguided); the deltas are first minus second")
            out.append(RunPair(g, u))
        return out
    out = []
    for model in dict.fromkeys(r.spec.model for r in runs):
        g = [r.name for r in runs if r.spec.model == model and r.condition == "guided"]
        u = [r.name for r in runs if r.spec.model == model and r.condition == "unguided"]
        if len(g) == 1 and len(u) == 1:
            out.append(RunPair(g[0], u[0]))
            notes.append(f"paired automatically (same model '{model}'): {g[0]} (guided) vs {u[0]} (unguided)")
    if not out and len(runs) > 1:
        notes.append("no pair: give --pair GUIDED UNGUIDED (automatic pairing needs one guided and one unguided run per model)")
    return out


def build_report(
    run_paths: Iterable[str | Path],
    pairs: Iterable[tuple[str, str]] | None = None,
    *,
    suite_size: int | None = None,
    config: BootstrapConfig | None = None,
    tasks_root: Path | None = None,
    catalogue: Catalogue | None = None,
    catalogue_file: Path | None = None,
    mixed_devices: bool = False,
) -> Report:
    """Load the runs, join their results per task, and build every table. The suite is the task
    folders under ``tasks_root`` (default: the suite in effect, :mod:`d2k_spec.locations`);
    ``suite_size`` overrides their number (e.g. to score a partial checkout against a full suite).
    A pair whose runs were timed on different GPU models is refused (:class:`ReportError`) unless
    ``mixed_devices``; then it is compared with a note saying so."""
    config = config or BootstrapConfig()
    notes: list[str] = []
    problems: list[str] = []
    root = tasks_root or default_tasks_root()
    if catalogue is None:
        try:
            catalogue = load_catalogue(catalogue_file)
        except Exception as exc:  # noqa: BLE001 - without the catalogue only property names are missing
            problems.append(f"property catalogue not loaded ({exc}): property names and levels are not shown")
    tasks = load_tasks_lenient(root, catalogue, notes, problems)
    if suite_size is None:
        suite_size = max(1, count_suite(root))
    runs = [load_run(Path(p), set(tasks)) for p in run_paths]
    seen: set[str] = set()
    for r in runs:
        if r.name in seen:
            raise ReportError(f"two runs are named '{r.name}' (a run's name is its folder name)")
        seen.add(r.name)
    report_pairs = resolve_pairs(runs, list(pairs or []), notes)

    records = {r.name: run_records(r) for r in runs}
    devices = {r.name: timing_devices(records[r.name]) for r in runs}
    for pair in report_pairs:
        mixed = mixed_pair_problem(pair.guided, pair.unguided, devices)
        if mixed and not mixed_devices:
            raise ReportError(f"{mixed}: speedups from different GPUs are not comparable; profile both runs on one device "
                              "model, or pass --mixed-devices to compare them anyway")
        if mixed:
            notes.append(f"{mixed}: compared anyway (--mixed-devices); the speedup deltas mix the GPUs with the guidance")
    for r in runs:
        if len(devices[r.name]) > 1:
            notes.append(f"{r.name}: timed on {len(devices[r.name])} device models ({', '.join(sorted(devices[r.name]))})")

    outcomes = {r.name: run_outcomes(r, tasks, catalogue, records[r.name]) for r in runs}
    universe = suite_universe(tasks, [t for o in outcomes.values() for t in o], suite_size)
    if len(universe) > suite_size:
        notes.append(f"{len(universe)} distinct tasks found, more than the suite size {suite_size}: averaging over {len(universe)}")
    slots = {r.name: suite_slots(outcomes[r.name], universe) for r in runs}

    not_in_checkout = sum(t.startswith(PLACEHOLDER) for t in universe)
    notes.append(
        f"Suite: {len(universe)} tasks ({len(universe) - not_in_checkout} with a task spec or submission here"
        + (f", {not_in_checkout} not in this checkout" if not_in_checkout else "")
        + "). Correctness rate, Performance Score and fast_p average over all of them; a missing task counts as "
        "incorrect with Performance Score 0."
    )
    for r in runs:
        missing = sum(not s.submitted for s in slots[r.name])
        notes.append(f"{r.name}: {len(universe) - missing} of {len(universe)} tasks submitted, {missing} missing (counted as 0)")
        notes += [f"{r.name}: {n}" for n in r.notes]
        problems += [f"{r.name}: {n}" for n in r.problems]
    notes.append("A submission is correct only with an ok result on every timed workload of its task; "
                 "a workload without a result counts as not correct.")
    notes.append("Implementation scores average over the analysed tasks only (n given); pair deltas over the tasks analysed in both runs.")
    if any(r.design_notes for r in runs):
        notes.append("Discovery ('proposed in notes') is a keyword match of design.md against each item's id and "
                     "properties, not a judgment (see d2k_report/discovery.py).")
    notes.append(f"Intervals: percentile bootstrap over task slots, {config.n_boot} resamples, seed {config.seed}; "
                 "pairs resample the same tasks for both runs.")

    notes += problems
    report = Report(runs, report_pairs, universe, slots, notes=notes, config=config, suite_size=len(universe), problems=problems)
    report.tables = build_tables(report, tasks, catalogue)
    return report


OUTPUT_FILES = ("report.html", "report.md", "report.json")


def output_names(report: Report) -> list[str]:
    """Every file :func:`write_outputs` writes (the CLI checks them all before writing any)."""
    return [*OUTPUT_FILES, *(f"{t.id}.csv" for t in report.tables)]


def write_outputs(report: Report, out: Path) -> list[Path]:
    """report.html, report.md, report.json and one CSV per table, in ``out`` (created), each
    written atomically and recorded as the tool's own (:mod:`d2k_spec.outputs`)."""
    texts = {"report.html": render_html(report), "report.md": markdown(report), "report.json": json_text(report)}
    texts.update({f"{t.id}.csv": csv_text(t) for t in report.tables})
    written = []
    for name in output_names(report):
        outputs.write_text(out / name, texts[name])
        written.append(out / name)
    return written
