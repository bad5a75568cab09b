"""Where the benchmark's data lives: the task folders, the property catalogue, the judge's templates.

Every command resolves them the same way, first match wins:

1. the command line: ``--tasks-root DIR`` and ``--catalogue FILE``;
2. the environment variable ``D2K_SUITE=DIR``, a user's own suite laid out like this repository:
   ``DIR/tasks/<task_id>/task.toml`` and, optionally, ``DIR/rubrics/properties.toml`` (a suite that
   keeps the standard catalogue need not copy it);
3. the bundled suite: the repository checkout when running from source (an editable install), else
   the copy inside the installed package (``d2k_spec/_data/``: the wheel ships ``rubrics/`` and
   ``tasks/`` there, see ``pyproject.toml``).

A location that was asked for but does not exist is a :class:`LocationError` (each command reports
it in one line, exit 2); the bundled suite is always there.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_SUITE = "D2K_SUITE"
CATALOGUE_FILE = Path("rubrics") / "properties.toml"
TASKS_DIR = "tasks"
CORPUS_DIR = "corpus"


class LocationError(Exception):
    """A data location that was asked for (flag or environment) and is missing."""


def bundled_root() -> Path:
    """The folder holding the bundled ``rubrics/`` and ``tasks/``: the package's ``_data`` copy in a
    wheel, else the checkout this package was imported from."""
    here = Path(__file__).resolve().parent
    packaged = here / "_data"
    if (packaged / CATALOGUE_FILE).is_file():
        return packaged
    return here.parent


def suite_root(environ: dict[str, str] | None = None) -> Path:
    """``$D2K_SUITE`` when set (it must be a folder), else the bundled suite."""
    env = os.environ if environ is None else environ
    value = env.get(ENV_SUITE, "").strip()
    if not value:
        return bundled_root()
    root = Path(value).expanduser()
    if not root.is_dir():
        raise LocationError(f"{ENV_SUITE}={value}: no such folder")
    return root


def tasks_root(flag: str | Path | None = None, environ: dict[str, str] | None = None) -> Path:
    """The folder of task folders: ``--tasks-root``, else ``$D2K_SUITE/tasks``, else the bundled one."""
    if flag:
        root = Path(flag).expanduser()
        if not root.is_dir():
            raise LocationError(f"--tasks-root: no such folder: {flag}")
        return root
    root = suite_root(environ) / TASKS_DIR
    if not root.is_dir():
        raise LocationError(f"{ENV_SUITE}={suite_root(environ)}: no {TASKS_DIR}/ folder in it")
    return root


def catalogue_path(flag: str | Path | None = None, environ: dict[str, str] | None = None) -> Path:
    """The property catalogue: ``--catalogue``, else ``$D2K_SUITE/rubrics/properties.toml`` where
    that suite has one, else the bundled catalogue."""
    if flag:
        path = Path(flag).expanduser()
        if not path.is_file():
            raise LocationError(f"--catalogue: no such file: {flag}")
        return path
    own = suite_root(environ) / CATALOGUE_FILE
    return own if own.is_file() else bundled_root() / CATALOGUE_FILE


def judge_dir() -> Path:
    """The judge's versioned prompt templates and price table (tool data: always the bundled copy)."""
    return bundled_root() / "rubrics" / "judge"


def default_label_folders(tasks: Path) -> list[Path]:
    """Where ``labels.toml`` files are looked for by default: the suite's ``corpus/`` (a checkout
    has one; a wheel does not ship it) and the task folders (the experts' labels)."""
    corpus = tasks.parent / CORPUS_DIR
    return [p for p in (corpus, tasks) if p.is_dir()]
