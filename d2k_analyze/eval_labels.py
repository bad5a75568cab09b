"""How well the detectors agree with the corpus labels (``--eval-labels``).

Every labelled folder (``labels.toml``, see :mod:`d2k_spec.labels`) says per kernel unit which
properties are implemented (1), which are undecidable, and implicitly that every other property
of the kernel's language is not implemented (0). Against that, per property:

    precision = TP / (TP + FP)     recall = TP / (TP + FN)     F1 = 2PR / (P + R)
    support   = labelled positives compared

Pairs are skipped when the label is undecided or the analyzer says NOT_APPLICABLE (or has no
finding): neither side claims anything there. A labelled kernel the analyzer did not find counts
as predicted 0 for all its properties, so a parser miss costs recall. Macro-F1 averages F1 over
the properties with support; a property with support 0 has no F1 (its false positives are still
listed). Every disagreement is listed with the evidence the analyzer used, to fix the detector or
the label.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from d2k_spec.catalogue import Catalogue
from d2k_spec.labels import KernelLabels, check_labels, labelled_folders

from .model import Evidence, PropertyFinding, Status, SubmissionAnalysis, UnitAnalysis


@dataclass(frozen=True)
class PropertyScore:
    property: str
    level: str
    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def support(self) -> int:
        return self.tp + self.fn

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / self.support if self.support else None

    @property
    def f1(self) -> float | None:
        """None without support; 0 when nothing labelled positive was found."""
        if not self.support:
            return None
        p, r = self.precision or 0.0, self.recall or 0.0
        return 2 * p * r / (p + r) if p + r else 0.0


@dataclass(frozen=True)
class Miss:
    """One disagreement: a kernel unit, a property, the label and what the analyzer said."""

    folder: str
    unit: str
    file: str
    property: str
    label: int
    predicted: int
    evidence: tuple[Evidence, ...] = ()
    reason: str = ""


@dataclass
class Evaluation:
    scores: list[PropertyScore]
    misses: list[Miss]
    folders: int = 0
    kernels: int = 0
    skipped: int = 0  # pairs skipped (undecided label, NOT_APPLICABLE or no finding)
    problems: list[str] = field(default_factory=list)  # label errors, kernels not found, liveness

    @property
    def macro_f1(self) -> float | None:
        f1s = [s.f1 for s in self.scores if s.f1 is not None]
        return sum(f1s) / len(f1s) if f1s else None


def _same_file(a: str | Path, b: Path) -> bool:
    try:
        return Path(a).resolve() == b.resolve()
    except (OSError, RuntimeError):
        return False


def _find_unit(analysis: SubmissionAnalysis | None, folder: Path, label: KernelLabels) -> UnitAnalysis | None:
    if analysis is None:
        return None
    target = folder / label.file
    for ua in analysis.units:
        if ua.unit.name == label.name and _same_file(ua.unit.file, target):
            return ua
    return None


def _prediction(finding: PropertyFinding | None) -> int | None:
    if finding is None or finding.status == Status.NOT_APPLICABLE:
        return None
    return int(finding.status == Status.PRESENT)


def evaluate(analyses: list[SubmissionAnalysis], roots: list[Path], catalogue: Catalogue) -> Evaluation:
    """Compare ``analyses`` with every labels file under ``roots``."""
    by_folder = {}
    for a in analyses:
        try:
            by_folder[Path(a.path).resolve()] = a
        except (OSError, RuntimeError):
            continue
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # tp fp fn tn
    ev = Evaluation([], [])
    for folder in labelled_folders(*roots):
        labels, problems = check_labels(folder, catalogue)
        ev.problems += [str(p) for p in problems]
        if labels is None:
            continue
        ev.folders += 1
        analysis = by_folder.get(folder.resolve())
        if analysis is None:
            ev.problems.append(f"{folder}: labelled but not analysed as a submission")
        for kl in labels.kernel:
            ev.kernels += 1
            ua = _find_unit(analysis, folder, kl)
            if ua is None:
                ev.problems.append(f"{folder / kl.file}: labelled kernel '{kl.name}' not found by the analyzer")
            elif ua.unit.launched != kl.launched:
                ev.problems.append(
                    f"{folder / kl.file}: kernel '{kl.name}' labelled launched={kl.launched}, analyzer says {ua.unit.launched}"
                )
            for prop in catalogue.ids:
                label = kl.verdict(prop, catalogue)
                finding = ua.findings.get(prop) if ua else None
                predicted = _prediction(finding) if ua else 0
                if label is None or predicted is None:
                    ev.skipped += label is not None
                    continue
                cell = counts[prop]
                cell[(0 if predicted else 2) if label else (1 if predicted else 3)] += 1
                if label != predicted:
                    ev.misses.append(
                        Miss(
                            str(folder), kl.name, kl.file, prop, label, predicted,
                            finding.evidence if finding else (),
                            (finding.reason if finding else "kernel unit not found") or "",
                        )
                    )
    ev.scores = [
        PropertyScore(p.id, p.level, *counts[p.id]) for p in catalogue if p.id in counts
    ]
    return ev
