"""The combined 0-100 score: layers by detector confidence, dependencies, overall and per level.
The worked example is the one in docs/judge.md."""

from __future__ import annotations

import pytest

from d2k_analyze.model import ItemVerdict, Verdict
from d2k_analyze.scoring import JudgeVerdict, apply_dependencies, combine_layers, weighted_score
from d2k_spec.task import DesignItem

I, P, A, N = Verdict.IMPLEMENTED, Verdict.PARTIAL, Verdict.ABSENT, Verdict.NOT_ASSESSED


def judge(v: Verdict, item: str = "x") -> JudgeVerdict:
    return JudgeVerdict(item, v)


@pytest.mark.parametrize("static, confidence, judged, expected", [
    (I, "high", A, I),        # high-confidence syntax stands against the judge
    (A, "high", I, A),
    (I, "medium", I, I),      # medium: agreement keeps it
    (I, "medium", A, P),      # medium: disagreement is a split vote -> partial
    (A, "medium", I, P),
    (P, "medium", I, P),
    (I, "low", A, A),         # low: the judge's call
    (N, None, I, I),          # static undecided: the judge's call
    (N, None, None, N),       # no judge (or a judge error): not assessed
    (I, "medium", None, I),   # no judge: static stands
    (A, "medium", N, A),      # a judge that could not decide changes nothing
])
def test_combine_layers(static, confidence, judged, expected):
    verdict, _ = combine_layers(static, confidence, judge(judged) if judged is not None else None)
    assert verdict == expected


def _item(id_, level, weight, deps=()):
    return DesignItem(id_, level, id_, "", ["p"], "", weight, list(deps))


def test_worked_example_of_the_readme():
    items = [
        _item("online_softmax", "L1", 2), _item("row_on_chip", "L2", 2),
        _item("row_mapping", "L2", 1.5, ["row_on_chip"]), _item("exp2", "L3", 0.5),
        _item("warp_shuffle", "L3", 1, ["row_mapping"]), _item("cache_policy", "L3", 0.5),
    ]
    layers = {  # static verdict, its confidence, the judge's verdict (None: judge error)
        "online_softmax": (I, "medium", I), "row_on_chip": (A, "medium", I), "row_mapping": (N, None, I),
        "exp2": (I, "high", A), "warp_shuffle": (N, None, None), "cache_policy": (A, "high", A),
    }
    raw = {k: combine_layers(s, c, judge(j) if j else None)[0] for k, (s, c, j) in layers.items()}
    assert raw == {"online_softmax": I, "row_on_chip": P, "row_mapping": I, "exp2": I, "warp_shuffle": N, "cache_policy": A}
    final = apply_dependencies(items, raw)
    assert final["row_mapping"][0] == P and "capped at partial" in final["row_mapping"][1]
    assert final["warp_shuffle"][0] == N
    verdicts = [ItemVerdict(d.id, d.level, d.weight, raw[d.id], final[d.id][0]) for d in items]
    assert weighted_score(verdicts) == pytest.approx(100 * 4.25 / 6.5)  # 65.4
    per_level = {lvl: weighted_score([v for v in verdicts if v.level == lvl]) for lvl in ("L1", "L2", "L3")}
    assert per_level == {"L1": pytest.approx(100.0), "L2": pytest.approx(50.0), "L3": pytest.approx(50.0)}


def test_dependency_on_an_item_the_judge_found_absent_caps_a_high_confidence_item():
    items = [_item("staging", "L2", 1), _item("swizzle", "L3", 1, ["staging"])]
    raw = {"staging": combine_layers(N, None, judge(A))[0], "swizzle": combine_layers(I, "high", judge(I))[0]}
    final = apply_dependencies(items, raw)
    assert final["staging"][0] == A and final["swizzle"][0] == A
