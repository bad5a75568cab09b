"""Ground-truth labels of the corpus: ``<submission folder>/labels.toml``.

Each labelled submission folder (under ``corpus/`` or a task's ``expert/``) says, for every kernel
unit in it, which catalogue properties it clearly implements. Every other property that applies to
the kernel's language counts as clearly *not* implemented, except those listed as ``undecided``
(genuinely not decidable from the source, e.g. the Triton conventions of docs/properties.md). Listing
what is present and what is undecidable keeps a 36-property label set short and reviewable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .catalogue import Catalogue
from .schema import Problem, SpecError, build, derived, read_toml

LABELS_FILE = "labels.toml"


@dataclass(frozen=True)
class KernelLabels:
    """Labels of one kernel unit: a ``__global__`` function or a ``@triton.jit`` function (with the
    device helpers it calls). ``launched`` says whether the submission's entry point reaches it."""

    name: str
    file: str
    language: Literal["cuda", "triton"]
    implemented: list[str]
    undecided: list[str] = field(default_factory=list)
    launched: bool = True
    note: str = ""

    def verdict(self, prop_id: str, catalogue: Catalogue, scope: str = "all") -> int | None:
        """1 / 0 for a labelled property, None where undecided, not applicable to the language, or
        outside the label set's ``scope``."""
        prop = catalogue[prop_id]
        if prop_id in self.undecided or not prop.applies_to(self.language):
            return None
        if scope == "core" and not prop.core:
            return None
        return int(prop_id in self.implemented)


@dataclass(frozen=True)
class SubmissionLabels:
    """``scope``: which properties the labels speak for. ``all`` (the hand-written corpus): every
    catalogue property of the kernel's language. ``core``: only the 21 fixed-meaning properties
    (``core = true`` in the catalogue), as for real public kernels labelled by hand
    (``corpus/wild/``); the catalogue's extensions then carry no verdict."""

    description: str
    design_level: Literal["naive", "optimized", "expert", "wild"]
    kernel: list[KernelLabels]
    scope: Literal["all", "core"] = "all"
    folder: Path = derived()

    def verdict(self, kernel: KernelLabels, prop_id: str, catalogue: Catalogue) -> int | None:
        return kernel.verdict(prop_id, catalogue, self.scope)


def check_labels(folder: Path, catalogue: Catalogue) -> tuple[SubmissionLabels | None, list[Problem]]:
    file = folder / LABELS_FILE
    problems: list[Problem] = []
    data = read_toml(file, problems)
    if data is None:
        return None, problems
    labels = build(SubmissionLabels, data, str(file), "", problems)
    if labels is None:
        return None, problems
    object.__setattr__(labels, "folder", folder)
    seen: set[tuple[str, str]] = set()
    for i, k in enumerate(labels.kernel):
        key = f"kernel[{i}]"
        if (k.file, k.name) in seen:
            problems.append(Problem(str(file), f"{key}.name", f"kernel '{k.name}' in {k.file} labelled twice"))
        seen.add((k.file, k.name))
        if not (folder / k.file).is_file():
            problems.append(Problem(str(file), f"{key}.file", f"no file '{k.file}' in {folder}"))
        for field_name in ("implemented", "undecided"):
            for p in getattr(k, field_name):
                if p not in catalogue:
                    problems.append(Problem(str(file), f"{key}.{field_name}", f"unknown property '{p}'"))
                elif labels.scope == "core" and not catalogue[p].core:
                    problems.append(Problem(str(file), f"{key}.{field_name}", f"property '{p}' is outside scope 'core'"))
                elif not catalogue[p].applies_to(k.language):
                    problems.append(
                        Problem(str(file), f"{key}.{field_name}", f"property '{p}' does not apply to {k.language}")
                    )
        for p in sorted(set(k.implemented) & set(k.undecided)):
            problems.append(Problem(str(file), f"{key}", f"property '{p}' is both implemented and undecided"))
    if not labels.kernel:
        problems.append(Problem(str(file), "kernel", "labels no kernel unit"))
    return labels, problems


def labelled_folders(*roots: Path) -> list[Path]:
    """Every folder under ``roots`` that holds a labels file."""
    found = {p.parent for root in roots for p in Path(root).rglob(LABELS_FILE)}
    return sorted(found)


def load_labels(*roots: Path, catalogue: Catalogue) -> list[SubmissionLabels]:
    """All labels under ``roots``; raise :class:`SpecError` listing every problem."""
    out, problems = [], []
    for folder in labelled_folders(*roots):
        labels, found = check_labels(folder, catalogue)
        problems += found
        if labels is not None:
            out.append(labels)
    if problems:
        raise SpecError(problems)
    return out
