"""Kernel times from a CUPTI timeline: which kernels belong to which timed call, and their busy time.
The timeline below is what one traced pass looks like: per call a flush (fill), the hold
(spin_kernel), then the call's own kernels; a final flush and hold close the last call."""

import pytest

from d2k_profile import kernel_trace as kt
from d2k_profile.kernel_trace import Span


def timeline(calls: list[list[tuple[str, float, float]]]) -> list[Span]:
    spans, t = [Span("setup_copy", 0.0, 1.0)], 10.0
    for kernels in calls + [[]]:
        spans += [Span("vectorized_elementwise_kernel<FillFunctor<int>>", t, t + 30), Span("spin_kernel", t + 31, t + 81)]
        t += 84
        for name, start, dur in kernels:
            spans.append(Span(name, t + start, t + start + dur))
        t += 200
    return spans


def test_split_calls_assigns_each_kernel_to_its_call():
    spans = timeline([[("softmax", 0, 19)], [("gemm_a", 0, 90), ("gemm_b", 92, 5)], [("softmax", 0, 18)]])
    calls = kt.split_calls(list(reversed(spans)))  # order on input does not matter
    assert [[s.name for s in c] for c in calls] == [["softmax"], ["gemm_a", "gemm_b"], ["softmax"]]


def test_a_call_that_launched_nothing_is_an_empty_segment():
    calls = kt.split_calls(timeline([[("k", 0, 5)], [], [("k", 0, 5)]]))
    assert [len(c) for c in calls] == [1, 0, 1]


def test_busy_time_counts_overlaps_once_and_skips_gaps():
    assert kt.busy_us([Span("a", 0, 10), Span("b", 5, 12), Span("c", 20, 25)]) == pytest.approx(17.0)
    assert kt.busy_us([Span("a", 0, 10), Span("b", 2, 3)]) == pytest.approx(10.0)
    assert kt.busy_us([]) == 0.0


def test_summarize_takes_medians_over_calls():
    calls = kt.split_calls(timeline([[("k", 0, 19)], [("k", 0, 21)], [("k", 0, 20), ("k2", 25, 4)]]))
    t = kt.summarize(calls, [0.0225, 0.0235, 0.0260])
    assert t.kernel_ms == pytest.approx(0.021)  # busy times 19, 21, 24 us
    assert t.event_ms == pytest.approx(0.0235)
    assert t.kernels_per_call == 1 and t.kernel_names == ["k", "k2"]
    assert kt.summarize([], []) is None
    assert kt.summarize(calls, [0.02]) is None  # calls and event samples must pair up


def test_traced_calls_shrink_for_slow_kernels():
    assert kt.calls_for(0.02) == kt.MAX_CALLS
    assert kt.calls_for(50.0) == 5
    assert kt.calls_for(2100.0) == 1
    assert kt.calls_for(None) == kt.MAX_CALLS


def test_no_trace_under_an_injected_profiler(monkeypatch):
    monkeypatch.setenv("CUDA_INJECTION64_PATH", "/opt/nvidia/nsight-compute/libInjection.so")
    assert "ncu/nsys" in kt.unavailable_reason()
    monkeypatch.delenv("CUDA_INJECTION64_PATH")
    assert kt.unavailable_reason() is None
