"""Runs: ``runs/<run>/run.toml`` as a typed record, and where a run's submissions and results are.

A run is one agent under one condition on the task suite. Its folder holds ``run.toml`` (the
schema is :class:`RunSpec`, validated by :func:`d2k_spec.schema.build` like every other data file
of the benchmark), one submission folder per task (``<run>/<task_id>/``), and the run's analyze and
profile result files. A ``[tasks]`` table may instead point a task at an existing submission folder
(resolved relative to ``run.toml``), so that demonstration runs need not copy corpus code.

Loading never fails on an incomplete run: a missing result file or a task entry that points
nowhere becomes a note on the :class:`Run`, and the report applies the stated rule for it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from d2k_spec.schema import Problem, SpecError, build, read_toml

RUN_FILE = "run.toml"
NOTES_FILE = "design.md"
SOURCE_SUFFIXES = (".py", ".cu", ".cuh")


@dataclass(frozen=True)
class RunSpec:
    """``run.toml``. Field name = key, annotation = type, default = optional key.

    ``analyze_results`` / ``profile_results`` are files written by ``d2k-analyze --format jsonl``
    and ``d2k-profile``, relative to ``run.toml``. ``demonstration = true`` marks runs that are not
    agent results (e.g. corpus variants): every output of the report says so.
    """

    model: str
    condition: Literal["guided", "unguided"]
    budget: str = ""
    notes: str = ""
    demonstration: bool = False
    analyze_results: str = "analyze.jsonl"
    profile_results: str = "profile.jsonl"
    tasks: dict[str, str] = field(default_factory=dict)


@dataclass
class Run:
    """A loaded run: its spec, one submission folder per task, design notes, result files, and
    notes on whatever is missing (said in the report, never raised). ``problems`` are the inputs
    that could not be handled in full (a task entry pointing nowhere, unreadable result lines):
    they are reported too, and make ``d2k-report`` exit 1."""

    name: str
    folder: Path
    spec: RunSpec
    submissions: dict[str, Path]
    design_notes: dict[str, str]
    analyze_path: Path
    profile_path: Path
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def condition(self) -> str:
        return self.spec.condition


def _has_sources(folder: Path) -> bool:
    return any(p.suffix in SOURCE_SUFFIXES for p in folder.iterdir() if p.is_file())


def _plain_layout(folder: Path, known_tasks: set[str]) -> dict[str, Path]:
    """``<run>/<task_id>/`` folders: named like a known task, or holding source files."""
    found = {}
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        if sub.name in known_tasks or _has_sources(sub):
            found[sub.name] = sub
    return found


def load_run(path: Path, known_tasks: set[str]) -> Run:
    """Load the run in folder ``path`` (or whose ``run.toml`` is ``path``).

    Raises :class:`SpecError` only when ``run.toml`` itself is unusable (missing, bad TOML, bad
    keys): that is a user mistake the CLI reports in one line per problem.
    """
    path = Path(path)
    folder = path.parent if path.name == RUN_FILE else path
    file = folder / RUN_FILE
    problems: list[Problem] = []
    data = read_toml(file, problems)
    spec = build(RunSpec, data, str(file), "", problems) if data is not None else None
    if spec is None:
        raise SpecError(problems)

    notes: list[str] = []
    bad: list[str] = []
    submissions = _plain_layout(folder, known_tasks)
    for task_id, target in spec.tasks.items():
        resolved = Path(os.path.normpath(folder / target))
        if not resolved.is_dir():
            bad.append(f"[tasks] {task_id} = {target!r}: no such folder; the task counts as missing")
            submissions.pop(task_id, None)
            continue
        submissions[task_id] = resolved
    for task_id in sorted(set(submissions) - known_tasks):
        notes.append(f"task '{task_id}' is not a task of this checkout: its design items and workloads are unknown")

    design_notes = {}
    for task_id, sub in submissions.items():
        for cand in (folder / task_id / NOTES_FILE, sub / NOTES_FILE):
            if cand.is_file():
                design_notes[task_id] = cand.read_text(encoding="utf-8", errors="replace")
                break

    analyze_path = folder / spec.analyze_results
    profile_path = folder / spec.profile_results
    for label, p in (("analyze", analyze_path), ("profile", profile_path)):
        if not p.is_file():
            notes.append(f"no {label} results ({p.name} missing): every task counts as un{label}d")
    return Run(folder.name, folder, spec, dict(sorted(submissions.items())), design_notes, analyze_path, profile_path, notes, bad)


def expand_run_paths(paths: list[Path]) -> list[Path]:
    """Each PATH is a run folder, a ``run.toml``, or a folder of runs (e.g. ``runs/``)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.name == RUN_FILE or (p / RUN_FILE).is_file() or not p.is_dir():
            out.append(p)
        else:
            inner = sorted(q for q in p.iterdir() if (q / RUN_FILE).is_file())
            out.extend(inner or [p])  # a folder with no runs below: load_run reports the missing run.toml
    return out
