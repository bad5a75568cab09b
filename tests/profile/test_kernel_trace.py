"""Kernel times from the native loop's per-call trace frames, and what the judge decides from
them (:mod:`d2k_profile.crosscheck`): escape before the start event or past the end event, kernel
time beyond the event time, activity outside every call, empty calls, forbidden kernels."""

import pytest

from d2k_profile import crosscheck as cc
from d2k_profile import kernel_trace as kt
from d2k_profile.frames import OpKind, TraceCallFrame, TraceFlag, TraceOp, TraceSummaryFrame

OK_SUMMARY = TraceSummaryFrame(0, 0, 0, 0, 0, 100, "")
T = 7  # CUPTI's id of the timed stream
FULL = TraceFlag.EVENT_TS | TraceFlag.JOINS


def call(cid, busy=20.0, early=-3.0, late=-2.0, n=1, names=("softmax_kernel",), markers=3, ops=None, flags=FULL):
    """A traced call; by default one kernel on the timed stream ending ``late`` us from the end
    event (the end marker's ``late_us`` says the same)."""
    if ops is None:
        ops = (TraceOp(OpKind.KERNEL, T, 0, late - busy, late),) if n else ()
    return TraceCallFrame(cid, 0, n, markers, busy, early, late, tuple(names), T, flags, tuple(ops))


def k(stream, start, end, kind=OpKind.KERNEL):
    return TraceOp(kind, stream, 0, start, end)


def rec(stream, sync):
    return TraceOp(OpKind.RECORD, stream, sync)


def wait(stream, sync):
    return TraceOp(OpKind.WAIT, stream, sync)


CALLS = [("reference", 1, 0.030), ("submission", 2, 0.024), ("reference", 3, 0.031), ("submission", 4, 0.025),
         (kt.PROBE, 5, 0.0030), (kt.PROBE, 6, 0.0031)]


def traces(overrides=None):
    out = {1: call(1, 27.0, names=("cunn_SoftMaxForward",)), 2: call(2, 21.0), 3: call(3, 28.0, names=("cunn_SoftMaxForward",)),
           4: call(4, 22.0), 5: call(5, 0.7, names=("d2k_probe",)), 6: call(6, 0.8, names=("d2k_probe",))}
    out.update(overrides or {})
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
    f = cc.trace_findings([call(1, names=("cunn_SoftMaxForward",)), call(2, late=500.0, markers=1, flags=TraceFlag.JOINS)], OK_SUMMARY,
                          CALLS[:2], 0.002, {"cunn_SoftMaxForward"}, "submission")
    assert f.problems == [] and "lacked their hold or end marker" in f.notes[0]
    # with the end event's own timestamp the late work needs no end marker
    f = cc.trace_findings([call(1, names=("cunn_SoftMaxForward",)), call(2, late=500.0, markers=1)], OK_SUMMARY, CALLS[:2], 0.002,
                          {"cunn_SoftMaxForward"}, "submission")
    assert len(f.problems) == 1 and "500.0 us past its end event" in f.problems[0]


def test_activity_outside_every_call_and_dropped_records_are_problems():
    f = cc.trace_findings(traces(), TraceSummaryFrame(0, 6, 2, 1, 5, 100, "activity launched outside every call: hog"), CALLS, 0.002, set(), "submission")
    assert any("outside every timed call" in p for p in f.problems)
    assert any("dropped 5" in p for p in f.problems) and any("no recorded API call" in n for n in f.notes)


# --- stream joins and the end event (the side_stream_sleep class) ----------------------------------------
SIDE = 9


def side_sleep(end_us):
    """side_stream_sleep: the side stream waits for the inputs (record on T, wait on SIDE), runs the
    softmax, and is never joined back; the timed stream only sleeps."""
    return (rec(T, 1), wait(SIDE, 1), k(SIDE, -120.0, end_us), k(T, -118.0, -0.2))


@pytest.mark.parametrize("end_us", [-0.5, 0.4, 3.0, 40.0])
def test_unjoined_side_stream_is_a_problem_whenever_it_ends(end_us):
    """Ending just before the end event (the H200 run: the sleep outlasted the hidden kernel, so the
    old end-marker check saw nothing) or after it: hidden either way."""
    f = cc.trace_findings(traces({4: call(4, busy=120.0, ops=side_sleep(end_us))}), OK_SUMMARY, CALLS, 0.0023, set(), "submission")
    assert any("never joined back" in p and "kernel on stream 9" in p for p in f.problems), f.problems
    assert any("past its end event" in p for p in f.problems) == (end_us > cc.LATE_US)


def test_one_hidden_call_among_many_is_enough():
    many = [("submission", i, 0.121) for i in range(100, 300)]
    ts = [call(i, busy=118.0) for i in range(100, 300)]
    ts[137] = call(237, busy=120.0, ops=side_sleep(-0.5))
    f = cc.trace_findings(ts, OK_SUMMARY, many, 0.0023, set(), "submission")
    assert any("never joined back" in p and "on 1 call(s)" in p for p in f.problems), f.problems


def test_a_timed_call_without_its_trace_is_a_problem():
    f = cc.trace_findings([t for t in traces() if t.call_id != 4], OK_SUMMARY, CALLS, 0.0023, set(), "submission")
    assert any("no device-activity trace" in p for p in f.problems), f.problems


@pytest.mark.parametrize("ops", [
    (rec(T, 1), wait(SIDE, 1), k(SIDE, -30, -2), rec(SIDE, 2), wait(T, 2)),  # wait_stream both ways
    (rec(T, 1), wait(SIDE, 1), k(SIDE, -30, -12), k(T, -30, -20), rec(SIDE, 2), wait(T, 2), k(T, -10, -1)),  # fork, join, more work
    (k(SIDE, -30, -20), rec(SIDE, 2), wait(11, 2), k(11, -19, -9), rec(11, 3), wait(T, 3)),  # joined through a third stream
    (k(SIDE, -30, -20), TraceOp(OpKind.SYNC_STREAM, SIDE)),  # the host waited for the side stream
    (k(SIDE, -30, -20), rec(SIDE, 4), TraceOp(OpKind.SYNC_EVENT, 0, 4)),  # ... or for an event after the work
    (k(SIDE, -30, -20), k(12, -30, -25), TraceOp(OpKind.SYNC_CONTEXT, 0)),  # ... or for the whole device
    (k(SIDE, -30, -20, OpKind.GRAPH), k(T, -19, -1, OpKind.GRAPH)),  # nodes of a graph launch
])
def test_joined_side_streams_are_honest(ops):
    f = cc.trace_findings(traces({4: call(4, busy=22.0, ops=ops)}), OK_SUMMARY, CALLS, 0.0023, set(), "submission")
    assert f.problems == [] and f.notes == [], f.problems


@pytest.mark.parametrize("ops", [
    (rec(SIDE, 2), k(SIDE, -30, -2), wait(T, 2)),  # the event was recorded before the work
    (k(SIDE, -30, -2), rec(SIDE, 2), wait(11, 2)),  # joined into a stream that is never joined itself
    (k(SIDE, -30, -2), rec(SIDE, 2), wait(T, 3)),  # waits for another record
    (k(SIDE, -30, -20), k(12, -30, -25), TraceOp(OpKind.SYNC_STREAM, 12)),  # the host waited for another stream
])
def test_near_joins_are_not_joins(ops):
    f = cc.trace_findings(traces({4: call(4, busy=22.0, ops=ops)}), OK_SUMMARY, CALLS, 0.0023, set(), "submission")
    assert len(f.problems) == 1 and "never joined back" in f.problems[0], f.problems


def test_late_graph_work_is_caught_by_time():
    f = cc.trace_findings(traces({4: call(4, ops=(k(SIDE, -30, 25.0, OpKind.GRAPH),))}), OK_SUMMARY, CALLS, 0.0023, set(), "submission")
    assert len(f.problems) == 1 and "25.0 us past its end event" in f.problems[0], f.problems


def test_without_event_timestamps_or_join_records_the_end_marker_decides_and_notes_say_so():
    marker_only = TraceFlag.MARK_BASE
    ok = cc.trace_findings(traces({4: call(4, ops=side_sleep(-0.5), flags=marker_only)}), OK_SUMMARY, CALLS, 0.0023, set(), "submission")
    assert ok.problems == [] and any("stream-wait records on 1" in n for n in ok.notes) and any("end-event timestamp on 1" in n for n in ok.notes)
    bad = cc.trace_findings(traces({4: call(4, late=30.0, ops=side_sleep(30.0), flags=marker_only)}), OK_SUMMARY, CALLS, 0.0023, set(),
                            "submission")
    assert any("30.0 us past its end marker" in p for p in bad.problems), bad.problems


def test_clock_skew_measured_on_the_probe_is_tolerated_and_noted():
    skewed = {5: call(5, 0.7, late=1.8, names=("d2k_probe",)), 6: call(6, 0.8, late=1.6, names=("d2k_probe",)), 2: call(2, late=2.5)}
    f = cc.trace_findings(traces(skewed), OK_SUMMARY, CALLS, 0.0023, set(), "submission")
    assert f.problems == [] and any("1.8 us past the end event's timestamp" in n for n in f.notes), (f.problems, f.notes)
    f = cc.trace_findings(traces({**skewed, 2: call(2, late=3.0)}), OK_SUMMARY, CALLS, 0.0023, set(), "submission")
    assert any("3.0 us past its end event" in p for p in f.problems), f.problems


def test_unjoined_reports_only_the_hidden_activity():
    ops = (rec(T, 1), wait(SIDE, 1), k(SIDE, -30, -2), k(T, -30, -1), k(13, -5, -3))
    assert cc.unjoined(ops, T) == [ops[2], ops[4]]
    assert cc.unjoined(ops + (rec(SIDE, 5), wait(T, 5)), T) == [ops[4]]


def test_kernel_base_names_compare_across_demangled_forms():
    assert cc.kernel_base("void (anonymous namespace)::cunn_SoftMaxForward<4, float>(float*, float const*, int)") == "cunn_SoftMaxForward"
    assert cc.kernel_base("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int)") == "vectorized_layer_norm_kernel"
    assert cc.kernel_base("nvjet_tst_128x256_64x4_2x1_v_bz_coopA_TNT") == "nvjet_tst_128x256_64x4_2x1_v_bz_coopA_TNT"


def test_no_trace_under_an_injected_profiler_or_when_turned_off(monkeypatch):
    monkeypatch.setenv("CUDA_INJECTION64_PATH", "/opt/nvidia/nsight-compute/libInjection.so")
    assert "ncu/nsys" in kt.unavailable_reason(True)
    monkeypatch.delenv("CUDA_INJECTION64_PATH")
    assert kt.unavailable_reason(True) is None and "turned off" in kt.unavailable_reason(False)
