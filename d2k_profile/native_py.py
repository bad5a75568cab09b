"""The native call loop in Python, for CPU-only machines without a C++ compiler.

Same functions and wire format as ``native/d2k_native.cpp`` (setup, bind, serve, call_local),
without CUDA: nothing is timed on a CPU. It is weaker than the compiled loop (its state is
reachable from Python, and the MAC key is a Python object), which the record's notes say when it
is in use; the tests run the same protocol checks against both, so they cannot drift apart.
"""

from __future__ import annotations

import ctypes
import os
import struct

from . import frames
from .frames import CallFlag, CallStatus, Kind, OutFlag
from .siphash import siphash24 as _siphash

_state: dict = {"configured": False, "seq": 0, "call_id": 0, "impls": (), "sets": (), "ranges": [], "escrows": [], "expect": []}


def siphash(key: bytes, data: bytes) -> int:
    return _siphash(key, data)


def has_cuda() -> bool:
    return False


def setup(cmd_fd: int, res_fd: int, descriptors: tuple, cuda: bool, stream: int, device: int, flush_mode: int) -> dict:
    if _state["configured"]:
        raise RuntimeError("setup() may be called once")
    if cuda:
        raise RuntimeError("the Python call loop has no CUDA")
    names = ("tensor_type", "data_ptr", "nbytes", "dtype", "shape", "is_contiguous", "is_cuda", "contiguous", "classify", "format_exc")
    if len(descriptors) != len(names):
        raise ValueError("descriptors: expected 10 entries")
    _state.update(dict(zip(names, descriptors)), cmd_fd=cmd_fd, res_fd=res_fd, configured=True)
    if cmd_fd >= 0:
        key = b""
        while len(key) < 16:
            chunk = os.read(cmd_fd, 16 - len(key))
            if not chunk:
                raise OSError("could not read the MAC key from the command pipe")
            key += chunk
        _state["key"] = key
    return {"flush_bytes": 0, "flush_mode": 0}


def bind(impls: tuple, input_sets: tuple, escrows: tuple, expect: tuple) -> None:
    if not _state["configured"]:
        raise RuntimeError("setup() first")
    ranges = []
    for s in input_sets:
        rs = []
        for t in s:
            if isinstance(t, _state["tensor_type"]):
                lo = _state["data_ptr"](t)
                rs.append((lo, lo + _state["nbytes"].__get__(t)))
        ranges.append(rs)
    for e in escrows:
        if len(e) != len(expect):
            raise ValueError("every escrow set needs one buffer per expected output")
    _state.update(impls=impls, sets=input_sets, ranges=ranges, escrows=[list(e) for e in escrows], expect=list(expect))


def _take_outputs(out: object, escrow: bool, eset: int, iset: int) -> tuple[int, str]:
    items = list(out) if isinstance(out, (tuple, list)) else [out]
    expect = _state["expect"]
    if len(items) != len(expect):
        return OutFlag.WRONG_COUNT, f"returned {len(items)} outputs, expected {len(expect)}"
    flags, owned = 0, []
    tensor = _state["tensor_type"]
    for i, (t, (dtype, shape, nbytes)) in enumerate(zip(items, expect)):
        if not isinstance(t, tensor):
            return flags | OutFlag.NOT_TENSOR, f"output {i} is a {type(t).__name__}, not a tensor"
        if type(t) is not tensor:
            return flags | OutFlag.SUBCLASS, f"output {i} is a {type(t).__name__} (a torch.Tensor subclass)"
        if _state["dtype"].__get__(t) is not dtype:
            flags |= OutFlag.WRONG_DTYPE
        if tuple(_state["shape"].__get__(t)) != tuple(shape):
            flags |= OutFlag.WRONG_SHAPE
        if _state["is_cuda"].__get__(t):
            flags |= OutFlag.WRONG_DEVICE
        if flags:
            return flags, f"output {i} has the wrong dtype, shape or device"
        if not _state["is_contiguous"](t):
            flags |= OutFlag.NONCONTIGUOUS
            t = _state["contiguous"](t)
        ptr, n = _state["data_ptr"](t), _state["nbytes"].__get__(t)
        if n != nbytes:
            return flags, f"output {i} holds {n} bytes, expected {nbytes}"
        if iset < len(_state["ranges"]) and n and any(ptr < hi and lo < ptr + n for lo, hi in _state["ranges"][iset]):
            flags |= OutFlag.ALIASES_INPUT
        owned.append((ptr, t))
    if escrow and eset < len(_state["escrows"]):
        for (ptr, _t), (addr, _n), (_d, _s, nbytes) in zip(owned, _state["escrows"][eset], expect):
            if nbytes:
                ctypes.memmove(addr, ptr, nbytes)
        flags |= OutFlag.ESCROWED
    return flags, ""


def _do_call(impl: int, iset: int, eset: int, flags: int) -> frames.CallFrame:
    import time

    _state["call_id"] += 1
    cid = _state["call_id"]
    w0 = time.perf_counter()
    if iset >= len(_state["sets"]) or impl >= len(_state["impls"]):
        return frames.CallFrame(cid, impl, CallStatus.BAD_COMMAND, OutFlag(0), -1.0, 0.0, 0.0, "command names an unbound implementation or input set")
    t0 = time.perf_counter()
    try:
        out = _state["impls"][impl](_state["sets"][iset])
    except BaseException as exc:  # noqa: BLE001  (the submission's exception is the result)
        t1 = time.perf_counter()
        status = CallStatus.BUILD_FAILURE if _state["classify"](exc) == 1 else CallStatus.EXCEPTION
        return frames.CallFrame(cid, impl, status, OutFlag(0), -1.0, (t1 - t0) * 1e3, (t1 - w0) * 1e3, _state["format_exc"](exc))
    t1 = time.perf_counter()
    if not _state["expect"]:
        return frames.CallFrame(cid, impl, CallStatus.OK, OutFlag(0), -1.0, (t1 - t0) * 1e3, (t1 - w0) * 1e3, "")
    oflags, text = _take_outputs(out, bool(flags & CallFlag.ESCROW), eset, iset)
    bad = OutFlag.NOT_TENSOR | OutFlag.SUBCLASS | OutFlag.WRONG_COUNT | OutFlag.WRONG_DTYPE | OutFlag.WRONG_SHAPE | OutFlag.WRONG_DEVICE
    status = CallStatus.BAD_OUTPUT if (oflags & bad) or (flags & CallFlag.ESCROW and not oflags & OutFlag.ESCROWED) else CallStatus.OK
    return frames.CallFrame(cid, impl, status, OutFlag(oflags), -1.0, (t1 - t0) * 1e3, (time.perf_counter() - w0) * 1e3, text)


def _send(kind: Kind, payload: bytes) -> None:
    _state["seq"] += 1
    data = frames.encode_frame(_state["key"], _state["seq"], kind, payload)
    while data:
        data = data[os.write(_state["res_fd"], data):]


def _read_command() -> bytes | None:
    data = b""
    while len(data) < frames.COMMAND.size:
        chunk = os.read(_state["cmd_fd"], frames.COMMAND.size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def serve() -> bool:
    if not _state["configured"] or _state["cmd_fd"] < 0:
        raise RuntimeError("setup() with a command pipe first")
    while True:
        raw = _read_command()
        if raw is None:
            return False
        magic, op, impl, iset, eset, flags, _hold, _arg = frames.COMMAND.unpack(raw)
        if magic != frames.CMD_MAGIC:
            _send(Kind.ERROR, frames.text_field("bad command magic"))
        elif op == frames.Op.CALL:
            _send(Kind.CALL, frames.call_payload(_do_call(impl, iset, eset, flags)))
        elif op == frames.Op.STOP:
            _send(Kind.STOPPED, struct.pack("<I", _state["call_id"]))
            return True
        else:
            _send(Kind.ERROR, frames.text_field(f"unsupported command {op}"))


def call_local(impl: int, iset: int, flags: int, hold: int, eset: int = 0) -> tuple:
    f = _do_call(impl, iset, eset, flags)
    return (int(f.status), int(f.flags), f.event_ms, f.host_ms, f.text)


def calibrate_local(cycles: int, n: int) -> list[float]:
    return []
