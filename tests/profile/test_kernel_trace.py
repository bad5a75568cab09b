"""Kernel times from the native loop's per-call trace frames, and what the judge decides from
them (:mod:`d2k_profile.crosscheck`): escape before the start event or past the end event, kernel
time beyond the event time, activity outside every call, empty calls, forbidden kernels."""

import pytest

from d2k_profile import crosscheck as cc
from d2k_profile import kernel_trace as kt
from d2k_profile.frames import TraceCallFrame, TraceSummaryFrame

OK_SUMMARY = TraceSummaryFrame(0, 0, 0, 0, 0, 100, "")


def call(cid, busy=20.0, early=-3.0, late=-2.0, n=1, names=("softmax_kernel",), markers=3):
    return TraceCallFrame(cid, 0, n, markers, busy, early, late, tuple(names))


CALLS = [("reference", 1, 0.030), ("submission", 2, 0.024), ("reference", 3, 0.031), ("submission", 4, 0.025),
         (kt.PROBE, 5, 0.0030), (kt.PROBE, 6, 0.0031)]


def traces(**overrides):
    out = {1: call(1, 27.0, names=("cunn_SoftMaxForward",)), 2: call(2, 21.0), 3: call(3, 28.0, names=("cunn_SoftMaxForward",)),
           4: call(4, 22.0), 5: call(5, 0.7, names=("d2k_probe",)), 6: call(6, 0.8, names=("d2k_probe",))}
    out.update(overrides)
    return list(out.values())


def test_medians_per_implementation_and_launch_latency():
    by = kt.by_impl(traces(), CALLS)
    assert by["submission"].kernel_ms == pytest.approx(0.0215) and by["submission"].event_ms == pytest.approx(0.0245)
    assert by["reference"].kernel_names == ["cunn_SoftMaxForward"] and by["submission"].calls == 2
    assert kt.launch_latency_ms(by) == pytest.approx(0.00305 - 0.00075)


def test_honest_calls_raise_nothing():
    f = cc.trace_findings(traces(), OK_SUMMARY, CALLS, 0.0023, {"void (anonymous namespace)::cunn_SoftMaxForward<4>(float*)"}, "submission")
    assert f.problems == [] and f.notes == []


@pytest.mark.parametrize("bad, words", [
    ({2: call(2, early=40.0)}, "during the stream hold"),
    ({4: call(4, late=900.0)}, "past the end event"),
    ({4: call(4, busy=240.0)}, "kernel time exceeds the event time"),
    ({2: call(2, n=0, busy=0.0, names=())}, "no device activity"),
    ({2: call(2, names=("softmax_kernel", "cunn_SoftMaxForward"))}, "forbidden library op's kernels: cunn_SoftMaxForward"),
])
def test_each_escape_is_a_problem(bad, words):
    f = cc.trace_findings([bad.get(t.call_id, t) for t in traces()], OK_SUMMARY, CALLS, 0.0023,
                          {"void (anonymous namespace)::cunn_SoftMaxForward<4>(float*)"}, "submission")
    assert len(f.problems) == 1 and words in f.problems[0], f.problems


def test_reference_kernels_are_not_forbidden_and_missing_markers_are_only_noted():
    f = cc.trace_findings([call(1, names=("cunn_SoftMaxForward",)), call(2, late=500.0, markers=1)], OK_SUMMARY, CALLS[:2], 0.002,
                          {"cunn_SoftMaxForward"}, "submission")
    assert f.problems == [] and "lacked their hold or end marker" in f.notes[0]


def test_activity_outside_every_call_is_a_problem_and_dropped_records_a_note():
    f = cc.trace_findings(traces(), TraceSummaryFrame(0, 6, 2, 1, 5, 100, "activity launched outside every call: hog"), CALLS, 0.002, set(), "submission")
    assert any("outside every timed call" in p for p in f.problems)
    assert any("no recorded API call" in n for n in f.notes) and any("dropped 5" in n for n in f.notes)


def test_kernel_base_names_compare_across_demangled_forms():
    assert cc.kernel_base("void (anonymous namespace)::cunn_SoftMaxForward<4, float>(float*, float const*, int)") == "cunn_SoftMaxForward"
    assert cc.kernel_base("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int)") == "vectorized_layer_norm_kernel"
    assert cc.kernel_base("nvjet_tst_128x256_64x4_2x1_v_bz_coopA_TNT") == "nvjet_tst_128x256_64x4_2x1_v_bz_coopA_TNT"


def test_no_trace_under_an_injected_profiler_or_when_turned_off(monkeypatch):
    monkeypatch.setenv("CUDA_INJECTION64_PATH", "/opt/nvidia/nsight-compute/libInjection.so")
    assert "ncu/nsys" in kt.unavailable_reason(True)
    monkeypatch.delenv("CUDA_INJECTION64_PATH")
    assert kt.unavailable_reason(True) is None and "turned off" in kt.unavailable_reason(False)
