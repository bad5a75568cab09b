"""Submissions as editable in-memory folders, and the list of submissions the tests cover.

A transformation takes a :class:`Submission` (relative path -> text) and returns a new one, so
that transformations never touch the repository and can be written to any temporary folder.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SOURCE_SUFFIXES = {".py", ".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc"}
CPP_SUFFIXES = SOURCE_SUFFIXES - {".py"}


class NotApplicable(Exception):
    """The transformation has nothing to transform in this submission (the reason says why)."""


@dataclass
class Submission:
    """A submission folder: its source files as text, other files as paths to copy."""

    name: str  # e.g. corpus/softmax/warp_cuda
    task: str
    files: dict[str, str]
    others: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what the transformation did, for messages
    meta: dict = field(default_factory=dict)  # structured record of it, for the checks

    def with_files(self, files: dict[str, str], note: str = "", **meta) -> "Submission":
        return Submission(self.name, self.task, files, dict(self.others), self.notes + ([note] if note else []),
                          {**self.meta, **meta})

    def python_files(self) -> list[str]:
        return sorted(p for p in self.files if p.endswith(".py"))

    def cpp_files(self) -> list[str]:
        return sorted(p for p in self.files if Path(p).suffix in CPP_SUFFIXES)

    @property
    def is_cuda(self) -> bool:
        return any(p.endswith(".cu") for p in self.files)

    def write(self, folder: Path) -> Path:
        """Write the submission under ``folder/<task>/<variant>`` (the layout the analyzer reads)."""
        dest = folder / self.task / Path(self.name).name
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        for rel, text in self.files.items():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_text(text)
        for rel, src in self.others.items():
            shutil.copy(src, dest / rel)
        return dest


def load_submission(folder: Path) -> Submission:
    folder = Path(folder)
    files, others = {}, {}
    for p in sorted(folder.rglob("*")):
        if not p.is_file() or "__pycache__" in p.parts:
            continue
        rel = str(p.relative_to(folder))
        if p.suffix in SOURCE_SUFFIXES:
            files[rel] = p.read_text()
        else:
            others[rel] = p
    return Submission(str(folder.relative_to(REPO)), folder.parent.name, files, others)


def submission_folders() -> list[Path]:
    """Every corpus submission (not corpus/wild/, vendored third-party code) and every task expert."""
    corpus = [p.parent for p in (REPO / "corpus").glob("*/*/submission.py") if p.parts[-3] != "wild"]
    experts = [p.parent for p in (REPO / "tasks").glob("*/expert/submission.py")]
    return sorted(set(corpus) | set(experts))
