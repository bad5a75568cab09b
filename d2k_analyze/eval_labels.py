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
    layers: "LayerEvaluation | None" = None  # design items per layer (static / judge / combined)
    corpus: str = "all"  # which labels: all, hand-written (naive/optimized/expert), wild (real public code)
    parts: list["Evaluation"] = field(default_factory=list)  # per corpus, when the paths hold both

    @property
    def macro_f1(self) -> float | None:
        f1s = [s.f1 for s in self.scores if s.f1 is not None]
        return sum(f1s) / len(f1s) if f1s else None


def _same_file(a: str | Path, b: Path) -> bool:
    try:
        return Path(a).resolve() == b.resolve()
    except (OSError, RuntimeError):
        return False


def _find_units(analysis: SubmissionAnalysis | None, folder: Path, label: KernelLabels,
                labelled: set[str]) -> list[UnitAnalysis]:
    """The units a kernel label speaks for: the unit of that name, then (for a label naming a
    template ``k``) the explicit specialisations ``k<...>`` in the same file that have no label of
    their own, since a template and its specialisations are one kernel to a reader (a template
    declared without a body has only its specialisations)."""
    if analysis is None:
        return []
    target = folder / label.file
    same_file = [ua for ua in analysis.units if _same_file(ua.unit.file, target)]
    exact = [ua for ua in same_file if ua.unit.name == label.name]
    special = [ua for ua in same_file if ua.unit.name.startswith(label.name + "<") and ua.unit.name not in labelled]
    return exact[:1] + special


def _combined(units: list[UnitAnalysis], prop: str) -> tuple[int | None, PropertyFinding | None]:
    """One prediction over a kernel's units: present in any of them, else absent where any is
    decided, else undecided; with the finding that decided it."""
    findings = [ua.findings.get(prop) for ua in units]
    decided = [(p, f) for f in findings if (p := _prediction(f)) is not None]
    for p, f in decided:
        if p:
            return 1, f
    return (0, decided[0][1]) if decided else (None, findings[0] if findings else None)


def _prediction(finding: PropertyFinding | None) -> int | None:
    if finding is None or finding.status == Status.NOT_APPLICABLE:
        return None
    return int(finding.status == Status.PRESENT)


WILD = "wild"
HAND_WRITTEN = "hand-written"


def corpus_of(design_level: str) -> str:
    """Real public kernels (``design_level = "wild"``) are scored apart from the corpus written
    for this project: the two answer different questions (does the analyzer work on code nobody
    here wrote? does it separate the design levels?)."""
    return WILD if design_level == WILD else HAND_WRITTEN


def evaluate(analyses: list[SubmissionAnalysis], roots: list[Path], catalogue: Catalogue) -> Evaluation:
    """Compare ``analyses`` with every labels file under ``roots``; when both hand-written and
    wild labels are present, ``parts`` holds each corpus on its own."""
    ev = _evaluate(analyses, roots, catalogue, None)
    kinds = {corpus_of(labels.design_level) for folder in labelled_folders(*roots)
             if (labels := check_labels(folder, catalogue)[0]) is not None}
    if len(kinds) > 1:
        ev.parts = [_evaluate(analyses, roots, catalogue, kind) for kind in (HAND_WRITTEN, WILD)]
    return ev


def _evaluate(analyses: list[SubmissionAnalysis], roots: list[Path], catalogue: Catalogue, only: str | None) -> Evaluation:
    by_folder = {}
    for a in analyses:
        try:
            by_folder[Path(a.path).resolve()] = a
        except (OSError, RuntimeError):
            continue
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # tp fp fn tn
    ev = Evaluation([], [], corpus=only or "all")
    for folder in labelled_folders(*roots):
        labels, problems = check_labels(folder, catalogue)
        if labels is not None and only is not None and corpus_of(labels.design_level) != only:
            continue
        ev.problems += [str(p) for p in problems]
        if labels is None:
            continue
        ev.folders += 1
        analysis = by_folder.get(folder.resolve())
        if analysis is None:
            ev.problems.append(f"{folder}: labelled but not analysed as a submission")
        labelled = {k.name for k in labels.kernel}
        for kl in labels.kernel:
            ev.kernels += 1
            units = _find_units(analysis, folder, kl, labelled)
            ua = units[0] if units else None
            if ua is None:
                ev.problems.append(f"{folder / kl.file}: labelled kernel '{kl.name}' not found by the analyzer")
            elif ua.unit.launched != kl.launched:
                ev.problems.append(
                    f"{folder / kl.file}: kernel '{kl.name}' labelled launched={kl.launched}, analyzer says {ua.unit.launched}"
                )
            for prop in catalogue.ids:
                label = labels.verdict(kl, prop, catalogue)
                predicted, finding = _combined(units, prop) if units else (0, None)
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


# --- design items per layer: static-only, judge-only, combined ---------------------------------
#
# The judge grades design items, not kernel units, so the layers are compared at the item level.
# A labelled submission's item label is derived from its kernel labels exactly as the static
# verdict is derived from findings (scoring.static_verdict): a property is present if a launched
# labelled kernel implements it, absent if every launched kernel it applies to is labelled 0,
# undecided otherwise. The positive class is "implemented"; partial counts as not implemented on
# both sides. Items whose label cannot be decided are skipped; so are items a layer leaves
# undecided (static "not assessed", judge error), and ``decided`` says how many each layer covered.
# Rows are keyed by the item's properties (one row per property for single-property items), so
# the same property pools over tasks.

LAYERS = ("static", "judge", "combined")


@dataclass(frozen=True)
class LayerScore:
    key: str  # the item's properties joined by "+"
    layer: str
    tp: int
    fp: int
    fn: int
    tn: int
    undecided: int  # labelled pairs this layer did not decide

    @property
    def support(self) -> int:
        return self.tp + self.fn

    @property
    def decided(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def f1(self) -> float | None:
        if not self.support:
            return None
        p = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        r = self.tp / self.support
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def accuracy(self) -> float | None:
        return (self.tp + self.tn) / self.decided if self.decided else None


@dataclass
class LayerEvaluation:
    scores: list[LayerScore]
    items: int = 0  # labelled (submission, item) pairs with a decidable label
    judged: bool = False

    def macro_f1(self, layer: str) -> float | None:
        f1s = [s.f1 for s in self.scores if s.layer == layer and s.f1 is not None]
        return sum(f1s) / len(f1s) if f1s else None


def item_labels(labels, task, catalogue: Catalogue) -> dict[str, int]:
    """``{item: 1/0}`` from a submission's kernel labels (undecidable items left out)."""
    from .model import Verdict
    from .scoring import PropertyState, static_verdict

    launched = [k for k in labels.kernel if k.launched]
    states = {}
    for prop in {p for d in task.design for p in d.properties}:
        if prop not in catalogue:
            states[prop] = PropertyState(prop, "undecided")
            continue
        votes = [labels.verdict(k, prop, catalogue) for k in launched]
        if not launched:
            state = "absent"
        elif 1 in votes:
            state = "present"
        elif votes and all(v == 0 for v in votes):
            state = "absent"
        else:
            state = "undecided"
        states[prop] = PropertyState(prop, state)
    out = {}
    for d in task.design:
        v = static_verdict(d, states)
        if v != Verdict.NOT_ASSESSED:
            out[d.id] = int(v == Verdict.IMPLEMENTED)
    return out


def _layer_predictions(result) -> dict[str, dict[str, int | None]]:
    """Per layer, ``{item: 1/0/None}`` (raw verdicts, before dependency capping)."""
    from .model import Verdict

    def binary(v) -> int | None:
        return None if v is None or v == Verdict.NOT_ASSESSED else int(v == Verdict.IMPLEMENTED)

    static = result.static_score or result.score
    out: dict[str, dict[str, int | None]] = {layer: {} for layer in LAYERS}
    for v in static.items:
        out["static"][v.item] = binary(v.raw)
    for v in result.score.items:
        out["combined"][v.item] = binary(v.raw)
    judged = result.judge.items if result.judge is not None else {}
    for v in static.items:
        out["judge"][v.item] = binary(judged[v.item].verdict) if v.item in judged else None
    return out


def evaluate_layers(results, roots: list[Path], catalogue: Catalogue, tasks: dict, judged: bool = False) -> LayerEvaluation:
    """Item verdicts of each layer against the labels of every labelled, scored submission."""
    by_folder = {}
    for r in results:
        if r.score is not None:
            try:
                by_folder[Path(r.analysis.path).resolve()] = r
            except (OSError, RuntimeError):
                continue
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])  # tp fp fn tn undecided
    ev = LayerEvaluation([], judged=judged)
    for folder in labelled_folders(*roots):
        result = by_folder.get(folder.resolve())
        if result is None or result.score.task not in tasks:
            continue
        labels, _ = check_labels(folder, catalogue)
        if labels is None:
            continue
        task = tasks[result.score.task]
        truth = item_labels(labels, task, catalogue)
        predictions = _layer_predictions(result)
        for d in task.design:
            if d.id not in truth:
                continue
            ev.items += 1
            key = "+".join(d.properties)
            for layer in LAYERS:
                cell = counts[(key, layer)]
                pred, label = predictions[layer].get(d.id), truth[d.id]
                if pred is None:
                    cell[4] += 1
                else:
                    cell[(0 if pred else 2) if label else (1 if pred else 3)] += 1
    ev.scores = [LayerScore(key, layer, *c) for (key, layer), c in sorted(counts.items())]
    return ev
