"""``d2k-tasks``: validate the benchmark's data (tasks, catalogue, corpus labels) and summarise it.

    d2k-tasks validate            # the suite in effect; exit 1 if anything is wrong
    d2k-tasks validate --no-build # schema and cross-reference checks only (no torch needed)

The suite is found like every command finds it (:mod:`d2k_spec.locations`): ``--tasks-root`` /
``--catalogue``, else ``$D2K_SUITE``, else the bundled suite (the checkout, or the wheel's copy).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from . import exit_codes
from .catalogue import check_catalogue
from .labels import check_labels, labelled_folders
from .locations import ENV_SUITE, LocationError, catalogue_path, default_label_folders, tasks_root
from .schema import Problem
from .task import Task, check_task, task_folders

EPILOG = f"""\
examples:
  d2k-tasks validate                               the suite in effect (see below)
  d2k-tasks validate --tasks-root my_suite/tasks --labels my_suite/corpus
  {ENV_SUITE}=my_suite d2k-tasks validate             the same, for every d2k command at once

where the suite is: --tasks-root / --catalogue, else ${ENV_SUITE} (a folder with tasks/ and
optionally rubrics/properties.toml), else the bundled suite (this checkout, or the installed copy).

{exit_codes.HELP}
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="d2k-tasks",
        description="Validate D2K-Bench task specs, the property catalogue and the corpus labels, "
        "reporting every problem as 'file: key: message', and print a summary of the tasks.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", required=True)
    v = sub.add_parser("validate", help="check tasks, catalogue and labels; exit 1 on any problem",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    v.add_argument("--tasks-root", type=Path, default=None, metavar="DIR",
                   help=f"folder of task folders (default: ${ENV_SUITE}/tasks, else the bundled tasks)")
    v.add_argument("--catalogue", type=Path, default=None, metavar="FILE",
                   help=f"property catalogue TOML (default: ${ENV_SUITE}/rubrics/properties.toml if present, else the bundled one)")
    v.add_argument("--labels", type=Path, nargs="*", default=None, metavar="DIR",
                   help="folders searched for labels.toml files (default: the suite's corpus/ if it has one, and the task folders)")
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
    try:
        root = tasks_root(args.tasks_root)
        catalogue_file = catalogue_path(args.catalogue)
    except LocationError as exc:
        print(f"d2k-tasks: error: {exc}", file=sys.stderr)
        return exit_codes.USAGE
    label_roots = args.labels if args.labels is not None else default_label_folders(root)
    missing = [str(p) for p in label_roots if not p.exists()]
    if missing:
        print(f"d2k-tasks: error: --labels: no such folder: {', '.join(missing)}", file=sys.stderr)
        return exit_codes.USAGE
    problems: list[Problem] = []
    catalogue, found = check_catalogue(catalogue_file)
    problems += found
    tasks: list[Task] = []
    per_task: dict[str, int] = {}
    for folder in task_folders(root):
        task, found = check_task(folder, catalogue)
        if task is not None and not found and not args.no_build:
            found = _build_checks(task)
        problems += found
        if task is not None:
            tasks.append(task)
            per_task[task.id] = len(found)
    folders = labelled_folders(*label_roots) if catalogue else []
    units = 0
    for folder in folders:
        labels, found = check_labels(folder, catalogue)
        problems += found
        units += len(labels.kernel) if labels else 0

    _print_table(["task", "category", "workloads", "design items", "expert", "status"], _summary_rows(tasks, per_task))
    workloads = sum(len(t.workloads) for t in tasks)
    print(f"{len(tasks)} task{'s' if len(tasks) != 1 else ''}, {workloads} workload{'s' if workloads != 1 else ''} "
          f"in {root}; catalogue: {len(catalogue) if catalogue else 0} properties ({catalogue_file}); "
          f"labels: {len(folders)} submission{'s' if len(folders) != 1 else ''}, {units} kernel unit{'s' if units != 1 else ''}")
    for p in problems:
        print(p, file=sys.stderr)
    print(f"{len(problems)} problem{'s' if len(problems) != 1 else ''}" if problems else "all valid")
    return exit_codes.status(len(problems))


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return validate(args)
    except KeyboardInterrupt:
        print("d2k-tasks: interrupted", file=sys.stderr)
        return exit_codes.INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
