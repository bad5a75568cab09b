"""The agent's workspace: seeded with the task, exported as the submission, checked by digest.

One workspace per (run, task, attempt), outside the run folder (``d2k-profile runs/<run>`` must
find only the exported submission there). It is seeded with the statement (TASK.md), the
reference, and a submission skeleton; a CLI agent also gets AGENTS.md. The *harness files* are
what the agent must not change; their digests, and those of the task's own trusted files, are
taken at seeding and checked again before scoring (:func:`check_integrity`).
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from d2k_spec.task import Task

from .prompts import interface_text, workloads_text

SUBMISSION = "submission.py"
DESIGN_NOTES = "design.md"
CODE_SUFFIXES = (".py", ".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".c")
MAX_EXPORT_BYTES = 2 * 1024 * 1024  # larger files are data or generated code, not a submission
SKIP_PARTS = {"__pycache__", ".git", "d2k-out"}  # d2k-out: the test/bench tools' scratch results


def sha256_file(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def digests(root: Path, names: list[str]) -> dict[str, str | None]:
    """sha256 per file (None where it is missing) under ``root``."""
    return {n: (sha256_file(root / n) if (root / n).is_file() else None) for n in names}


def skeleton(task: Task) -> str:
    args = ", ".join(t.name for t in task.interface.inputs)
    outs = ", ".join(t.name for t in task.interface.outputs)
    return (
        f'"""Submission for task {task.id}: run({args}) -> {outs}.\n\n'
        "Write the kernel(s) here (Triton or CUDA C++). `run` must return what reference.py's\n"
        '`reference` returns, for every workload in TASK.md."""\n\n'
        "import torch\n\n\n"
        f"def run({args}):\n"
        "    raise NotImplementedError\n"
    )


def task_markdown(task: Task) -> str:
    return f"# {task.id}: {task.title}\n\n{task.statement.strip()}\n\n{interface_text(task)}\n{workloads_text(task)}"


@dataclass
class Workspace:
    """A seeded workspace and the digests taken when it was seeded."""

    path: Path
    task: Task
    harness: dict[str, str | None] = field(default_factory=dict)  # workspace copies, relative names
    trusted: dict[str, str | None] = field(default_factory=dict)  # the task folder's own files

    @property
    def harness_files(self) -> list[str]:
        return sorted(self.harness)


TRUSTED_FILES = ["task.toml", "reference.py"]
HARNESS_NAMES = ("TASK.md", "reference.py", "AGENTS.md")  # every file seed() may place besides the skeleton


def seed(task: Task, path: Path, extra_harness: dict[str, str] | None = None) -> Workspace:
    """Create the workspace at ``path`` (which must not exist) and take the digests."""
    path = Path(path)
    path.mkdir(parents=True)
    (path / "TASK.md").write_text(task_markdown(task))
    shutil.copyfile(task.reference_path, path / "reference.py")
    (path / SUBMISSION).write_text(skeleton(task))
    names = ["TASK.md", "reference.py"]
    for name, text in (extra_harness or {}).items():
        (path / name).write_text(text)
        names.append(name)
    return Workspace(path, task, digests(path, names), digests(task.path, TRUSTED_FILES))


@dataclass(frozen=True)
class Integrity:
    """The digest check before scoring. ``trusted_changed``: the task's own reference or spec
    changed during the run (the sandbox leaked): nothing is scored. ``harness_changed``: the agent
    edited its workspace copies; scoring uses the trusted task files anyway, so this is recorded."""

    trusted_changed: tuple[str, ...]
    harness_changed: tuple[str, ...]

    @property
    def scorable(self) -> bool:
        return not self.trusted_changed

    def to_dict(self) -> dict:
        return {"trusted_changed": list(self.trusted_changed), "harness_changed": list(self.harness_changed), "scorable": self.scorable}


def check_integrity(ws: Workspace) -> Integrity:
    now_trusted = digests(ws.task.path, list(ws.trusted))
    now_harness = digests(ws.path, list(ws.harness))
    return Integrity(
        tuple(n for n in ws.trusted if now_trusted[n] != ws.trusted[n]),
        tuple(n for n in ws.harness if now_harness[n] != ws.harness[n]),
    )


def submission_files(ws: Workspace) -> list[Path]:
    """The files that make up the submission: code files and design.md, minus the harness files,
    hidden folders, caches and oversized files (relative paths, sorted)."""
    out = []
    for p in sorted(ws.path.rglob("*")):
        rel = p.relative_to(ws.path)
        if not p.is_file() or p.is_symlink() or any(part.startswith(".") or part in SKIP_PARTS for part in rel.parts):
            continue
        if str(rel) in ws.harness or not (p.suffix in CODE_SUFFIXES or rel.name == DESIGN_NOTES):
            continue
        if p.stat().st_size > MAX_EXPORT_BYTES:
            continue
        out.append(rel)
    return out


def export(ws: Workspace, dest: Path) -> dict[str, str]:
    """Copy the submission into ``dest`` (emptied of earlier exports first); returns the digest of
    every copied file, which the final record stores and validates against."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.iterdir():
        if old.name.startswith("."):
            continue  # .agent/: transcripts and snapshots
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    copied = {}
    for rel in submission_files(ws):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ws.path / rel, target)
        copied[str(rel)] = sha256_file(target)
    return copied
