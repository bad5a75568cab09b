"""Every timed call has the same steps, whichever implementation it runs.

Copying a call's outputs out after its end event (the escrow) changes what the next call finds on
the GPU: on the H200 the softmax reference timed against itself came out 1.2-1.5 % slower in one
slot when only the other slot was escrowed (``benchmarks/native_slot_bias.py``). So the judge
escrows every timed implementation's outputs, the reference's and the expert's too, and
re-checks only the ones it is told to. These tests read the commands the judge's timed device
sends, through a recording stand-in for the session."""

from __future__ import annotations

from d2k_profile import frames
from d2k_profile.device import SandboxDevice, escrow_sets
from d2k_profile.frames import CallFlag, CallFrame, CallStatus, OutFlag
from d2k_profile.results import Outcome

NAMES = ["reference", "expert", "submission"]


class RecordingSession:
    """Answers every call command with a finished call and keeps the command it was sent."""

    def __init__(self):
        self.sent: list[tuple] = []

    def op(self, command: bytes, deadline: float):
        self.sent.append(frames.COMMAND.unpack(command))
        return CallFrame(len(self.sent), 0, CallStatus.OK, OutFlag.ESCROWED, 0.01, 0.001, 0.02, "")

    def expect(self, frame, kind):
        assert isinstance(frame, kind)
        return frame


class Inputs:
    timed_index = 3

    def refresh_timed(self):
        return ()


def device(checked=None) -> tuple[SandboxDevice, RecordingSession]:
    s = RecordingSession()
    d = SandboxDevice(s, Inputs(), {n: i for i, n in enumerate(NAMES)}, escrow_sets(NAMES), [(), (), ()],
                      lambda _x: None, None, False, 1e18, Outcome(), checked=checked)
    return d, s


def test_every_implementation_has_its_own_escrow_set():
    assert escrow_sets(NAMES) == {"reference": 0, "expert": 1, "submission": 2}


def test_every_timed_call_is_escrowed_into_its_implementations_set():
    d, s = device()
    for name in NAMES:
        d.call(name, True, 0)
    for name, (_magic, _op, impl, input_set, escrow_set, flags, _hold, _arg) in zip(NAMES, s.sent):
        assert impl == NAMES.index(name) and input_set == Inputs.timed_index
        assert flags & CallFlag.TIMED and flags & CallFlag.ESCROW, name
        assert escrow_set == escrow_sets(NAMES)[name]


def test_warmup_calls_are_neither_timed_nor_escrowed():
    d, s = device()
    d.call("reference", False, 0)
    assert s.sent[0][5] == 0


def test_only_the_checked_implementations_are_rechecked():
    d, _ = device(checked=frozenset(NAMES) - {"reference"})
    assert [d.checkable(n) for n in NAMES] == [False, True, True]
    d, _ = device(checked=frozenset())  # the clean phase: escrowed, never re-checked
    assert not any(d.checkable(n) for n in NAMES)
    d, _ = device()  # by default every escrowed implementation is
    assert all(d.checkable(n) for n in NAMES)
