"""Finding submissions (and their task) in the paths a user gives.

A submission is a folder holding ``submission.py`` or any ``.py``/``.cu`` file directly (its
sub-folders belong to it), or a standalone source file. Task folders (with ``task.toml``) are not
submissions themselves: only their expert implementation is. The task id comes from the layout
(``corpus/<task>/<variant>``, ``runs/<run>/<task>``, ``tasks/<task>/expert``) unless given.
"""

from __future__ import annotations

import os
from pathlib import Path

from .sources import SKIP_DIRS, SOURCE_SUFFIXES

SUBMISSION_SUFFIXES = {".py", ".cu", ".cuh"}
WILD = "wild"  # corpus/wild/: real public kernels, labelled by property only (no task)


def infer_task(path: Path) -> str | None:
    """Task id from the folder layout, or None."""
    try:
        parts = Path(os.path.abspath(path)).parts
    except (OSError, ValueError):
        parts = Path(path).parts
    for i in range(len(parts) - 1, -1, -1):
        part = parts[i]
        if part == "corpus" and i + 1 < len(parts) and (i + 2 < len(parts) or Path(path).is_dir()):
            return None if parts[i + 1] == WILD else parts[i + 1]
        if part == "runs" and i + 2 < len(parts):
            return parts[i + 2]
        if part == "tasks" and i + 2 < len(parts):
            return parts[i + 1]
    return None


def _is_submission_folder(folder: Path, names: list[str]) -> bool:
    if "task.toml" in names:
        return False  # a task folder: reference.py is not a submission; its expert/ is
    return "submission.py" in names or any(
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


def find_submissions(paths: list[Path], task: str | None = None) -> list[tuple[str, Path, str | None]]:
    """(name, folder-or-file, task id) for every submission under ``paths``."""
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
        out.append((name, sub, task or infer_task(sub)))
    return out
