"""Anti-cheat checks and null kernels as pure functions."""

import time

import pytest
import torch

from d2k_profile import anticheat
from d2k_profile.nulls import best_scalar_constant, null_outputs, passing_nulls
from d2k_spec.task import Tolerance

TOL = Tolerance(atol=1e-6, rtol=1e-4, max_rel_l2=1e-4)


def test_modified_inputs_is_bitwise():
    x = torch.tensor([1.0, float("nan")])
    assert anticheat.modified_inputs((x.clone(),), (x,)) == []
    y = x.clone()
    y[0] = 2.0
    assert anticheat.modified_inputs((x,), (y,)) == [0]


def test_forbidden_calls_recorded_at_the_dispatcher():
    """The recorder sees ATen ops, whichever API called them, and no TorchFunctionMode is active
    while it records (a submission that looks for one sees nothing)."""
    x = torch.randn(3, 5)
    with anticheat.OpRecorder() as rec:
        assert not torch._C._is_torch_function_mode_enabled()
        torch.ops.aten._softmax(x, -1, False)
    assert anticheat.forbidden_calls(rec.names, ["torch.softmax"]) == ["torch.softmax"]
    with anticheat.OpRecorder() as rec:
        torch.exp(x) / torch.exp(x).sum(-1, keepdim=True)
    assert anticheat.forbidden_calls(rec.names, ["torch.softmax"]) == []
    with anticheat.OpRecorder() as rec:
        torch.nn.functional.layer_norm(x, (5,))
    assert anticheat.forbidden_calls(rec.names, ["torch.nn.functional.layer_norm"]) == ["torch.nn.functional.layer_norm"]


def test_patch_detection(monkeypatch):
    before = anticheat.snapshot()
    assert anticheat.patched(before) == []
    monkeypatch.setattr(time, "perf_counter", lambda: 0.0)
    monkeypatch.setattr(torch.cuda.Event, "elapsed_time", lambda self, end: 0.001)
    assert anticheat.patched(before) == ["time.perf_counter", "torch.cuda.Event.elapsed_time"]


def test_an_added_method_that_shadows_an_inherited_one_is_a_patch(monkeypatch):
    before = anticheat.snapshot()
    monkeypatch.setattr(torch.Tensor, "fill_", lambda self, v: self, raising=False)  # TensorBase.fill_ is inherited
    monkeypatch.setattr(torch.Tensor, "brand_new_helper", lambda self: 1, raising=False)  # shadows nothing
    assert anticheat.patched(before) == ["torch.Tensor.fill_"]


def test_every_global_of_the_reference_module_is_watched():
    import types

    ref = types.ModuleType("ref")
    ref.torch = torch
    ref.reference = lambda x: x
    before = anticheat.snapshot(strict=[("reference", ref)])
    ref.torch = object()  # a non-callable look-alike (the patch_reference_module case)
    assert anticheat.patched(before, strict=[("reference", ref)]) == ["reference.torch"]


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


def test_scalar_constant_null_is_fixed_before_the_inputs():
    """A one-element output's best constant is not the reference's own value (that is the answer):
    it is one value chosen over every seed's reference, and it must pass all of them."""
    tol = Tolerance(atol=1e-4, rtol=1e-4, max_rel_l2=1e-4)
    sums = [torch.tensor(v, dtype=torch.float32) for v in (1000.0, 1000.05, 999.98)]
    x = torch.randn(16)
    # without the other seeds there is no scalar constant to try
    assert "constant" not in null_outputs((x,), sums[0])
    assert passing_nulls((x,), sums[0], tol) == []
    # seeds whose sums lie within the tolerance of one value: a hard-coded 1000.0 passes them all
    assert passing_nulls((x,), sums[0], tol, tuple(sums[1:])) == ["constant"]
    c = float(null_outputs((x,), sums[0], tuple(sums[1:]), tol)["constant"][0])
    assert all(abs(c - float(s)) <= 1e-4 + 1e-4 * float(s) for s in sums)
    # sums that vary between seeds by more than the tolerance: no constant passes every seed
    spread = [torch.tensor(v) for v in (1000.0, 1250.0, 820.0)]
    assert passing_nulls((x,), spread[0], tol, tuple(spread[1:])) == []
    # ... even though a constant passes each seed alone (the old rule's blind spot)
    assert all(passing_nulls((x,), s, tol, (s.clone(),)) == ["constant"] for s in spread)


def test_best_scalar_constant_intersects_the_accepted_intervals():
    tol = Tolerance(atol=0.0, rtol=0.1, max_rel_l2=1.0)
    assert best_scalar_constant([10.0, 11.5], tol) == pytest.approx((10.35 + 11.0) / 2)  # [9, 11] & [10.35, 12.65]
    assert best_scalar_constant([10.0, 20.0], tol) == pytest.approx(15.0)  # disjoint: the mean, which fails both
    assert not passing_nulls((torch.ones(3),), torch.tensor(10.0), tol, (torch.tensor(20.0),))
    # the fallback mean (1060) lies within the first seed's 10 % but not the last seed's: it is
    # judged on every seed, as a kernel returning it would be
    seeds = [torch.tensor(v) for v in (1000.0, 1000.0, 1000.0, 1000.0, 1300.0)]
    assert best_scalar_constant([1000.0, 1000.0, 1000.0, 1000.0, 1300.0], tol) == pytest.approx(1060.0)
    assert passing_nulls((torch.ones(3),), seeds[0], tol, tuple(seeds[1:])) == []


def test_in_place_task_checks_the_buffers_against_the_references_in_place_result():
    """An in-place task's answer is its input buffers: they must hold what the reference's own
    in-place call left in its copies. Right values returned in new tensors with the inputs left
    untouched is incorrect; touching an input the reference leaves alone is a cheat."""
    from d2k_profile.checks import Verdict, check_inputs, run_reference
    from d2k_profile.results import Status

    def scale_first(x, w):  # an in-place reference: writes x, reads w
        x.mul_(w)
        return x

    plain = (torch.randn(8), torch.randn(8))
    ref, after = run_reference(lambda inputs: scale_first(*inputs), plain)
    assert ref is after[0] and torch.equal(after[1], plain[1]) and not torch.equal(after[0], plain[0])
    check_inputs((after[0].clone(), plain[1].clone()), plain, "honest", True, after, TOL)
    with pytest.raises(Verdict) as untouched:
        check_inputs((plain[0].clone(), plain[1].clone()), plain, "out of place", True, after, TOL)
    assert untouched.value.status == Status.INCORRECT and "input 0 does not hold the in-place result" in untouched.value.reason
    with pytest.raises(Verdict) as other:
        check_inputs((after[0].clone(), plain[1] + 1), plain, "writes w", True, after, TOL)
    assert other.value.status == Status.CHEAT_SUSPECTED
    with pytest.raises(Verdict) as not_in_place:  # an out-of-place task: any change is a cheat
        check_inputs((after[0].clone(), plain[1].clone()), plain, "modifies x", False)
    assert not_in_place.value.status == Status.CHEAT_SUSPECTED
