"""The timing schedule on a CPU, with a fake device and a fake clock (issue 12, item 14): the stop
rule, the rotation of the order, which calls are re-checked (and that the decision comes after the
call), the warmup, the hold."""

import random

import pytest

from d2k_profile import timing
from d2k_profile.timing import Hold, Sample, TimingConfig


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class FakeDevice:
    """Each call advances the clock by ``call_s`` and returns the next time from ``times`` (per
    implementation, cycling), so the stop rule sees exactly the samples the test chose."""

    def __init__(self, clock: FakeClock, times: dict[str, list[float]], call_s: float = 0.001, host_ms: float = 0.01,
                 checkable: tuple[str, ...] = ("sub",)):
        self.clock, self.times, self.call_s, self.host_ms, self.check = clock, times, call_s, host_ms, checkable
        self.log: list[tuple] = []  # ("call", impl, timed) and ("recheck", impl), in order
        self.n = {k: 0 for k in times}

    def call(self, impl, timed, hold_cycles):
        self.clock.t += self.call_s
        xs = self.times[impl]
        v = xs[self.n[impl] % len(xs)]
        self.n[impl] += 1
        self.log.append(("call", impl, timed, hold_cycles))
        return Sample(v, self.host_ms, call_id=len(self.log))

    def checkable(self, impl):
        return impl in self.check

    def recheck(self, impl):
        assert self.log[-1][:2] == ("call", impl), "a re-check must follow the call it checks"
        self.log.append(("recheck", impl))


def calls(dev, timed=True):
    return [e[1] for e in dev.log if e[0] == "call" and e[2] is timed]


def test_stops_once_every_rse_is_small_after_min_reps():
    clock = FakeClock()
    dev = FakeDevice(clock, {"ref": [1.0], "sub": [0.5]})  # constant samples: rse 0 after two
    cfg = TimingConfig(min_reps=10, target_rse=0.01, budget_s=100.0)
    m = timing.measure(["ref", "sub"], dev, cfg, random.Random(0), clock=clock)
    assert m.rounds == 10 and len(m.samples["ref"]) == len(m.samples["sub"]) == 10


def test_keeps_going_while_noisy_until_the_budget():
    clock = FakeClock()
    dev = FakeDevice(clock, {"ref": [1.0, 2.0, 0.5, 3.0], "sub": [1.0]}, call_s=0.01)
    cfg = TimingConfig(min_reps=2, target_rse=1e-6, budget_s=1.0, max_reps=10_000)
    m = timing.measure(["ref", "sub"], dev, cfg, random.Random(0), clock=clock)
    # two calls of 10 ms per round: the round that starts at or past 1 s is the last one
    assert 49 <= m.rounds <= 52 and clock.t == pytest.approx(m.rounds * 0.02)


def test_max_reps_caps_the_rounds():
    clock = FakeClock()
    dev = FakeDevice(clock, {"a": [1.0, 3.0]}, call_s=0.0)
    m = timing.measure(["a"], dev, TimingConfig(min_reps=1, target_rse=1e-9, budget_s=1e9, max_reps=7), random.Random(0), clock=clock)
    assert m.rounds == 7


def test_order_rotates_every_round():
    clock = FakeClock()
    dev = FakeDevice(clock, {"r": [1.0], "e": [1.0], "s": [1.0]})
    timing.measure(["r", "e", "s"], dev, TimingConfig(min_reps=4, target_rse=1.0, budget_s=100.0), random.Random(0), clock=clock)
    order = calls(dev)
    assert order[:12] == ["r", "e", "s", "e", "s", "r", "s", "r", "e", "r", "e", "s"]
    assert timing.rotation(["a", "b"], 3) == ["b", "a"]


def test_rechecks_first_and_last_rounds_and_a_sample_of_the_others():
    clock = FakeClock()
    dev = FakeDevice(clock, {"ref": [1.0], "sub": [1.0]})
    cfg = TimingConfig(min_reps=200, target_rse=1.0, budget_s=100.0, recheck_prob=0.25)
    m = timing.measure(["ref", "sub"], dev, cfg, random.Random(7), clock=clock)
    assert m.rechecked["ref"] == 0  # the reference is the answer key: never re-checked
    checked = [i for i, e in enumerate(dev.log) if e[0] == "recheck"]
    sub_calls = [i for i, e in enumerate(dev.log) if e[:2] == ("call", "sub")]
    assert checked[0] == sub_calls[0] + 1 and checked[-1] == sub_calls[-1] + 1  # first and last round
    middle = m.rechecked["sub"] - 2
    assert 30 <= middle <= 70  # ~25 % of the 198 other rounds
    # the same seed gives the same sample, another seed another: the judge's secret RNG decides
    dev2 = FakeDevice(FakeClock(), {"ref": [1.0], "sub": [1.0]})
    timing.measure(["ref", "sub"], dev2, cfg, random.Random(7), clock=FakeClock())
    dev3 = FakeDevice(FakeClock(), {"ref": [1.0], "sub": [1.0]})
    timing.measure(["ref", "sub"], dev3, cfg, random.Random(8), clock=FakeClock())
    assert dev2.log == dev.log and dev3.log != dev.log


def test_recheck_failure_propagates():
    class Bad(FakeDevice):
        def recheck(self, impl):
            raise timing.RecheckFailed("wrong when timed")

    dev = Bad(FakeClock(), {"sub": [1.0]})
    with pytest.raises(timing.RecheckFailed):
        timing.measure(["sub"], dev, TimingConfig(), random.Random(0), clock=dev.clock)


def test_warmup_discards_the_first_call_and_stops_on_time_and_count():
    clock = FakeClock()
    dev = FakeDevice(clock, {"fast": [1.0], "slow": [600.0]}, host_ms=0.02)
    cfg = TimingConfig(warmup_ms=25.0, min_warmup_calls=3)
    host = timing.warmup(["fast", "slow"], dev, cfg)
    n = {k: sum(1 for e in dev.log if e[1] == k) for k in ("fast", "slow")}
    assert n["fast"] == 1 + 25  # the first call counts for nothing, then 25 ms of 1 ms calls
    assert n["slow"] == 1 + 1  # one 600 ms call is ten times the warmup time: warm after it
    assert all(e[2] is False for e in dev.log)  # warmup calls are not timed (no flush, no hold)
    assert host == {"fast": 0.02, "slow": 0.02}


def test_warmup_reports_the_tail_of_the_enqueue_times():
    """The hold is sized from the 90th percentile, not the median: calls in the tail are the ones
    whose enqueue would outlast a median-sized hold (host time in their event times)."""

    class Tail(FakeDevice):
        def call(self, impl, timed, hold_cycles):
            s = super().call(impl, timed, hold_cycles)
            return Sample(s.event_ms, 0.04 if self.n[impl] % 10 == 0 else 0.015, s.call_id)

    host = timing.warmup(["k"], Tail(FakeClock(), {"k": [1.0]}), TimingConfig(warmup_ms=40.0))
    assert host == {"k": 0.04}


def test_warmup_takes_the_minimum_number_of_calls_for_mid_length_kernels():
    dev = FakeDevice(FakeClock(), {"k": [20.0]})
    timing.warmup(["k"], dev, TimingConfig(warmup_ms=25.0, min_warmup_calls=3))
    assert sum(1 for e in dev.log if e[1] == "k") == 1 + 3  # 2 x 20 ms would pass 25 ms, 3 calls are the minimum


def test_timed_calls_get_the_hold_and_count_host_bound_ones():
    clock = FakeClock()
    dev = FakeDevice(clock, {"a": [1.0]}, host_ms=0.2)
    hold = Hold(cycles=198_000, cycles_per_us=1980.0)  # 100 us
    m = timing.measure(["a"], dev, TimingConfig(min_reps=3, target_rse=1.0), random.Random(0), hold, clock=clock)
    assert all(e[3] == 198_000 for e in dev.log if e[0] == "call")
    assert m.host_bound["a"] == len(m.samples["a"])  # 200 us to enqueue > 100 us hold, every time


def test_hold_for_and_calibration():
    fast = timing.hold_for({"reference": 0.006, "expert": 0.010}, cycles_per_us=1980.0)
    assert fast.cycles == timing.HOLD_CYCLES and round(fast.us) == 51
    slow = timing.hold_for({"reference": 0.006, "expert": 0.040}, cycles_per_us=1980.0)
    assert slow.us == pytest.approx(120.0, rel=1e-3)  # 3 x the 40 us launcher
    assert timing.hold_for({"x": 10.0}, cycles_per_us=1000.0).us == timing.MAX_HOLD_US
    assert timing.cycles_per_us(1_000_000, [0.52, 0.505, 0.51, 0.9, -1.0]) == pytest.approx(1_000_000 / 520.0)  # median of the valid ones
    assert timing.cycles_per_us(1000, []) == Hold().cycles_per_us


def test_a_tail_of_slow_calls_does_not_keep_timing_going_once_the_median_is_settled():
    # nine fast calls and one 5x slower, over and over: the mean's error stays large (~13 % at
    # 20 rounds), the median's is zero (the quartiles are both 1.0), so timing stops at min_reps
    clock = FakeClock()
    dev = FakeDevice(clock, {"a": [1.0] * 9 + [5.0]}, call_s=0.0)
    m = timing.measure(["a"], dev, TimingConfig(min_reps=20, target_rse=0.01, budget_s=100.0), random.Random(0), clock=clock)
    assert m.rounds == 20


def test_median_rse_matches_the_normal_theory():
    rng = random.Random(1)
    xs = [rng.gauss(100.0, 2.0) for _ in range(4000)]
    want = (3.14159265 / 2) ** 0.5 * 2.0 / 4000 ** 0.5 / 100.0  # sqrt(pi/2) sigma / sqrt(n) / median
    assert timing.median_rse(xs) == pytest.approx(want, rel=0.1)
    assert timing.median_rse([1.0, 2.0, 3.0]) == float("inf")  # too few samples to have quartiles
