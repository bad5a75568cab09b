"""Run-level and pair-level metrics over the suite's task slots (docs/report.md, "Metrics").

Every statistic is a pure function of a list of :class:`TaskOutcome` slots (one per suite task;
a missing task is a default outcome: incorrect, score 0, not analysed), so that the bootstrap can
recompute it on resampled slots. The definitions come from :mod:`d2k_spec.run_metrics` (shared
with d2k-profile's summary):

* correctness rate: correct tasks / suite size (a missing task is not correct);
* Performance Score: :func:`~d2k_spec.run_metrics.run_performance_score`, the mean over all suite
  tasks, a missing task counting 0;
* fast_p: :func:`~d2k_spec.run_metrics.fast_p`, the share of suite tasks correct with speedup > p;
* geometric-mean speedup: :func:`~d2k_spec.run_metrics.geomean` of the per-task speedups over the
  correct tasks of a run; for a pair, over the tasks correct in *both* runs (the ratio guided /
  unguided is the geomean of the per-task ratios);
* implementation score (overall and per level): the mean over the tasks that have one (analysed,
  with at least one assessed item); a task with no submission is left out and counted, as the
  analyzer cannot score code that does not exist. For a pair: the mean of per-task differences
  over the tasks scored in both runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from d2k_spec import run_metrics as metrics

from .bootstrap import BootstrapConfig, bootstrap_ci
from .outcomes import TaskOutcome

FAST_P = (1.0, 1.5)
LEVELS = ("L1", "L2", "L3")
Pair = tuple[TaskOutcome, TaskOutcome]  # (guided, unguided) outcome of one task slot


# --- one run -------------------------------------------------------------------------------------


def correctness_rate(slots: Sequence[TaskOutcome]) -> float:
    return sum(s.correct for s in slots) / len(slots)


def performance_score(slots: Sequence[TaskOutcome]) -> float:
    return metrics.run_performance_score([s.performance_score for s in slots], len(slots))


def fast_p(p: float) -> Callable[[Sequence[TaskOutcome]], float]:
    def stat(slots: Sequence[TaskOutcome]) -> float:
        return metrics.fast_p([(s.correct, s.speedup) for s in slots], p, len(slots))

    return stat


def geomean_speedup(slots: Sequence[TaskOutcome]) -> float | None:
    return metrics.geomean([s.speedup for s in slots if s.correct and s.speedup])


def _impl(s: TaskOutcome, level: str | None) -> float | None:
    return s.impl_score if level is None else s.impl_levels.get(level)


def impl_score(level: str | None = None) -> Callable[[Sequence[TaskOutcome]], float | None]:
    def stat(slots: Sequence[TaskOutcome]) -> float | None:
        vals = [v for s in slots if (v := _impl(s, level)) is not None]
        return sum(vals) / len(vals) if vals else None

    return stat


# --- a pair of runs ------------------------------------------------------------------------------


def delta(stat: Callable[[Sequence[TaskOutcome]], float | None]) -> Callable[[Sequence[Pair]], float | None]:
    """guided - unguided of a run statistic, on the same (resampled) task slots."""

    def pair_stat(pairs: Sequence[Pair]) -> float | None:
        g, u = stat([p[0] for p in pairs]), stat([p[1] for p in pairs])
        return None if g is None or u is None else g - u

    return pair_stat


def both_correct(pairs: Sequence[Pair]) -> list[Pair]:
    return [(g, u) for g, u in pairs if g.correct and u.correct and g.speedup and u.speedup]


def speedup_ratio(pairs: Sequence[Pair]) -> float | None:
    """Geomean over tasks correct in both runs of guided speedup / unguided speedup."""
    return metrics.geomean([g.speedup / u.speedup for g, u in both_correct(pairs)])


def impl_delta(level: str | None = None) -> Callable[[Sequence[Pair]], float | None]:
    """Mean over tasks scored in both runs of the guided - unguided implementation score."""

    def pair_stat(pairs: Sequence[Pair]) -> float | None:
        diffs = [a - b for g, u in pairs if (a := _impl(g, level)) is not None and (b := _impl(u, level)) is not None]
        return sum(diffs) / len(diffs) if diffs else None

    return pair_stat


# --- values with intervals -----------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """A statistic with its bootstrap interval and the number of tasks it rests on."""

    value: float | None
    lo: float | None = None
    hi: float | None = None
    n: int | None = None


def estimate(slots: Sequence, stat: Callable, config: BootstrapConfig, n: int | None = None) -> Estimate:
    value = stat(slots)
    ci = bootstrap_ci(slots, stat, config) if value is not None else None
    return Estimate(value, *(ci or (None, None)), n=n)


def run_estimates(slots: Sequence[TaskOutcome], config: BootstrapConfig) -> dict[str, Estimate]:
    """Every headline metric of one run."""
    n_suite = len(slots)
    n_correct = sum(1 for s in slots if s.correct and s.speedup)
    out = {
        "correctness": estimate(slots, correctness_rate, config, n_suite),
        "performance_score": estimate(slots, performance_score, config, n_suite),
        "geomean_speedup": estimate(slots, geomean_speedup, config, n_correct),
    }
    for p in FAST_P:
        out[f"fast_{p}"] = estimate(slots, fast_p(p), config, n_suite)
    for level in (None, *LEVELS):
        stat = impl_score(level)
        n = sum(1 for s in slots if _impl(s, level) is not None)
        out[f"impl_{level or 'all'}"] = estimate(slots, stat, config, n)
    return out


def pair_estimates(pairs: Sequence[Pair], config: BootstrapConfig) -> dict[str, Estimate]:
    """The guided - unguided differences (and the speedup ratio) of one pair, paired by task."""
    n_suite = len(pairs)
    out = {
        "correctness": estimate(pairs, delta(correctness_rate), config, n_suite),
        "performance_score": estimate(pairs, delta(performance_score), config, n_suite),
        "geomean_speedup": estimate(pairs, speedup_ratio, config, len(both_correct(pairs))),
    }
    for p in FAST_P:
        out[f"fast_{p}"] = estimate(pairs, delta(fast_p(p)), config, n_suite)
    for level in (None, *LEVELS):
        n = sum(1 for g, u in pairs if _impl(g, level) is not None and _impl(u, level) is not None)
        out[f"impl_{level or 'all'}"] = estimate(pairs, impl_delta(level), config, n)
    return out


def common_geomeans(pairs: Sequence[Pair]) -> tuple[float | None, float | None, int]:
    """(guided geomean, unguided geomean, n) over the tasks correct in both runs."""
    common = both_correct(pairs)
    return geomean_speedup([g for g, _ in common]), geomean_speedup([u for _, u in common]), len(common)
