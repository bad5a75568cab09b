"""Precision / recall / F1 / support against labels, by hand-counted cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from d2k_analyze.eval_labels import PropertyScore, evaluate
from d2k_analyze.model import Evidence, KernelUnit, PropertyFinding, Span, Status, SubmissionAnalysis, UnitAnalysis
from d2k_spec.catalogue import Catalogue, Property

CATALOGUE = Catalogue(1, [
    Property("online_softmax", "L1", "o", "d", {"cuda": "medium", "triton": "medium"}, [], "h"),
    Property("vectorized_access", "L3", "v", "d", {"cuda": "high"}, [], "h"),
    Property("warp_shuffle_reduction", "L3", "w", "d", {"cuda": "high", "triton": "medium"}, [], "h"),
    Property("tensor_cores", "L3", "t", "d", {"cuda": "high", "triton": "high"}, [], "h"),
])

LABELS = """
description = "test"
design_level = "optimized"

[[kernel]]
name = "{name}"
file = "kernel.cu"
language = "cuda"
implemented = {implemented}
undecided = {undecided}
"""


def _folder(root: Path, variant: str, name: str, implemented: list[str], undecided: list[str] = ()) -> Path:
    folder = root / "corpus" / "softmax" / variant
    folder.mkdir(parents=True)
    (folder / "kernel.cu").write_text("__global__ void k() {}\n")
    (folder / "labels.toml").write_text(
        LABELS.format(name=name, implemented=list(implemented), undecided=list(undecided)).replace("'", '"')
    )
    return folder


def _analysis(folder: Path, name: str, **statuses: Status) -> SubmissionAnalysis:
    f = str(folder / "kernel.cu")
    u = KernelUnit(name, "cuda", f, Span(f, 1, 1), "src", launched=True)
    ev = (Evidence(Span(f, 1, 1), "x", "syntax", "high"),)
    findings = {p: PropertyFinding(p, s, "high", ev if s == Status.PRESENT else (), f"said {s.value}") for p, s in statuses.items()}
    return SubmissionAnalysis(str(folder), folder, "softmax", [UnitAnalysis(u, findings)])


P, A, N = Status.PRESENT, Status.ABSENT, Status.NOT_APPLICABLE


def test_counts_metrics_and_misses(tmp_path):
    # a: labels online + vectorized; analyzer finds online + shuffle (FP), misses vectorized (FN)
    fa = _folder(tmp_path, "a", "ka", ["online_softmax", "vectorized_access"])
    # b: labels shuffle, tensor_cores undecided; analyzer finds shuffle, says N/A for online (skipped)
    fb = _folder(tmp_path, "b", "kb", ["warp_shuffle_reduction"], ["tensor_cores"])
    # c: the analyzer did not find the labelled kernel: predicted 0 for everything
    fc = _folder(tmp_path, "c", "kc", ["online_softmax"])
    analyses = [
        _analysis(fa, "ka", online_softmax=P, vectorized_access=A, warp_shuffle_reduction=P, tensor_cores=A),
        _analysis(fb, "kb", online_softmax=N, vectorized_access=A, warp_shuffle_reduction=P, tensor_cores=P),
        _analysis(fc, "other", online_softmax=P),
    ]
    ev = evaluate(analyses, [tmp_path], CATALOGUE)
    by = {s.property: s for s in ev.scores}
    assert (ev.folders, ev.kernels) == (3, 3)
    # online: a TP, b skipped (N/A), c FN (kernel not found)
    assert by["online_softmax"] == PropertyScore("online_softmax", "L1", tp=1, fp=0, fn=1, tn=0)
    assert by["online_softmax"].precision == 1.0 and by["online_softmax"].recall == 0.5
    assert by["online_softmax"].f1 == pytest.approx(2 / 3)
    # vectorized: a FN, b TN, c TN
    assert (by["vectorized_access"].fn, by["vectorized_access"].tn, by["vectorized_access"].f1) == (1, 2, 0.0)
    # shuffle: a FP, b TP, c TN -> P 0.5 R 1
    assert by["warp_shuffle_reduction"].f1 == pytest.approx(2 * 0.5 * 1 / 1.5)
    # tensor cores: a TN, b undecided label (skipped), c TN: no support, no F1, not in the macro
    assert by["tensor_cores"].support == 0 and by["tensor_cores"].f1 is None
    assert ev.macro_f1 == pytest.approx((2 / 3 + 0 + 2 / 3) / 3)
    assert ev.skipped == 1  # b/online: labelled, analyzer said N/A
    missed = {(Path(m.folder).name, m.property, m.label, m.predicted) for m in ev.misses}
    assert missed == {("a", "vectorized_access", 1, 0), ("a", "warp_shuffle_reduction", 0, 1), ("c", "online_softmax", 1, 0)}
    fp = next(m for m in ev.misses if m.property == "warp_shuffle_reduction")
    assert fp.evidence and fp.evidence[0].layer == "syntax"
    assert any("'kc' not found" in p for p in ev.problems)


def test_label_problems_are_reported_not_raised(tmp_path):
    folder = _folder(tmp_path, "bad", "k", ["no_such_property"])
    ev = evaluate([_analysis(folder, "k", online_softmax=A)], [tmp_path], CATALOGUE)
    assert any("unknown property 'no_such_property'" in p for p in ev.problems)


def test_a_label_speaks_for_its_templates_explicit_specialisations(tmp_path):
    # the label names the template ``ka``; the analyzer reports ``ka`` and ``ka<__half>`` apart
    folder = _folder(tmp_path, "spec", "ka", ["vectorized_access"])
    plain = _analysis(folder, "ka", online_softmax=A, vectorized_access=A, warp_shuffle_reduction=A, tensor_cores=A)
    half = _analysis(folder, "ka<__half>", online_softmax=A, vectorized_access=P, warp_shuffle_reduction=P, tensor_cores=N)
    plain.units.extend(half.units)
    ev = evaluate([plain], [tmp_path], CATALOGUE)
    by = {s.property: s for s in ev.scores}
    assert (by["vectorized_access"].tp, by["vectorized_access"].fn) == (1, 0)  # present in the specialisation
    assert by["warp_shuffle_reduction"].fp == 1  # and what only the specialisation does counts against it
    assert by["tensor_cores"].tn == 1  # decided where any unit decides
    assert not ev.problems
