"""The binary channel of the native loop: SipHash MAC (C++ and Python agree, the paper's test
vector), frame layout, and the judge's refusal of anything that is not an authentic frame."""

import os
import struct

import pytest

from d2k_profile import frames, native
from d2k_profile.frames import CallFrame, CallStatus, ChannelViolation, FrameReader, Kind, OutFlag
from d2k_profile.siphash import siphash24

KEY = bytes(range(16))


def test_siphash_matches_the_paper_and_the_native_module():
    assert siphash24(KEY, bytes(range(15))) == 0xA129CA6149BE45E5  # SipHash paper, appendix A
    mod = native.load(native.prepare(False).path)
    for n in (0, 1, 7, 8, 9, 63, 64, 200):
        data, key = os.urandom(n), os.urandom(16)
        assert mod.siphash(key, data) == siphash24(key, data)


def _pipe_with(*chunks: bytes) -> int:
    r, w = os.pipe()
    for c in chunks:
        os.write(w, c)
    os.close(w)
    return r


def test_frames_round_trip_in_order():
    call = CallFrame(7, 2, CallStatus.EXCEPTION, OutFlag.ESCROWED | OutFlag.NONCONTIGUOUS, 0.25, 0.01, 0.3, "ZeroDivisionError")
    ops = (frames.TraceOp(frames.OpKind.RECORD, 7, 41, -20.0, -20.0), frames.TraceOp(frames.OpKind.WAIT, 9, 41),
           frames.TraceOp(frames.OpKind.KERNEL, 9, 0, -19.5, 3.25))
    trace = struct.pack("<IIIIddd", 7, 2, 3, 3, 12.5, -0.4, -1.2) + frames.text_field("k1\nk2") + struct.pack("<III", 7, 3, 3) + b"".join(
        struct.pack("<IIQdd", int(o.kind), o.stream, o.sync, o.start_us, o.end_us) for o in ops)  # the native layout, spelled out
    r = _pipe_with(frames.encode_frame(KEY, 1, Kind.CALL, frames.call_payload(call)), frames.encode_frame(KEY, 2, Kind.TRACE_CALL, trace))
    reader = FrameReader(r, KEY)
    import time

    assert reader.read(time.monotonic() + 5) == call
    t = reader.read(time.monotonic() + 5)
    assert (t.call_id, t.activities, t.markers, t.busy_us, t.names) == (7, 3, 3, 12.5, ("k1", "k2"))
    assert (t.timed_stream, t.flags, t.ops) == (7, frames.TraceFlag.EVENT_TS | frames.TraceFlag.JOINS, ops)
    assert frames.trace_call_payload(t) == trace


@pytest.mark.parametrize("damage", ["mac", "seq", "magic", "garbage"])
def test_anything_but_an_authentic_frame_is_a_violation(damage):
    import time

    good = frames.encode_frame(KEY, 1, Kind.STOPPED, struct.pack("<I", 3))
    bad = {
        "mac": good[:-1] + bytes([good[-1] ^ 1]),
        "seq": frames.encode_frame(KEY, 2, Kind.STOPPED, struct.pack("<I", 3)),  # a replayed or injected frame
        "magic": b"XXXX" + good[4:],
        "garbage": b'{"type": "Result", "outcome": {"status": "ok"}}\n' + b"\0" * 40,
    }[damage]
    reader = FrameReader(_pipe_with(bad), KEY)
    with pytest.raises(ChannelViolation):
        reader.read(time.monotonic() + 5)
    # and the right key is needed: a frame signed with another key fails too
    other = FrameReader(_pipe_with(frames.encode_frame(bytes(16), 1, Kind.STOPPED, struct.pack("<I", 3))), KEY)
    with pytest.raises(ChannelViolation):
        other.read(time.monotonic() + 5)


def test_command_layout_is_fixed():
    assert frames.COMMAND.size == 40
    c = frames.command(frames.Op.CALL, 2, 1, 0, frames.CallFlag.TIMED | frames.CallFlag.ESCROW, 123, 9)
    assert struct.unpack("<IIIIIIQQ", c) == (frames.CMD_MAGIC, 1, 2, 1, 0, 3, 123, 9)
