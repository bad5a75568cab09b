"""The design-property catalogue (``rubrics/properties.toml``).

A property is a generic, detectable design property (``online_softmax``, ``tensor_cores``...). Task
design items name the properties that evidence them; the analyzer has one detector per property; the
corpus labels say which properties each kernel unit implements. The catalogue is the shared
vocabulary of all three, so it is data, loaded and checked here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .schema import Problem, SpecError, convert, read_toml

Level = Literal["L1", "L2", "L3"]
Language = Literal["cuda", "triton"]
Confidence = Literal["high", "medium", "low"]


@dataclass(frozen=True)
class Property:
    """One catalogue entry.

    ``confidence`` maps each language the property applies to onto how far source syntax alone can
    decide it (high: the construct *is* the property; medium: an idiom/dataflow check, the judge
    confirms borderline cases; low: semantic, the judge decides). Languages absent from the map
    are languages where the property is not applicable.
    """

    id: str
    level: Level
    name: str
    definition: str
    confidence: dict[str, Confidence]
    false_positives: list[str]
    judge_hint: str
    triton_convention: str = ""
    # One of the fixed-meaning properties every label set scores (the 21 ids of docs/properties.md);
    # the others are the catalogue's own extensions.
    core: bool = False
    signatures: dict[str, list[str]] = field(default_factory=dict)

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(self.confidence)

    def applies_to(self, language: str) -> bool:
        return language in self.confidence


@dataclass(frozen=True)
class Catalogue:
    version: int
    properties: list[Property]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {p.id: p for p in self.properties})

    def __contains__(self, prop_id: str) -> bool:
        return prop_id in self._by_id  # type: ignore[attr-defined]

    def __getitem__(self, prop_id: str) -> Property:
        return self._by_id[prop_id]  # type: ignore[attr-defined]

    def __iter__(self):
        return iter(self.properties)

    def __len__(self) -> int:
        return len(self.properties)

    @property
    def ids(self) -> list[str]:
        return [p.id for p in self.properties]

    @property
    def core_ids(self) -> list[str]:
        return [p.id for p in self.properties if p.core]


def default_catalogue_path() -> Path:
    """The catalogue in effect without ``--catalogue``: ``$D2K_SUITE``'s, else the bundled one
    (:mod:`d2k_spec.locations`)."""
    from .locations import catalogue_path

    return catalogue_path()


def check_catalogue(path: Path) -> tuple[Catalogue | None, list[Problem]]:
    """Load and validate the catalogue; return it (None if unusable) and every problem found."""
    problems: list[Problem] = []
    data = read_toml(path, problems)
    if data is None:
        return None, problems
    file = str(path)
    for extra in sorted(set(data) - {"version", "property"}):
        problems.append(Problem(file, extra, "unknown key"))
    version = convert(int, data.get("version"), file, "version", problems)
    if "property" not in data:
        problems.append(Problem(file, "property", "no [[property]] entries"))
        return None, problems
    props = convert(list[Property], data["property"], file, "property", problems)
    if props is None or version is None or any(p is None for p in props):
        return None, problems
    cat = Catalogue(version=version, properties=props)
    seen: set[str] = set()
    for i, prop in enumerate(cat.properties):
        key = f"property[{i}]"
        if prop.id in seen:
            problems.append(Problem(str(path), f"{key}.id", f"duplicate property id '{prop.id}'"))
        seen.add(prop.id)
        if not prop.confidence:
            problems.append(Problem(str(path), f"{key}.confidence", "applies to no language"))
        for lang in prop.confidence:
            if lang not in ("cuda", "triton"):
                problems.append(Problem(str(path), f"{key}.confidence.{lang}", "unknown language (cuda | triton)"))
        for lang in prop.signatures:
            if lang not in prop.confidence:
                problems.append(
                    Problem(str(path), f"{key}.signatures.{lang}", f"signatures for a language '{prop.id}' does not apply to")
                )
    return cat, problems


def load_catalogue(path: Path | None = None) -> Catalogue:
    """Load the catalogue or raise :class:`SpecError` listing every problem."""
    cat, problems = check_catalogue(path or default_catalogue_path())
    if problems or cat is None:
        raise SpecError(problems)
    return cat
