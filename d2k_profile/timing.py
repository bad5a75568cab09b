"""The timing schedule: warmup, interleaved rounds with a rotating order, the stop rule, and which
timed calls are re-checked. Decided in the judge; each call is made by a :class:`TimedDevice`.

The device is injectable so that the schedule is tested on a CPU with a fake device and a fake
clock (``tests/profile/test_timing.py``). The real devices are the sandbox's native loop
(:class:`d2k_profile.session.SandboxDevice`: the judge refreshes the inputs from a secret seed, the
native code flushes the L2, holds the stream, records the events around the call and copies the
outputs into escrow) and the judge's own native loop for the clean reference timing
(:class:`d2k_profile.clean.LocalDevice`).

Per timed call, outside the event window: fresh inputs, an L2 flush (a read sweep of 2x the L2
size: the timed kernel neither finds its data in L2 nor pays to write back dirty lines, which made
memory-bound kernels 2-17 % slower after the old write-only flush), then a device-side sleep that holds the stream while the host enqueues the start
event, the call and the end event: microsecond kernels are not timed as host launch overhead.
The hold is :data:`HOLD_PER_HOST` times the slowest implementation's 90th-percentile enqueue
time measured in the warmup (traced like the timed calls: CUPTI lengthens the enqueue), at least
:data:`HOLD_CYCLES`: a call whose enqueue outlasts the hold has host time in its event time, and
on the 19 us softmax workload 6-9 % of the calls did with a median-sized hold. Re-checks are decided *after* a call has returned,
from the judge's secret RNG, and every timed call's outputs are escrowed, so the submission cannot
tell a checked call from another.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from typing import Callable, Protocol

from .metrics import quantile

HOLD_CYCLES = 100_000  # ~50 us at the H200's 1.98 GHz: the shortest hold
MAX_HOLD_US = 5_000.0
HOLD_PER_HOST = 3.0  # hold = this many times the slowest implementation's HOST_QUANTILE enqueue time
HOST_QUANTILE = 0.9
CALIBRATION_CYCLES = 1_000_000  # ~0.5 ms sleeps: the ~3 us launch latency is under 1 % of them
HOST_BOUND_SHARE = 0.05  # an implementation with more host-bound calls than this is host-bound


@dataclass(frozen=True)
class TimingConfig:
    """Stopping rule: at least ``min_reps`` rounds, then stop when every implementation's median
    has a relative standard error (:func:`median_rse`) under ``target_rse``, or ``budget_s`` is
    spent, or ``max_reps`` is reached."""

    warmup_ms: float = 25.0
    min_warmup_calls: int = 3
    min_reps: int = 20
    max_reps: int = 2000
    target_rse: float = 0.0015
    budget_s: float = 1.0
    recheck_prob: float = 0.05  # share of timed calls re-checked (plus every call of the first and last rounds)
    kernel_trace: bool = True  # CUPTI device activity of every timed call (the trace cross-checks)
    clean_budget_s: float = 0.3  # the clean (no-submission) timing of reference and expert, per workload
    flush_mode: int = 3  # 1 write sweep (the old flush), 2 write then read sweep, 3 read sweep (default)


@dataclass(frozen=True)
class Hold:
    """The device-side sleep before each timed call: ``cycles`` of the SM clock, ``us`` long."""

    cycles: int = HOLD_CYCLES
    cycles_per_us: float = 1980.0

    @property
    def us(self) -> float:
        return self.cycles / self.cycles_per_us


@dataclass(frozen=True)
class Sample:
    """One call as the device reports it."""

    event_ms: float
    host_ms: float  # host time to enqueue the call (between the two event records)
    call_id: int = 0


class RecheckFailed(Exception):
    """A timed call's output failed the re-check (caching, or doing less work when timed).
    ``inputs``: the judge's private copy of that call's inputs, so that the judge can run the
    submission on them once more and tell a history-dependent output from a wrong one; ``impl``:
    whose call it was (the expert's outputs are re-checked too)."""

    def __init__(self, reason: str, inputs: tuple = (), impl: str = ""):
        super().__init__(reason)
        self.inputs, self.impl = inputs, impl


class TimedDevice(Protocol):
    def call(self, impl: str, timed: bool, hold_cycles: int) -> Sample:
        """Fresh inputs, then one call of ``impl`` (flushed and held when ``timed``)."""

    def checkable(self, impl: str) -> bool:
        """Whether ``impl``'s outputs are re-checked (not the reference's: it is the answer key)."""

    def recheck(self, impl: str) -> None:
        """Check the last call of ``impl`` (raise :class:`RecheckFailed`)."""


@dataclass
class Measurement:
    samples: dict[str, list[float]]
    rechecked: dict[str, int]
    host_bound: dict[str, int]  # samples whose host enqueue time outlasted the stream hold
    calls: list[tuple[str, int, float]]  # (implementation, call id, event ms) of every timed call
    rounds: int = 0

    def host_bound_impls(self) -> set[str]:
        """Implementations whose event times hold host time: more than :data:`HOST_BOUND_SHARE` of
        their calls were enqueued more slowly than the stream hold (a host-side sync inside the
        call, such as a bincount reading its maximum back)."""
        return {n for n, k in self.host_bound.items() if k > HOST_BOUND_SHARE * len(self.samples.get(n, ()))}


Clock = Callable[[], float]


MEDIAN_SE_PER_IQR = math.sqrt(math.pi / 2) / 1.349  # normal sample: se(median) = sqrt(pi/2) sigma/sqrt(n), sigma = IQR/1.349


def median_rse(xs: list[float]) -> float:
    """Relative standard error of the median, from the interquartile range.

    Why not the mean's (std / sqrt(n) / mean): speedups are ratios of medians, and the two disagree in both
    directions. A tail of slow calls inflates the mean's error, so timing ran on long after the
    median was settled; and with a tight core the mean's error fell under the target after the
    first ten rounds while the median, on event times quantised to 32 ns ticks, was not settled:
    on the H200 the 20 us softmax reference timed against itself stopped after 37 rounds at a
    ratio of 1.0094 (CUPTI kernel times 1.000)."""
    n = len(xs)
    if n < 4:
        return float("inf")
    s = sorted(xs)
    med = quantile(s, 0.5)  # the record's median and IQR (metrics.summarize_samples), same quantiles
    return MEDIAN_SE_PER_IQR * (quantile(s, 0.75) - quantile(s, 0.25)) / math.sqrt(n) / med if med > 0 else float("inf")


def rotation(impls: list[str], rnd: int) -> list[str]:
    """The order of round ``rnd``: rotated by one each round, so drift hits everyone alike."""
    k = rnd % len(impls)
    return impls[k:] + impls[:k]


def warmup(impls: list[str], device: TimedDevice, cfg: TimingConfig) -> dict[str, float]:
    """Call every implementation until ``warmup_ms`` of its calls and ``min_warmup_calls`` are
    done; ``min_warmup_calls`` gives way once the calls have taken ten times ``warmup_ms`` (a 2 s
    call is warm after two). The first call of each counts for nothing: it may compile or
    autotune. Returns each implementation's :data:`HOST_QUANTILE` host enqueue time (ms) over the
    counted calls (the tail matters: a call enqueued more slowly than the hold is host-bound)."""
    host: dict[str, float] = {}
    for impl in impls:
        device.call(impl, False, 0)
        spent, enqueue = 0.0, []
        while len(enqueue) < 200 and (spent < cfg.warmup_ms or (len(enqueue) < cfg.min_warmup_calls and spent < 10 * cfg.warmup_ms)):
            s = device.call(impl, False, 0)
            spent += max(s.event_ms, 0.0)
            enqueue.append(s.host_ms)
        enqueue.sort()
        host[impl] = enqueue[min(len(enqueue) - 1, int(HOST_QUANTILE * len(enqueue)))]
    return host


def measure(impls: list[str], device: TimedDevice, cfg: TimingConfig, rng: random.Random, hold: Hold = Hold(),
            clock: Clock = time.perf_counter) -> Measurement:
    """Interleaved, adaptive timing: one timed call per implementation per round, in
    :func:`rotation` order, until the stop rule holds (decided at the start of a round, so the last
    round is known and re-checked). A call is re-checked when it is in the first or the last round,
    or with probability ``recheck_prob``, drawn after it returned."""
    samples: dict[str, list[float]] = {i: [] for i in impls}
    rechecked = {i: 0 for i in impls}
    host_bound = {i: 0 for i in impls}
    calls: list[tuple[str, int, float]] = []
    hold_ms = hold.us / 1e3
    deadline = clock() + cfg.budget_s
    rnd = 0
    while True:
        last = rnd + 1 >= cfg.max_reps or clock() >= deadline or (
            rnd + 1 >= cfg.min_reps and rnd > 0 and all(median_rse(s) < cfg.target_rse for s in samples.values()))
        for impl in rotation(impls, rnd):
            s = device.call(impl, True, hold.cycles)
            samples[impl].append(s.event_ms)
            calls.append((impl, s.call_id, s.event_ms))
            host_bound[impl] += s.host_ms > hold_ms
            if device.checkable(impl) and (rnd == 0 or last or rng.random() < cfg.recheck_prob):
                device.recheck(impl)
                rechecked[impl] += 1
        rnd += 1
        if last:
            return Measurement(samples, rechecked, host_bound, calls, rnd)


def hold_for(host_ms: dict[str, float], cycles_per_us: float) -> Hold:
    """The hold for a workload: :data:`HOLD_PER_HOST` times the slowest implementation's enqueue
    time from :func:`warmup`, at least :data:`HOLD_CYCLES`, at most :data:`MAX_HOLD_US`."""
    want_us = min(MAX_HOLD_US, HOLD_PER_HOST * 1e3 * max(host_ms.values(), default=0.0))
    return Hold(max(HOLD_CYCLES, int(want_us * cycles_per_us)), cycles_per_us)


def cycles_per_us(cycles: int, event_ms: list[float]) -> float:
    """SM clock cycles per microsecond from event times of holds of ``cycles`` (the sleep counts
    cycles, so its length in time follows the clock): the median of the calibration calls."""
    ms = sorted(x for x in event_ms if x > 0)
    if not ms:
        return Hold().cycles_per_us
    return cycles / (ms[len(ms) // 2] * 1e3)
