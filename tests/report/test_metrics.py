"""Run- and pair-level metrics against hand-computed values (ties, missing tasks, zero-correct
runs, reference_is_expert), and bootstrap determinism."""

from __future__ import annotations

import math

import pytest

from d2k_report import aggregate
from d2k_report.bootstrap import BootstrapConfig, bootstrap_ci
from d2k_report.outcomes import TaskOutcome, suite_slots, suite_universe


def task(name: str, correct: bool, speedup: float | None, ps: int, impl: float | None = None, **levels: float) -> TaskOutcome:
    return TaskOutcome(name, submitted=True, profiled=True, correct=correct, speedup=speedup, performance_score=ps,
                       analyzed=impl is not None, impl_score=impl, impl_levels=dict(levels))


def suite(*outcomes: TaskOutcome, size: int = 4) -> list[TaskOutcome]:
    """The outcomes plus missing tasks up to ``size`` (a missing task is a default outcome)."""
    universe = suite_universe([], [o.task for o in outcomes], size)
    return suite_slots({o.task: o for o in outcomes}, universe)


def test_missing_tasks_count_zero_in_rates_and_performance_score():
    slots = suite(task("a", True, 2.0, 3), task("b", True, 0.5, 1), size=4)
    assert len(slots) == 4 and not slots[2].submitted
    assert aggregate.correctness_rate(slots) == 2 / 4
    assert aggregate.performance_score(slots) == (3 + 1) / 4
    assert aggregate.fast_p(1.0)(slots) == 1 / 4


def test_fast_p_is_strictly_greater_than_p():
    # Ties: a speedup of exactly 1.0 / 1.5 is not "> p".
    slots = suite(task("a", True, 1.0, 1), task("b", True, 1.5, 2), task("c", True, 1.5000001, 2), size=4)
    assert aggregate.fast_p(1.0)(slots) == 2 / 4
    assert aggregate.fast_p(1.5)(slots) == 1 / 4


def test_incorrect_task_with_speedup_does_not_count():
    slots = suite(task("a", False, 3.0, 0), task("b", True, 4.0, 2), size=2)
    assert aggregate.fast_p(1.5)(slots) == 1 / 2
    assert aggregate.geomean_speedup(slots) == pytest.approx(4.0)


def test_geomean_over_correct_tasks():
    slots = suite(task("a", True, 2.0, 2), task("b", True, 8.0, 2), task("c", False, None, 0), size=3)
    assert aggregate.geomean_speedup(slots) == pytest.approx(4.0)


def test_zero_correct_run():
    slots = suite(task("a", False, None, 0), size=3)
    assert aggregate.correctness_rate(slots) == 0
    assert aggregate.performance_score(slots) == 0
    assert aggregate.geomean_speedup(slots) is None
    est = aggregate.run_estimates(slots, BootstrapConfig(n_boot=200))
    assert est["geomean_speedup"].value is None and est["geomean_speedup"].n == 0
    assert est["correctness"].value == 0 and est["correctness"].lo == 0 and est["correctness"].hi == 0


def test_pair_speedup_over_tasks_correct_in_both():
    g = suite(task("a", True, 4.0, 2), task("b", True, 2.0, 2), task("c", True, 9.0, 2), size=4)
    u = suite(task("a", True, 1.0, 1), task("b", True, 2.0, 2), task("c", False, None, 0), size=4)
    pairs = list(zip(g, u))
    # Common correct tasks: a (4/1) and b (2/2): geomean of ratios = sqrt(4 * 1) = 2.
    assert aggregate.speedup_ratio(pairs) == pytest.approx(2.0)
    gg, uu, n = aggregate.common_geomeans(pairs)
    assert (gg, uu, n) == (pytest.approx(math.sqrt(8)), pytest.approx(math.sqrt(2)), 2)
    assert aggregate.delta(aggregate.performance_score)(pairs) == pytest.approx((6 - 3) / 4)
    assert aggregate.delta(aggregate.correctness_rate)(pairs) == pytest.approx(1 / 4)


def test_implementation_score_means_over_analysed_tasks_only():
    g = suite(task("a", True, 1.0, 1, 80.0, L1=100.0), task("b", True, 1.0, 1, 40.0), size=5)
    u = suite(task("a", True, 1.0, 1, 20.0, L1=0.0), task("b", True, 1.0, 1, None), size=5)
    assert aggregate.impl_score()(g) == pytest.approx(60.0)
    assert aggregate.impl_score("L1")(g) == pytest.approx(100.0)
    assert aggregate.impl_score("L2")(g) is None
    # Paired: only task a is analysed in both.
    assert aggregate.impl_delta()(list(zip(g, u))) == pytest.approx(60.0)
    est = aggregate.pair_estimates(list(zip(g, u)), BootstrapConfig(n_boot=100))
    assert est["impl_all"].n == 1 and est["impl_L1"].n == 1


def test_bootstrap_is_deterministic_and_seeded():
    slots = suite(*[task(f"t{i}", True, 0.3 * i + 0.1, 1, 7.0 * i) for i in range(1, 9)], size=8)
    stat = aggregate.impl_score()
    cfg = BootstrapConfig(n_boot=500, seed=7)
    first = bootstrap_ci(slots, stat, cfg)
    assert first == bootstrap_ci(slots, stat, cfg)
    assert first != bootstrap_ci(slots, stat, BootstrapConfig(n_boot=500, seed=8))
    lo, hi = first
    assert 7.0 <= lo < stat(slots) < hi <= 56.0


def test_bootstrap_of_a_constant_is_that_constant_and_undefined_is_none():
    slots = suite(task("a", True, 2.0, 2), task("b", True, 2.0, 2), size=2)
    assert bootstrap_ci(slots, aggregate.performance_score) == (2.0, 2.0)
    assert bootstrap_ci(suite(size=3), aggregate.geomean_speedup) is None
    assert bootstrap_ci(slots[:1], aggregate.performance_score) is None
