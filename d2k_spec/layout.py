"""Which task a submission implements, from where it lies: one convention for every command.

A submission's task is, first match wins:

1. ``--task``: a task id (a folder under the tasks root) or a path to a task folder;
2. the nearest enclosing folder holding a ``task.toml`` (``tasks/<id>/expert`` is that task's expert);
3. the nearest enclosing folder named like a task of the tasks root: ``corpus/<task>/<variant>``,
   ``runs/<run>/<task>/``, and equally ``anywhere/<task>/<variant>``.

Otherwise the task is unknown: ``d2k-analyze`` reports kernel properties only (and says so),
``d2k-profile`` asks for ``--task`` (it cannot run a submission without its reference).
"""

from __future__ import annotations

import os
from pathlib import Path

TASK_FILE = "task.toml"


class UnknownTask(Exception):
    """``--task`` names neither a task of the tasks root nor a task folder."""


def task_ids(tasks_root: Path) -> list[str]:
    root = Path(tasks_root)
    return sorted(p.name for p in root.iterdir() if (p / TASK_FILE).is_file()) if root.is_dir() else []


def resolve_task_arg(ref: str, tasks_root: Path) -> Path:
    """``--task`` as a task id under ``tasks_root`` or as a path to a task folder."""
    for cand in (Path(ref), Path(tasks_root) / ref):
        if (cand / TASK_FILE).is_file():
            return cand.resolve()
    known = ", ".join(task_ids(tasks_root)) or "none"
    raise UnknownTask(f"unknown task '{ref}': neither a task folder nor a task of {tasks_root} (known: {known})")


def _ancestors(path: Path) -> list[Path]:
    here = Path(os.path.abspath(path))
    start = here if here.is_dir() else here.parent
    return [start, *start.parents]


def enclosing_task(path: Path, tasks_root: Path) -> Path | None:
    """The task folder of the submission at ``path`` (a folder or a source file), by rules 2 and 3."""
    chain = _ancestors(path)
    for anc in chain:
        if (anc / TASK_FILE).is_file():
            return anc
    root = Path(tasks_root)
    for anc in chain:
        if anc.name and (root / anc.name / TASK_FILE).is_file():
            return (root / anc.name).resolve()
    return None
