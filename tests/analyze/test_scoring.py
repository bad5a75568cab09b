"""Scoring by hand-computed cases: require all/any, partials, dependencies, nothing assessed,
low-confidence properties, and disagreement between layers (syntax vs compiled, static vs judge)."""

from __future__ import annotations

from pathlib import Path

import pytest

from d2k_analyze.model import (
    Evidence, KernelUnit, PropertyFinding, Span, Status, SubmissionAnalysis, UnitAnalysis, Verdict,
)
from d2k_analyze.scoring import (
    JudgeVerdict, PropertyState, apply_dependencies, combine_layers, property_state, score_submission,
    static_verdict,
)
from d2k_spec.catalogue import Catalogue, Property
from d2k_spec.task import Baseline, DesignItem, Interface, Task


def prop(pid: str, level: str = "L2", cuda: str = "high", triton: str | None = "medium") -> Property:
    conf = {"cuda": cuda} | ({"triton": triton} if triton else {})
    return Property(pid, level, pid, "def", conf, [], "hint")


CATALOGUE = Catalogue(1, [
    prop("online_softmax", "L1", "medium", "medium"),
    prop("single_pass_io", "L2", "medium", "medium"),
    prop("vectorized_access", "L3", "high", None),
    prop("warp_shuffle_reduction", "L3", "high", "medium"),
    prop("kernel_fusion", "L2", "low", "low"),
    prop("tensor_cores", "L3", "high", "high"),
])


def item(iid: str, level: str, props: list[str], weight: float = 1.0, depends: list[str] | None = None,
         require: str = "all") -> DesignItem:
    return DesignItem(iid, level, iid.title(), f"guidance for {iid}", props, "hint", weight, depends or [], require)


def task(*items: DesignItem) -> Task:
    t = Task("softmax", "Softmax", "norm", "stmt", Interface([], []), {}, Baseline("torch.softmax"), [], list(items))
    object.__setattr__(t, "path", Path("tasks/softmax"))
    return t


def unit(name: str = "k", launched: bool = True, language: str = "cuda", line: int = 10) -> KernelUnit:
    return KernelUnit(name, language, "sub/kernel.cu", Span("sub/kernel.cu", line, line + 20), "src", launched=launched)


def finding(pid: str, status: Status, conf: str = "high", line: int = 12, layer: str = "syntax") -> PropertyFinding:
    ev = (Evidence(Span("sub/kernel.cu", line, line), "code", layer, conf),) if status == Status.PRESENT else ()
    return PropertyFinding(pid, status, conf, ev, f"{status.value} by test")


def analysis(*units: UnitAnalysis) -> SubmissionAnalysis:
    return SubmissionAnalysis("sub", Path("sub"), "softmax", list(units))


def ua(u: KernelUnit, **statuses: Status) -> UnitAnalysis:
    return UnitAnalysis(u, {p: finding(p, s) for p, s in statuses.items()})


P, A, N = Status.PRESENT, Status.ABSENT, Status.NOT_APPLICABLE


# --- step 1: property state over live units ----------------------------------------------------


def test_present_in_any_live_unit_absent_only_if_absent_in_all():
    a = analysis(ua(unit("k1"), vectorized_access=P), ua(unit("k2", line=40), vectorized_access=A))
    assert property_state("vectorized_access", a, CATALOGUE).state == "present"
    b = analysis(ua(unit("k1"), vectorized_access=A), ua(unit("k2", line=40), vectorized_access=N))
    assert property_state("vectorized_access", b, CATALOGUE).state == "undecided"
    c = analysis(ua(unit("k1"), vectorized_access=A), ua(unit("k2", line=40), vectorized_access=A))
    assert property_state("vectorized_access", c, CATALOGUE).state == "absent"


def test_dead_units_earn_nothing():
    a = analysis(ua(unit("live"), vectorized_access=A), ua(unit("dead", launched=False), vectorized_access=P))
    assert property_state("vectorized_access", a, CATALOGUE).state == "absent"


def test_property_not_applicable_to_the_language_is_undecided():
    a = analysis(ua(unit("t", language="triton"), online_softmax=P))
    assert property_state("vectorized_access", a, CATALOGUE).state == "undecided"


def test_low_confidence_never_decides_without_judge():
    a = analysis(ua(unit(), kernel_fusion=P))
    state = property_state("kernel_fusion", a, CATALOGUE)
    assert state.state == "undecided" and "judge" in state.reason


def test_no_launched_kernel_means_nothing_implemented():
    a = analysis(ua(unit(launched=False), vectorized_access=P))
    assert property_state("vectorized_access", a, CATALOGUE).state == "absent"


# --- step 2: item verdicts ----------------------------------------------------------------------


def states(**kinds: str) -> dict[str, PropertyState]:
    return {p: PropertyState(p, k, "high" if k != "undecided" else None) for p, k in kinds.items()}


@pytest.mark.parametrize(
    "kinds, require, expected",
    [
        (dict(a="present", b="present"), "all", Verdict.IMPLEMENTED),
        (dict(a="present", b="absent"), "all", Verdict.PARTIAL),
        (dict(a="absent", b="absent"), "all", Verdict.ABSENT),
        (dict(a="present", b="absent", c="undecided"), "all", Verdict.PARTIAL),  # partial either way
        (dict(a="present", b="undecided"), "all", Verdict.NOT_ASSESSED),  # implemented or partial
        (dict(a="absent", b="undecided"), "all", Verdict.ABSENT),  # the defining property is missing
        (dict(a="absent", b="present"), "all", Verdict.ABSENT),  # fp32 accumulation alone is no tensor-core MMA
        (dict(a="undecided", b="absent"), "all", Verdict.NOT_ASSESSED),  # partial or absent
        (dict(a="undecided", b="undecided"), "all", Verdict.NOT_ASSESSED),
        (dict(a="present", b="undecided"), "any", Verdict.IMPLEMENTED),
        (dict(a="absent", b="absent"), "any", Verdict.ABSENT),
        (dict(a="absent", b="undecided"), "any", Verdict.NOT_ASSESSED),
        (dict(a="present", b="absent"), "any", Verdict.IMPLEMENTED),
    ],
)
def test_static_verdict_require_all_any(kinds, require, expected):
    d = item("x", "L2", list(kinds), require=require)
    assert static_verdict(d, states(**kinds)) == expected


# --- step 3: dependencies and the score ---------------------------------------------------------


def test_dependency_caps_and_not_assessed_prerequisite_does_not():
    items = [
        item("base", "L2", ["a"]),
        item("mid", "L2", ["b"], depends=["base"]),
        item("top", "L3", ["c"], depends=["mid"]),
        item("free", "L3", ["d"], depends=["unknown_state"]),
        item("unknown_state", "L2", ["e"]),
    ]
    raw = {"base": Verdict.PARTIAL, "mid": Verdict.IMPLEMENTED, "top": Verdict.IMPLEMENTED,
           "free": Verdict.IMPLEMENTED, "unknown_state": Verdict.NOT_ASSESSED}
    final = apply_dependencies(items, raw)
    assert final["mid"][0] == Verdict.PARTIAL and "capped at partial by prerequisite 'base'" in final["mid"][1]
    assert final["top"][0] == Verdict.PARTIAL  # transitively, through mid's *final* value
    assert final["free"][0] == Verdict.IMPLEMENTED and "not assessed: no cap applied" in final["free"][1]
    raw["base"] = Verdict.ABSENT
    assert apply_dependencies(items, raw)["top"][0] == Verdict.ABSENT


def test_worked_example_from_the_docstring():
    """online_softmax [2] implemented; row_on_chip [1] partial; vectorized_io [1] implemented but
    capped by row_on_chip; warp_shuffle not assessed -> 75.0 overall, L1 100, L2 50, L3 50."""
    t = task(
        item("online_softmax", "L1", ["online_softmax"], weight=2),
        item("row_on_chip", "L2", ["single_pass_io", "tensor_cores"], depends=["online_softmax"]),
        item("vectorized_io", "L3", ["vectorized_access"], depends=["row_on_chip"]),
        item("warp_shuffle", "L3", ["kernel_fusion"]),  # low confidence: not assessed without a judge
    )
    a = analysis(ua(unit(), online_softmax=P, single_pass_io=P, tensor_cores=A, vectorized_access=P, kernel_fusion=P))
    s = score_submission(a, t, CATALOGUE)
    by = {v.item: v for v in s.items}
    assert by["row_on_chip"].raw == Verdict.PARTIAL
    assert by["vectorized_io"].raw == Verdict.IMPLEMENTED and by["vectorized_io"].final == Verdict.PARTIAL
    assert s.overall == pytest.approx(75.0)
    assert s.per_level == pytest.approx({"L1": 100.0, "L2": 50.0, "L3": 50.0})
    assert s.not_assessed == ("warp_shuffle",)
    assert by["online_softmax"].evidence and by["online_softmax"].sources == ("syntax",)


def test_nothing_assessed_gives_none():
    t = task(item("fusion", "L2", ["kernel_fusion"]), item("x", "L1", ["online_softmax"]))
    s = score_submission(analysis(ua(unit(), kernel_fusion=P, online_softmax=N)), t, CATALOGUE)
    assert s.overall is None and s.per_level == {"L1": None, "L2": None, "L3": None}
    assert set(s.not_assessed) == {"fusion", "x"}


def test_weights_normalise_over_assessed_items_only():
    t = task(item("a", "L3", ["vectorized_access"], weight=3), item("b", "L3", ["warp_shuffle_reduction"], weight=1),
             item("c", "L2", ["kernel_fusion"], weight=10))
    s = score_submission(analysis(ua(unit(), vectorized_access=A, warp_shuffle_reduction=P)), t, CATALOGUE)
    assert s.overall == pytest.approx(25.0)  # 100 * (3*0 + 1*1) / (3 + 1); c (weight 10) not assessed
    assert s.per_level["L2"] is None


# --- disagreement between layers ------------------------------------------------------------------


def test_compiled_refutation_flows_into_the_score():
    """Syntax said tensor cores, the compiled layer found no MMA instruction: the finding is ABSENT
    with compiled evidence, and the item is absent."""
    refuted = PropertyFinding(
        "tensor_cores", Status.ABSENT, "high",
        (Evidence(Span("sub/kernel.cu", 12, 12), "wmma::mma_sync", "syntax", "high"),
         Evidence(Span("sub/kernel.cu", 10, 30), "", "compiled", "high", "no mma")),
        "refuted by the compiled layer",
    )
    a = analysis(UnitAnalysis(unit(), {"tensor_cores": refuted}))
    s = score_submission(a, task(item("tc", "L3", ["tensor_cores"])), CATALOGUE)
    assert s.items[0].final == Verdict.ABSENT and "compiled" in s.items[0].sources


@pytest.mark.parametrize(
    "static, confidence, judge, expected",
    [
        (Verdict.NOT_ASSESSED, None, Verdict.IMPLEMENTED, Verdict.IMPLEMENTED),  # judge fills the gap
        (Verdict.IMPLEMENTED, "high", Verdict.ABSENT, Verdict.IMPLEMENTED),  # high confidence stands
        (Verdict.IMPLEMENTED, "medium", Verdict.ABSENT, Verdict.PARTIAL),  # medium: split vote
        (Verdict.ABSENT, "medium", Verdict.ABSENT, Verdict.ABSENT),  # agreement
        (Verdict.ABSENT, "medium", None, Verdict.ABSENT),  # no judge: static is final
        (Verdict.NOT_ASSESSED, None, None, Verdict.NOT_ASSESSED),
    ],
)
def test_combine_layers_with_a_judge(static, confidence, judge, expected):
    jv = JudgeVerdict("x", judge) if judge else None
    assert combine_layers(static, confidence, jv)[0] == expected


def test_judge_plugs_into_score_submission():
    t = task(item("fusion", "L2", ["kernel_fusion"]), item("vec", "L3", ["vectorized_access"]))
    a = analysis(ua(unit(), kernel_fusion=P, vectorized_access=P))
    judge = {"fusion": JudgeVerdict("fusion", Verdict.PARTIAL), "vec": JudgeVerdict("vec", Verdict.ABSENT)}
    s = score_submission(a, t, CATALOGUE, judge=judge)
    by = {v.item: v for v in s.items}
    assert by["fusion"].final == Verdict.PARTIAL and "judge" in by["fusion"].sources
    assert by["vec"].final == Verdict.IMPLEMENTED  # high-confidence static verdict stands
    assert s.overall == pytest.approx(75.0) and s.not_assessed == ()
