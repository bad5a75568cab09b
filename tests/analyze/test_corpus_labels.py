"""The detectors against the corpus labels (every labelled folder under corpus/ and tasks/).

Each kernel unit's findings are compared with its labels.toml: PRESENT = 1, ABSENT = 0;
NOT_APPLICABLE findings and undecided labels are skipped. Over the properties with support (at
least one labelled positive) the macro-F1 must be >= 0.90 and no property below 0.75.
"""

from __future__ import annotations

from pathlib import Path

from d2k_analyze.analysis import analyze_submission
from d2k_analyze.model import Status
from d2k_spec.labels import check_labels, labelled_folders

ROOT = Path(__file__).resolve().parents[2]
MACRO_F1_FLOOR = 0.90
PROPERTY_F1_FLOOR = 0.75



def _evaluate(catalogue):
    counts: dict[str, list[int]] = {}
    mistakes: list[str] = []
    launch_mismatches: list[str] = []
    folders = labelled_folders(ROOT / "corpus", ROOT / "tasks")
    for folder in folders:
        labels, problems = check_labels(folder, catalogue)
        if labels is None:
            continue
        result = analyze_submission(str(folder.relative_to(ROOT)), folder, None, catalogue)
        units = {(Path(u.unit.file).name, u.unit.name): u for u in result.units}
        for k in labels.kernel:
            unit = units.get((Path(k.file).name, k.name))
            if unit is None:
                mistakes.append(f"{folder.relative_to(ROOT)}: kernel {k.name} not found")
                continue
            if unit.unit.launched != k.launched:
                launch_mismatches.append(f"{folder.relative_to(ROOT)}:{k.name}: launched={unit.unit.launched}, label {k.launched}")
            for prop in catalogue:
                truth = k.verdict(prop.id, catalogue)
                finding = unit.findings.get(prop.id)
                if truth is None or finding is None or finding.status == Status.NOT_APPLICABLE:
                    continue
                pred = int(finding.status == Status.PRESENT)
                c = counts.setdefault(prop.id, [0, 0, 0, 0])  # tp fp fn tn
                c[[[3, 2], [1, 0]][pred][truth]] += 1
                if pred != truth:
                    mistakes.append(f"{prop.id:30s} {folder.relative_to(ROOT)}:{k.name} label={truth} found={pred} ({finding.reason})")
    return folders, counts, mistakes, launch_mismatches


def _f1(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0


def _table(counts) -> str:
    rows = [f"{'property':32s} {'tp':>4} {'fp':>4} {'fn':>4} {'tn':>4} {'F1':>6}"]
    for prop, (tp, fp, fn, tn) in sorted(counts.items()):
        rows.append(f"{prop:32s} {tp:4d} {fp:4d} {fn:4d} {tn:4d} {_f1(tp, fp, fn):6.2f}")
    return "\n".join(rows)


def test_detectors_match_corpus_labels(catalogue):
    folders, counts, mistakes, launch_mismatches = _evaluate(catalogue)
    assert len(folders) >= 15, "the bundled labelled corpus is missing"
    supported = {p: c for p, c in counts.items() if c[0] + c[2] >= 1}
    f1 = {p: _f1(c[0], c[1], c[2]) for p, c in supported.items()}
    assert f1, "no property has a positive label"
    macro = sum(f1.values()) / len(f1)
    report = f"\nmacro-F1 {macro:.3f} over {len(f1)} properties\n{_table(counts)}\n\nmisclassified:\n" + "\n".join(mistakes)
    print(report)
    assert macro >= MACRO_F1_FLOOR, report
    low = {p: v for p, v in f1.items() if v < PROPERTY_F1_FLOOR}
    assert not low, f"properties below {PROPERTY_F1_FLOOR}: {low}{report}"


def test_launched_flags_match_labels(catalogue):
    folders, _, _, launch_mismatches = _evaluate(catalogue)
    assert folders, "the bundled labelled corpus is missing"
    assert not launch_mismatches, "\n".join(launch_mismatches)
