"""``d2k-tasks``: validate the benchmark's data (tasks, catalogue, corpus labels) and summarise it.

    d2k-tasks validate            # everything in this checkout; exit 1 if anything is wrong
    d2k-tasks validate --no-build # schema and cross-reference checks only (no torch needed)
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from .catalogue import check_catalogue, default_catalogue_path
from .labels import check_labels, labelled_folders
from .schema import Problem
from .task import Task, check_task, default_tasks_root, task_folders

REPO = default_tasks_root().parent


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="d2k-tasks",
        description="Validate D2K-Bench task specs, the property catalogue and the corpus labels, "
        "reporting every problem as 'file: key: message', and print a summary of the tasks.",
        epilog="example: d2k-tasks validate --tasks tasks/ --labels corpus/ tasks/",
    )
    sub = p.add_subparsers(dest="command", required=True)
    v = sub.add_parser("validate", help="check tasks, catalogue and labels; exit 1 on any problem")
    v.add_argument("--tasks", type=Path, default=REPO / "tasks", help="folder of task folders (default: %(default)s)")
    v.add_argument("--catalogue", type=Path, default=default_catalogue_path(), help="property catalogue TOML (default: %(default)s)")
    v.add_argument("--labels", type=Path, nargs="*", default=[REPO / "corpus", REPO / "tasks"],
                   help="folders searched for labels.toml files (default: corpus/ and tasks/)")
    v.add_argument("--no-build", action="store_true",
                   help="skip the checks that import reference.py and build inputs (they need torch)")
    return p


def _build_checks(task: Task) -> list[Problem]:
    try:
        from .inputs_check import check_inputs
    except ImportError as exc:  # torch missing
        return [Problem(str(task.path), "", f"input checks skipped: {exc} (use --no-build)")]
    return check_inputs(task)


def _summary_rows(tasks: list[Task], problems_by_task: dict[str, int]) -> list[list[str]]:
    rows = []
    for t in tasks:
        levels = Counter(d.level for d in t.design)
        rows.append([
            t.id, t.category, str(len(t.workloads)),
            " ".join(f"{lvl}:{levels.get(lvl, 0)}" for lvl in ("L1", "L2", "L3")),
            t.baseline.expert_library or t.baseline.expert,
            "ok" if not problems_by_task.get(t.id) else f"{problems_by_task[t.id]} problem(s)",
        ])
    return rows


def _print_table(headers: list[str], rows: list[list[str]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(*headers, title="Tasks")
    for row in rows:
        table.add_row(*row)
    Console().print(table)


def validate(args: argparse.Namespace) -> int:
    problems: list[Problem] = []
    catalogue, found = check_catalogue(args.catalogue)
    problems += found
    if not args.tasks.is_dir():
        print(f"d2k-tasks: no such folder: {args.tasks}", file=sys.stderr)
        return 2
    tasks: list[Task] = []
    per_task: dict[str, int] = {}
    for folder in task_folders(args.tasks):
        task, found = check_task(folder, catalogue)
        if task is not None and not found and not args.no_build:
            found = _build_checks(task)
        problems += found
        if task is not None:
            tasks.append(task)
            per_task[task.id] = len(found)
    folders = labelled_folders(*[p for p in args.labels if p.exists()]) if catalogue else []
    units = 0
    for folder in folders:
        labels, found = check_labels(folder, catalogue)
        problems += found
        units += len(labels.kernel) if labels else 0

    _print_table(["task", "category", "workloads", "design items", "expert", "status"], _summary_rows(tasks, per_task))
    workloads = sum(len(t.workloads) for t in tasks)
    print(f"{len(tasks)} tasks, {workloads} workloads; catalogue: {len(catalogue) if catalogue else 0} properties; "
          f"labels: {len(folders)} submissions, {units} kernel units")
    for p in problems:
        print(p)
    print(f"{len(problems)} problem(s)" if problems else "all valid")
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return validate(args)


if __name__ == "__main__":
    sys.exit(main())
