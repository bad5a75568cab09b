"""The binary channel between the judge and the native call loop in the sandbox.

Commands (judge -> native) are fixed 40-byte records. Results (native -> judge) are frames::

    magic u32 "D2KR" | kind u16 | 0 u16 | payload length u32 | sequence u64 | payload | MAC u64

with the MAC a SipHash-2-4 (:mod:`.siphash`) of everything before it, under a 16-byte key the judge
writes into the command pipe before the first command. The native code reads the key itself, so it
never exists as a Python object in the sandbox; a submission that writes into the result pipe
cannot produce a valid frame, and any byte that is not part of one ends the workload as
``cheat_suspected``. Layouts are mirrored in ``native/d2k_native.cpp`` (and ``native_py.py``).
"""

from __future__ import annotations

import os
import select
import struct
import time
from dataclasses import dataclass
from enum import IntEnum, IntFlag

from .siphash import siphash24

CMD_MAGIC = 0x434B3244
RES_MAGIC = 0x524B3244
COMMAND = struct.Struct("<IIIIIIQQ")
HEADER = struct.Struct("<IHHIQ")
MAC = struct.Struct("<Q")
PROBE_IMPL = 0xFFFF
MAX_PAYLOAD = 1 << 20
OP = struct.Struct("<IIQdd")  # one TraceOp on the wire: kind, stream, sync id, start, end


class Op(IntEnum):
    CALL = 1
    TRACE_BEGIN = 2
    TRACE_END = 3
    CALIBRATE = 4
    STOP = 5
    QUIESCE = 6


class Kind(IntEnum):
    CALL = 1
    TRACE_CALL = 2
    TRACE_SUMMARY = 3
    CALIBRATION = 4
    STOPPED = 5
    QUIESCE = 6
    ERROR = 7


class CallFlag(IntFlag):
    TIMED = 1  # flush, hold and events around the call
    ESCROW = 2  # copy the outputs into the escrow buffers


class CallStatus(IntEnum):
    OK = 0
    EXCEPTION = 1
    BUILD_FAILURE = 2
    CUDA_ERROR = 3
    BAD_OUTPUT = 4
    BAD_COMMAND = 5
    UNSUPPORTED = 6
    DEVICE_BUSY = 7


class OutFlag(IntFlag):
    NOT_TENSOR = 1
    SUBCLASS = 2
    WRONG_COUNT = 4
    WRONG_DTYPE = 8
    WRONG_SHAPE = 16
    WRONG_DEVICE = 32
    NONCONTIGUOUS = 64
    ALIASES_INPUT = 128
    ESCROWED = 256


def command(op: Op, impl: int = 0, input_set: int = 0, escrow_set: int = 0, flags: int = 0, hold_cycles: int = 0, arg: int = 0) -> bytes:
    return COMMAND.pack(CMD_MAGIC, int(op), impl, input_set, escrow_set, int(flags), hold_cycles, arg)


# --- payloads -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class CallFrame:
    call_id: int
    impl: int
    status: CallStatus
    flags: OutFlag
    event_ms: float
    host_ms: float
    wall_ms: float
    text: str


class OpKind(IntEnum):
    """What one traced operation of a call is (``TraceOp.kind``)."""

    KERNEL = 1
    MEMCPY = 2
    MEMSET = 3
    GRAPH = 4  # device activity that is a node of a CUDA graph launch
    RECORD = 10  # an event recorded on ``stream`` (``sync``: that record's unique id)
    WAIT = 11  # ``stream`` waits for the event record ``sync``
    SYNC_STREAM = 12  # the host waited for ``stream`` (and it returned success)
    SYNC_EVENT = 13  # the host waited for the event record ``sync``
    SYNC_CONTEXT = 14  # the host waited for the whole device

    @property
    def activity(self) -> bool:
        return self < OpKind.RECORD


class TraceFlag(IntFlag):
    EVENT_TS = 1  # op times are relative to the end event's device timestamp
    JOINS = 2  # event records, stream waits and host syncs were collected
    TRUNCATED = 4  # the call had more operations than were sent
    MARK_BASE = 8  # op times are relative to the end marker's start (no usable event timestamp)


@dataclass(frozen=True)
class TraceOp:
    """One operation of a traced call, in launch order. ``start_us``/``end_us`` (device activity
    and event records) are relative to the call's base (see :class:`TraceFlag`); 0 when unknown."""

    kind: int
    stream: int
    sync: int = 0
    start_us: float = 0.0
    end_us: float = 0.0


@dataclass(frozen=True)
class TraceCallFrame:
    """Device activity of one traced call (CUPTI): busy time, how far it ran before the start
    marker (end of the stream hold) and after the end marker, its kernel names, and its operations
    (device activity with streams and times, event records, stream waits, host syncs)."""

    call_id: int
    impl: int
    activities: int
    markers: int  # bit 0: hold found, bit 1: end marker found
    busy_us: float
    early_us: float
    late_us: float
    names: tuple[str, ...]
    timed_stream: int = 0xFFFFFFFF  # CUPTI's id of the stream the harness times (unknown: 0xFFFFFFFF)
    flags: int = 0  # TraceFlag
    ops: tuple[TraceOp, ...] = ()


@dataclass(frozen=True)
class TraceSummaryFrame:
    status: int  # 0 ok; else the trace could not be taken (text says why)
    calls: int
    foreign: int  # activities launched outside every call window
    unattributed: int  # activities whose launching API call was not recorded
    dropped: int
    records: int
    text: str


@dataclass(frozen=True)
class CalibrationFrame:
    ms: tuple[float, ...]


@dataclass(frozen=True)
class QuiesceFrame:
    idle: bool
    waited_ms: float


@dataclass(frozen=True)
class StoppedFrame:
    calls: int


@dataclass(frozen=True)
class ErrorFrame:
    text: str


Frame = CallFrame | TraceCallFrame | TraceSummaryFrame | CalibrationFrame | QuiesceFrame | StoppedFrame | ErrorFrame


class ChannelViolation(Exception):
    """Bytes on the result pipe that the native loop did not write (bad magic, sequence or MAC)."""


class ChannelClosed(Exception):
    """The sandbox closed the result pipe (it exited or crashed)."""


class ChannelTimeout(Exception):
    """No frame before the deadline."""


def _text(payload: bytes, pos: int) -> tuple[str, int]:
    (n,) = struct.unpack_from("<I", payload, pos)
    pos += 4
    return payload[pos:pos + n].decode("utf-8", errors="replace"), pos + n


def parse(kind: int, payload: bytes) -> Frame:
    """A frame's payload as its dataclass (``struct.error`` on a malformed payload)."""
    if kind == Kind.CALL:
        cid, impl, status, flags, ev, host, wall = struct.unpack_from("<IIiIddd", payload)
        text, _ = _text(payload, 40)
        return CallFrame(cid, impl, CallStatus(status), OutFlag(flags), ev, host, wall, text)
    if kind == Kind.TRACE_CALL:
        cid, impl, n, markers, busy, early, late = struct.unpack_from("<IIIIddd", payload)
        text, pos = _text(payload, 40)
        timed, flags, nops = struct.unpack_from("<III", payload, pos)
        pos += 12
        ops = tuple(TraceOp(*OP.unpack_from(payload, pos + i * OP.size)) for i in range(nops))
        return TraceCallFrame(cid, impl, n, markers, busy, early, late, tuple(t for t in text.split("\n") if t), timed, flags, ops)
    if kind == Kind.TRACE_SUMMARY:
        status, calls, foreign, unattributed, dropped, records = struct.unpack_from("<iIIIQQ", payload)
        text, _ = _text(payload, 32)
        return TraceSummaryFrame(status, calls, foreign, unattributed, dropped, records, text)
    if kind == Kind.CALIBRATION:
        (n,) = struct.unpack_from("<I", payload)
        return CalibrationFrame(struct.unpack_from(f"<{n}d", payload, 4))
    if kind == Kind.QUIESCE:
        idle, waited = struct.unpack_from("<Id", payload)
        return QuiesceFrame(bool(idle), waited)
    if kind == Kind.STOPPED:
        return StoppedFrame(*struct.unpack_from("<I", payload))
    if kind == Kind.ERROR:
        return ErrorFrame(_text(payload, 0)[0])
    raise struct.error(f"unknown frame kind {kind}")


class FrameReader:
    """Reads and authenticates result frames from the native loop's pipe."""

    def __init__(self, fd: int, key: bytes):
        self.fd, self.key, self.seq, self.buf = fd, key, 0, b""

    def _fill(self, n: int, deadline: float) -> None:
        while len(self.buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChannelTimeout()
            ready, _, _ = select.select([self.fd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                raise ChannelClosed()
            self.buf += chunk

    def pending(self) -> bool:
        """Whether bytes are waiting (unsolicited ones mean someone else is writing)."""
        return bool(self.buf) or bool(select.select([self.fd], [], [], 0)[0])

    def read(self, deadline: float) -> Frame:
        self._fill(HEADER.size, deadline)
        magic, kind, zero, length, seq = HEADER.unpack_from(self.buf)
        if magic != RES_MAGIC or zero != 0 or length > MAX_PAYLOAD:
            raise ChannelViolation(f"bytes on the result pipe that are not a frame: {self.buf[:48]!r}")
        total = HEADER.size + length + MAC.size
        self._fill(total, deadline)
        body, (mac,) = self.buf[:total - MAC.size], MAC.unpack_from(self.buf, total - MAC.size)
        if siphash24(self.key, body) != mac:
            raise ChannelViolation("a frame on the result pipe failed its MAC (forged or corrupted)")
        if seq != self.seq + 1:
            raise ChannelViolation(f"frame sequence {seq} after {self.seq} (replayed or injected)")
        self.seq = seq
        self.buf = self.buf[total:]
        try:
            return parse(kind, body[HEADER.size:])
        except (struct.error, ValueError) as exc:
            raise ChannelViolation(f"malformed frame of kind {kind}: {exc}") from None


def encode_frame(key: bytes, seq: int, kind: Kind, payload: bytes) -> bytes:
    """A signed frame (what the native loop writes; used by the Python fallback and tests)."""
    body = HEADER.pack(RES_MAGIC, int(kind), 0, len(payload), seq) + payload
    return body + MAC.pack(siphash24(key, body))


def text_field(text: str) -> bytes:
    data = text.encode("utf-8", errors="replace")
    if len(data) > 4000:
        data = b"..." + data[-4000:]
    return struct.pack("<I", len(data)) + data


def trace_call_payload(f: TraceCallFrame) -> bytes:
    """A trace frame's payload as the native loop writes it (tests, and the layout's reference)."""
    head = struct.pack("<IIIIddd", f.call_id, f.impl, f.activities, f.markers, f.busy_us, f.early_us, f.late_us) + text_field("\n".join(f.names))
    tail = struct.pack("<III", f.timed_stream, int(f.flags), len(f.ops))
    return head + tail + b"".join(OP.pack(int(o.kind), o.stream, o.sync, o.start_us, o.end_us) for o in f.ops)


def call_payload(f: CallFrame) -> bytes:
    return struct.pack("<IIiIddd", f.call_id, f.impl, int(f.status), int(f.flags), f.event_ms, f.host_ms, f.wall_ms) + text_field(f.text)
