"""The judge's verdict on one call, from the native loop's report and the escrowed outputs; and
the clean-reference and roofline cross-checks."""

import pytest
import torch

from d2k_profile import crosscheck as cc
from d2k_profile.checks import CompileFailure, Verdict, check_call
from d2k_profile.frames import CallFrame, CallStatus, OutFlag
from d2k_profile.results import Outcome, Status, Timing
from d2k_spec.task import Tolerance

TOL = Tolerance(atol=1e-6, rtol=1e-4, max_rel_l2=1e-4)


def frame(status=CallStatus.OK, flags=OutFlag.ESCROWED, text=""):
    return CallFrame(1, 2, status, OutFlag(flags), 0.1, 0.01, 0.2, text)


def verdict(fr, out, inputs_after, in_place=False, outcome=None):
    x = torch.randn(4, 8)
    ref = torch.softmax(x, -1)
    escrow = (out(x, ref),)
    shared = (inputs_after(x),)
    try:
        check_call(fr, escrow, shared, (x,), ref, TOL, in_place, "seed 0", outcome)
    except Verdict as v:
        return v.status, v.reason
    return Status.OK, ""


def honest(x, ref):
    return ref.clone()


def same(x):
    return x.clone()


def test_order_of_the_checks():
    assert verdict(frame(), honest, same)[0] == Status.OK
    assert verdict(frame(CallStatus.EXCEPTION, 0, "ValueError: x"), honest, same) == (Status.RUNTIME_ERROR, "seed 0: ValueError: x")
    assert verdict(frame(CallStatus.DEVICE_BUSY, 0, "still running"), honest, same)[0] == Status.CHEAT_SUSPECTED
    assert verdict(frame(CallStatus.BAD_OUTPUT, OutFlag.SUBCLASS, "a Lazy"), honest, same)[0] == Status.CHEAT_SUSPECTED
    assert verdict(frame(CallStatus.BAD_OUTPUT, OutFlag.WRONG_SHAPE, "shape"), honest, same)[0] == Status.INCORRECT
    # returning the input unchanged is wrong (incorrect); returning it holding the answer is a cheat
    assert verdict(frame(flags=OutFlag.ESCROWED | OutFlag.ALIASES_INPUT), lambda x, r: x.clone(), same)[0] == Status.INCORRECT
    assert verdict(frame(flags=OutFlag.ESCROWED | OutFlag.ALIASES_INPUT), honest, same)[0] == Status.CHEAT_SUSPECTED
    assert verdict(frame(flags=OutFlag.ESCROWED | OutFlag.ALIASES_INPUT), honest, same, in_place=True)[0] == Status.OK
    assert verdict(frame(), honest, lambda x: x * 0.5)[0] == Status.CHEAT_SUSPECTED  # modified input
    with pytest.raises(CompileFailure):
        verdict(frame(CallStatus.BUILD_FAILURE, 0, "nvcc failed"), honest, same)


def test_an_incorrect_record_says_by_how_much():
    out = Outcome()
    status, reason = verdict(frame(), lambda x, r: torch.zeros_like(r), same, outcome=out)
    assert status == Status.INCORRECT and "elements outside" in reason
    assert out.max_abs_err is not None and out.max_abs_err > 0 and out.rel_l2_err == pytest.approx(1.0)


def t(ms, rse=0.001):
    return Timing(ms, 0.0, ms, ms, rse, 50)


def test_clean_reference_check():
    assert cc.clean_findings({"reference": t(0.102)}, {"reference": t(0.100)}).problems == []  # +2 %: noise
    slow = cc.clean_findings({"reference": t(0.150), "expert": t(0.05)}, {"reference": t(0.100), "expert": t(0.05)})
    assert len(slow.problems) == 1 and "+50.0 %" in slow.problems[0] and "reference" in slow.problems[0]
    noisy = cc.clean_findings({"reference": t(0.107, 0.02)}, {"reference": t(0.100, 0.02)})  # 4 sigma of 2.8 % covers +7 %
    assert noisy.problems == []
    assert "faster inside the sandbox" in cc.clean_findings({"reference": t(0.08)}, {"reference": t(0.1)}).notes[0]


def tk(ms, kernel_ms):
    return Timing(ms, 0.0, ms, ms, 0.001, 50, kernel_ms=kernel_ms)


def test_clean_check_of_a_host_bound_reference_decides_on_kernel_times():
    # the histogram case measured on the H200: +6.6 % event time, the same kernel time
    same_kernels = cc.clean_findings({"reference": tk(0.7414, 0.4957)}, {"reference": tk(0.6956, 0.4951)}, {"reference"})
    assert same_kernels.problems == [] and "host-bound" in same_kernels.notes[0]
    # host-bound, but its kernels ran 30 % longer: something loaded the device
    slowed = cc.clean_findings({"reference": tk(0.90, 0.65)}, {"reference": tk(0.70, 0.50)}, {"reference"})
    assert len(slowed.problems) == 1 and "kernels took" in slowed.problems[0]
    # not host-bound: the event times still decide, whatever the kernel times say
    assert cc.clean_findings({"reference": tk(0.7414, 0.4957)}, {"reference": tk(0.6956, 0.4951)}).problems
    # host-bound without kernel times (no trace): the event times are all there is
    assert cc.clean_findings({"reference": t(0.7414)}, {"reference": t(0.6956)}, {"reference"}).problems == []


def test_host_bound_implementations():
    from d2k_profile.timing import Measurement

    m = Measurement({"reference": [1.0] * 40, "submission": [1.0] * 40}, {}, {"reference": 40, "submission": 2}, [])
    assert m.host_bound_impls() == {"reference"}  # 2 of 40 is under the 5 % share


def test_roofline_floor_is_a_status_not_a_note():
    assert cc.roofline_findings(0.05, 0.1, "H200").problems
    assert not cc.roofline_findings(0.095, 0.1, "H200").problems
