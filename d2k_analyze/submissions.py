"""Finding submissions (and their task) in the paths a user gives.

A submission is a folder holding ``submission.py``, ``labels.toml`` (a labelled corpus submission,
whose code may sit only in sub-folders, as a vendored package tree does) or any ``.py``/``.cu``
file directly (its sub-folders belong to it), or a standalone source file. Task folders (with ``task.toml``) are not
submissions themselves: only their expert implementation is. The task id is ``--task`` or comes
from the layout by the convention all commands share (:mod:`d2k_spec.layout`): the enclosing task
folder, else the nearest enclosing folder named like a task of the tasks root
(``corpus/<task>/<variant>``, ``runs/<run>/<task>``, ``anywhere/<task>/<variant>``).
"""

from __future__ import annotations

import os
from pathlib import Path

from d2k_spec.layout import enclosing_task

from .sources import SKIP_DIRS, SOURCE_SUFFIXES

SUBMISSION_SUFFIXES = {".py", ".cu", ".cuh"}


def infer_task(path: Path, tasks_root: Path | None = None) -> str | None:
    """Task id from the folder layout (:func:`d2k_spec.layout.enclosing_task`), or None.
    ``tasks_root`` defaults to the suite in effect."""
    if tasks_root is None:
        from d2k_spec.task import default_tasks_root

        tasks_root = default_tasks_root()
    try:
        folder = enclosing_task(Path(path), tasks_root)
    except (OSError, ValueError):
        return None
    return folder.name if folder is not None else None


def _is_submission_folder(folder: Path, names: list[str]) -> bool:
    if "task.toml" in names:
        return False  # a task folder: reference.py is not a submission; its expert/ is
    return "submission.py" in names or "labels.toml" in names or any(
        Path(n).suffix.lower() in SUBMISSION_SUFFIXES and (folder / n).is_file() for n in names
    )


def _walk(folder: Path, seen: set[tuple[int, int]], out: list[Path]) -> None:
    try:
        st = folder.stat()
        names = sorted(os.listdir(folder))
    except OSError:
        return
    key = (st.st_dev, st.st_ino)
    if key in seen:
        return
    seen.add(key)
    if _is_submission_folder(folder, names):
        out.append(folder)
        return
    for name in names:
        sub = folder / name
        if name in SKIP_DIRS or name.startswith("."):
            continue
        try:
            if sub.is_dir():
                _walk(sub, seen, out)
        except OSError:
            continue


def find_submissions(paths: list[Path], task: str | None = None, tasks_root: Path | None = None) -> list[tuple[str, Path, str | None]]:
    """(name, folder-or-file, task id) for every submission under ``paths``; the task is ``task``
    if given, else inferred from the layout against ``tasks_root`` (default: the suite in effect)."""
    found: list[Path] = []
    seen: set[tuple[int, int]] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            _walk(path, seen, found)
        elif path.is_file() and path.suffix.lower() in SOURCE_SUFFIXES:
            found.append(path)
        elif path.is_file():
            found.append(path)
    out: list[tuple[str, Path, str | None]] = []
    names: set[str] = set()
    for sub in found:
        name = str(sub)
        if name in names:
            continue
        names.add(name)
        out.append((name, sub, task or infer_task(sub, tasks_root)))
    return out
