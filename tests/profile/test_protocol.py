"""The typed protocol: one schema for both sides; unknown keys, wrong types and unexpected
messages are errors, never silently dropped; statuses are the Status enum."""

import pytest

from d2k_profile import protocol as p
from d2k_profile.results import Outcome, Status, Timing


def test_round_trip_keeps_types():
    o = Outcome(status=Status.CHEAT_SUSPECTED, reason="x", error_kind="check", timing=Timing(1.0, 0.1, 0.9, 1.0, 0.01, 3, [1.0]),
                notes=["n"], speedup_ci95=[0.9, 1.1], clocks={"before": {"clocks.sm": "1980"}})
    msg, env = p.decode(p.encode(p.Result("w", o), token="t", seq=4), p.TO_PARENT, ("token", "seq"))
    assert msg == p.Result("w", o) and env == {"token": "t", "seq": 4}
    assert isinstance(msg.outcome.status, Status) and isinstance(msg.outcome.timing, Timing)
    bind = p.Bind([[p.BufferSpec("ab", 16, "float32", [2, 2]), p.BufferSpec("", 0, "value", [], 3)]], [])
    assert p.decode(p.encode(bind), p.TO_SANDBOX)[0] == bind


@pytest.mark.parametrize("line, why", [
    (b'{"type": "Result", "workload": "w", "outcome": {"status": "ok", "speed": 9}}', "unknown key"),
    (b'{"type": "Result", "workload": "w", "outcome": {"status": "fine"}}', "is not a Status"),
    (b'{"type": "Result", "workload": 3, "outcome": {}}', "expected str"),
    (b'{"type": "Result", "outcome": {}}', "missing key workload"),
    (b'{"type": "Recorded", "ops": [], "error": ""}', "unexpected message type"),
    (b'{"type": "Nope"}', "unexpected message type"),
    (b'not json', "not JSON"),
])
def test_bad_messages_are_refused(line, why):
    with pytest.raises(p.ProtocolError, match=why):
        p.decode(line, p.TO_PARENT)


def test_every_message_class_is_registered_once():
    assert set(p.TO_SANDBOX) | set(p.FROM_SANDBOX) | set(p.TO_PARENT) == set(p.MESSAGES.values())
    with pytest.raises(p.ProtocolError):
        p.encode(object())
