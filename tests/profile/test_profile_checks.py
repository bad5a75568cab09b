"""Anti-cheat checks and null kernels as pure functions."""

import time

import pytest
import torch

from d2k_profile import anticheat
from d2k_profile.nulls import null_outputs, passing_nulls
from d2k_spec.task import Tolerance

TOL = Tolerance(atol=1e-6, rtol=1e-4, max_rel_l2=1e-4)


def test_aliasing():
    x = torch.randn(4, 8)
    assert anticheat.aliased((x[1:],), (x,)) == [(0, 0)]
    assert anticheat.aliased((x.view(-1),), (torch.randn(2), x)) == [(0, 1)]
    assert anticheat.aliased((x.clone(),), (x,)) == []


def test_modified_inputs_is_bitwise():
    x = torch.tensor([1.0, float("nan")])
    assert anticheat.modified_inputs((x.clone(),), (x,)) == []
    y = x.clone()
    y[0] = 2.0
    assert anticheat.modified_inputs((x,), (y,)) == [0]


def test_plain_tensor():
    class Sub(torch.Tensor):
        pass

    assert anticheat.is_plain_tensor(torch.ones(1))
    assert not anticheat.is_plain_tensor(torch.ones(1).as_subclass(Sub))


def test_forbidden_calls_recorded_by_api_name():
    x = torch.randn(3, 5)
    with anticheat.CallRecorder() as rec:
        torch.ops.aten._softmax(x, -1, False)
    assert anticheat.forbidden_calls(rec.names, ["torch.softmax"]) == ["torch.softmax"]
    with anticheat.CallRecorder() as rec:
        torch.exp(x) / torch.exp(x).sum(-1, keepdim=True)
    assert anticheat.forbidden_calls(rec.names, ["torch.softmax"]) == []
    with anticheat.CallRecorder() as rec:
        torch.nn.functional.layer_norm(x, (5,))
    assert anticheat.forbidden_calls(rec.names, ["torch.nn.functional.layer_norm"]) == ["torch.nn.functional.layer_norm"]


def test_patch_detection(monkeypatch):
    before = anticheat.snapshot()
    assert anticheat.patched(before) == []
    monkeypatch.setattr(time, "perf_counter", lambda: 0.0)
    monkeypatch.setattr(torch.cuda.Event, "elapsed_time", lambda self, end: 0.001)
    assert anticheat.patched(before) == ["time.perf_counter", "torch.cuda.Event.elapsed_time"]


def test_escaped_stream():
    assert anticheat.escaped_stream(0.005, 0.26)  # ~250 us of work timed at 5 us
    assert anticheat.escaped_stream(0.003, 2.2)  # the adversarial side-stream case
    assert not anticheat.escaped_stream(0.2, 0.215)  # sync overhead only
    assert not anticheat.escaped_stream(0.004, 0.018)  # tiny kernel: host latency below the gap floor
    assert not anticheat.escaped_stream(0.038, 0.080)  # busy host: a slow synchronize is not a cheat


def test_stream_hold_covers_the_slowest_enqueue():
    from d2k_profile import timing

    fast = timing.hold_for({"reference": 0.006, "expert": 0.010}, cycles_per_us=1980.0)
    assert fast.cycles == timing.HOLD_CYCLES and round(fast.us) == 51  # the floor
    slow = timing.hold_for({"reference": 0.006, "expert": 0.040}, cycles_per_us=1980.0)
    assert slow.us == pytest.approx(120.0, rel=1e-3)  # 3 x the 40 us Python launcher
    assert timing.hold_for({"x": 10.0}, cycles_per_us=1000.0).us == timing.MAX_HOLD_US
    assert timing.hold_for({}, cycles_per_us=1980.0).cycles == timing.HOLD_CYCLES


def test_nulls_catch_weak_and_pass_strong_workloads():
    torch.manual_seed(0)
    x = torch.randn(8, 64) * 4
    ref = torch.softmax(x, -1)
    assert set(null_outputs((x,), ref)) == {"zeros", "constant", "passthrough"}
    assert passing_nulls((x,), ref, TOL) == []
    # A workload with a constant answer (softmax of a constant row) is too weak
    flat = torch.zeros(8, 64)
    assert "constant" in passing_nulls((flat,), torch.softmax(flat, -1), TOL)
    # A loose absolute tolerance lets zeros pass on tiny outputs when the norm check is off
    loose = Tolerance(atol=1e-2, rtol=0.0, max_rel_l2=10.0)
    long_rows = torch.randn(2, 100000)
    assert "zeros" in passing_nulls((long_rows,), torch.softmax(long_rows, -1), loose)
