"""The detectors against the hand-written corpus labels (corpus/<task>/..., tasks/*/expert).

Scored with :func:`d2k_analyze.eval_labels.evaluate` itself, so a labelled kernel the analyzer
does not report counts as a miss for every property it implements. Over the properties with
support (at least one labelled positive) the macro-F1 must be >= 0.90 and no property below 0.75.
The vendored public kernels of ``corpus/wild`` are scored by ``test_wild_corpus.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from d2k_analyze.analysis import analyze_paths
from d2k_analyze.eval_labels import evaluate

ROOT = Path(__file__).resolve().parents[2]
MACRO_F1_FLOOR = 0.90
PROPERTY_F1_FLOOR = 0.75


def _roots() -> list[Path]:
    return sorted(p for p in (ROOT / "corpus").iterdir() if p.is_dir() and p.name != "wild") + [ROOT / "tasks"]


@pytest.fixture(scope="module")
def evaluation(catalogue):
    roots = _roots()
    return evaluate(analyze_paths(roots, catalogue=catalogue), roots, catalogue)


def _report(ev) -> str:
    rows = [f"macro-F1 {ev.macro_f1:.3f}" if ev.macro_f1 is not None else "no support"]
    rows.append(f"{'property':32s} {'tp':>4} {'fp':>4} {'fn':>4} {'tn':>4} {'F1':>6}")
    for s in ev.scores:
        rows.append(f"{s.property:32s} {s.tp:4d} {s.fp:4d} {s.fn:4d} {s.tn:4d} {s.f1 if s.f1 is not None else float('nan'):6.2f}")
    rows.append("misclassified:")
    rows += [f"  {m.property:30s} {Path(m.folder).name}:{m.unit} label={m.label} found={m.predicted} ({m.reason})" for m in ev.misses]
    rows += ["problems:"] + [f"  {p}" for p in ev.problems]
    return "\n".join(rows)


def test_detectors_match_corpus_labels(evaluation):
    assert evaluation.folders >= 15, "the bundled labelled corpus is missing"
    report = _report(evaluation)
    print(report)
    assert evaluation.macro_f1 is not None and evaluation.macro_f1 >= MACRO_F1_FLOOR, report
    low = {s.property: s.f1 for s in evaluation.scores if s.f1 is not None and s.f1 < PROPERTY_F1_FLOOR}
    assert not low, f"properties below {PROPERTY_F1_FLOOR}: {low}\n{report}"


def test_every_labelled_kernel_is_found_and_launch_flags_match(evaluation):
    assert evaluation.kernels >= 25, "the bundled labelled corpus is missing"
    assert not evaluation.problems, "\n".join(evaluation.problems)
