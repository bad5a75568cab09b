"""Every reference in the README, docs/, rubrics/, code and labels points inside the repository:
no design notes a user does not have, and every docs/*.md, examples/ or code path a page names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = re.compile(r"\b(DESIGN|PROPERTIES|TASKS|TASK-CHECKLIST)\.md|research/[\w-]+\.md|shared/[A-Z]")
NAMED_PATH = re.compile(r"`((?:docs|examples|benchmarks|rubrics|tasks|tests|d2k_\w+)/[\w./-]*[\w/])`")
SUFFIXES = {".md", ".py", ".toml", ".txt", ".cu", ".cuh", ".sh"}


def texts() -> list[Path]:
    files = [ROOT / "README.md", *ROOT.glob("docs/**/*.md"), *ROOT.glob("rubrics/**/*"), *ROOT.glob("d2k_*/**/*.py"),
             *ROOT.glob("tests/**/*.py"), *ROOT.glob("corpus/**/labels.toml"), *ROOT.glob("benchmarks/*"), *ROOT.glob("tasks/**/*")]
    return [f for f in files if f.is_file() and f.suffix in SUFFIXES and f.name != Path(__file__).name]


def test_no_reference_points_outside_the_repository():
    found = [f"{f.relative_to(ROOT)}:{n}: {line.strip()[:100]}"
             for f in texts() for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1) if OUTSIDE.search(line)]
    assert found == []


def test_paths_named_in_the_readme_and_docs_exist():
    missing = []
    for page in [ROOT / "README.md", *ROOT.glob("docs/*.md")]:
        for path in NAMED_PATH.findall(page.read_text()):
            if "<" in path or "*" in path:
                continue
            if not (ROOT / path).exists():
                missing.append(f"{page.relative_to(ROOT)}: {path}")
    assert missing == []
