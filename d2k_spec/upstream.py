"""Provenance of vendored public kernels: ``corpus/wild/<owner>__<repo>/UPSTREAM.toml``.

The wild corpus holds real kernels from public repositories, copied verbatim so that detectors
are measured on code nobody here wrote. Each repository folder records where its files came
from (repository, pinned commit, license and the upstream path of every vendored file) and
carries the upstream license file beside it. Labelled submission folders sit below it
(``<owner>__<repo>/<name>/labels.toml``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .schema import Problem, build, derived, read_toml

UPSTREAM_FILE = "UPSTREAM.toml"
_COMMIT = re.compile(r"[0-9a-f]{40}")
_REPO = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")


@dataclass(frozen=True)
class VendoredFile:
    path: str  # relative to the UPSTREAM.toml folder
    upstream: str  # path in the upstream repository at ``commit``


@dataclass(frozen=True)
class Upstream:
    repo: str  # owner/name on GitHub
    commit: str  # the 40-hex commit the files were copied from
    license: str  # SPDX id
    license_file: str  # the upstream license text, copied beside this file
    file: list[VendoredFile]
    folder: Path = derived()


def check_upstream(folder: Path) -> tuple[Upstream | None, list[Problem]]:
    """Load ``folder/UPSTREAM.toml`` and check it against the folder's contents."""
    path = folder / UPSTREAM_FILE
    problems: list[Problem] = []
    data = read_toml(path, problems)
    if data is None:
        return None, problems
    up = build(Upstream, data, str(path), "", problems)
    if up is None:
        return None, problems
    object.__setattr__(up, "folder", folder)
    where = str(path)
    if not _REPO.fullmatch(up.repo):
        problems.append(Problem(where, "repo", f"'{up.repo}' is not owner/name"))
    elif folder.name != up.repo.replace("/", "__"):
        problems.append(Problem(where, "repo", f"folder should be named {up.repo.replace('/', '__')}"))
    if not _COMMIT.fullmatch(up.commit):
        problems.append(Problem(where, "commit", "not a 40-hex commit id"))
    if not (folder / up.license_file).is_file():
        problems.append(Problem(where, "license_file", f"no file '{up.license_file}' in {folder}"))
    seen: set[str] = set()
    for i, f in enumerate(up.file):
        if f.path in seen:
            problems.append(Problem(where, f"file[{i}].path", f"'{f.path}' listed twice"))
        seen.add(f.path)
        if not (folder / f.path).is_file():
            problems.append(Problem(where, f"file[{i}].path", f"no file '{f.path}' in {folder}"))
    return up, problems


def upstream_folders(root: Path) -> list[Path]:
    """Every folder under ``root`` holding an UPSTREAM.toml."""
    return sorted(p.parent for p in Path(root).rglob(UPSTREAM_FILE))
