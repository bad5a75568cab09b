"""The typed messages between d2k-profile's processes: one schema, used by both sides.

Three channels carry JSON lines (the fourth, the native call loop's, is binary: :mod:`.frames`):

* parent -> judge: one :class:`JudgeJob` on the judge's stdin;
* judge -> parent: :class:`Hello`, :class:`SandboxUp`, :class:`Built`, :class:`Started`,
  :class:`Result` (an :class:`~d2k_profile.results.Outcome`), :class:`Failed`, :class:`Done`,
  each wrapped with the job's token and a sequence number;
* judge <-> sandbox (the control channel): the requests :class:`Setup`, :class:`Load`, :class:`Import`, :class:`Bind`,
  :class:`Serve`, :class:`RecordOps`, :class:`Capture`, :class:`Mark`, :class:`CheckPatches`,
  :class:`Shutdown`, and the replies :class:`Confined`, :class:`Loaded`, :class:`Imported`, :class:`ImportFailed`,
  :class:`Bound`, :class:`Serving`, :class:`Recorded`, :class:`Captured`, :class:`Marked`,
  :class:`Patches`.

Decoding is strict: a message must be one of the types the receiver expects at that point, with
exactly the fields of its dataclass and values of the declared types (statuses are
:class:`~d2k_profile.results.Status`). Anything else raises :class:`ProtocolError`, which the
judge turns into ``cheat_suspected`` when it comes from the sandbox: nothing is silently dropped.
"""

from __future__ import annotations

import dataclasses
import json
import types
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Union, get_args, get_origin, get_type_hints

from .results import Outcome, Timing

# Bound now, before any submission is imported into the process that uses this module, so that a
# patched json module cannot change what the sandbox says or hears.
_dumps, _loads = json.dumps, json.loads


class ProtocolError(Exception):
    """A message that breaks the schema (unknown type or key, wrong type, missing field)."""


# --- parent <-> judge ----------------------------------------------------------------------------

@dataclass
class SandboxPolicy:
    """What the sandbox process enforces on itself (each layer where the kernel allows)."""

    enabled: bool = True
    write_dirs: list[str] = field(default_factory=list)  # beside the build folder
    layers: list[str] = field(default_factory=lambda: ["landlock", "seccomp", "capabilities"])


@dataclass
class JudgeJob:
    task_path: str
    path: str
    name: str
    role: str  # submission | expert | reference
    language: str
    device: str  # cuda | cpu
    mode: str  # eager | graph | cpu
    workloads: list[str]
    expert_path: str | None
    native_path: str | None  # the built native module (None: the Python loop, CPU only)
    build_dir: str
    log: str
    timing: dict[str, Any]
    build_timeout_s: float
    workload_timeout_s: float
    max_deaths: int = 2
    build_only: bool = False
    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)
    # the expert job's build folder: its sandbox (which ran only trusted code) built the expert's
    # torch extensions there, and a submission's sandbox loads them from it before its import
    expert_build_dir: str | None = None
    fd: int = -1
    token: str = ""


@dataclass
class Hello:
    env: dict[str, Any]


@dataclass
class SandboxUp:
    """A sandbox process started (the parent kills its process group too when it kills the job)."""

    pid: int
    pgid: int


@dataclass
class Built:
    build_s: float
    sandbox: dict[str, Any]  # what the sandbox enforced (Confined.report)


@dataclass
class Started:
    workload: str


@dataclass
class Result:
    workload: str
    outcome: Outcome


@dataclass
class Failed:
    """Every remaining workload ends with this outcome (a build or import failure)."""

    outcome: Outcome


@dataclass
class Done:
    pass


# --- judge <-> sandbox ---------------------------------------------------------------------------

@dataclass
class Setup:
    """First message to a sandbox: what to confine itself to (it does so before importing torch)
    and what it will load once told to (:class:`Load`)."""

    role: str
    path: str
    reference_path: str
    expert_path: str | None
    device: str
    native_path: str | None
    flush_mode: int  # 1 write, 2 write then read (default), 3 read
    build_dir: str
    policy: SandboxPolicy
    trusted_extensions: str | None = None  # TORCH_EXTENSIONS_DIR while the trusted code loads and runs


@dataclass
class Load:
    """Initialise the device and the native loop, load the reference and the expert (trusted code):
    until :class:`Import`, the sandbox is a clean process in which they can be timed."""


@dataclass
class Import:
    """Import the submission."""


@dataclass
class Imported:
    impls: list[str]  # every bound implementation, in index order (the submission last)


@dataclass
class Confined:
    report: dict[str, Any]


@dataclass
class Loaded:
    impls: list[str]  # the trusted implementations bound so far (reference, expert), in index order
    expert_error: str


@dataclass
class ImportFailed:
    kind: str  # "compile" (syntax or compiler failure) | "import" (any other exception at import)
    reason: str


@dataclass
class BufferSpec:
    """One shared buffer: a CUDA IPC handle (hex) or a shared-memory file, and how to view it."""

    handle: str
    nbytes: int
    dtype: str  # a torch dtype name, or "value" for a non-tensor input passed by value
    shape: list[int]
    value: Any = None


@dataclass
class Bind:
    input_sets: list[list[BufferSpec]]
    escrow_sets: list[list[BufferSpec]]


@dataclass
class Bound:
    pass


@dataclass
class Serve:
    pass


@dataclass
class Serving:
    pass


@dataclass
class RecordOps:
    input_set: int


@dataclass
class Recorded:
    ops: list[str]
    error: str


@dataclass
class Capture:
    input_set: int


@dataclass
class Captured:
    error: str


@dataclass
class Mark:
    prefix: str
    input_set: int


@dataclass
class Marked:
    ranges: dict[str, str]


@dataclass
class CheckPatches:
    pass


@dataclass
class Patches:
    names: list[str]


@dataclass
class Shutdown:
    pass


MESSAGES: dict[str, type] = {cls.__name__: cls for cls in (
    Hello, SandboxUp, Built, Started, Result, Failed, Done,
    Setup, Load, Import, Imported, Confined, Loaded, ImportFailed, Bind, Bound, Serve, Serving, RecordOps, Recorded,
    Capture, Captured, Mark, Marked, CheckPatches, Patches, Shutdown,
)}
TO_SANDBOX = (Setup, Load, Import, Bind, Serve, RecordOps, Capture, Mark, CheckPatches, Shutdown)
FROM_SANDBOX = (Confined, Loaded, Imported, ImportFailed, Bound, Serving, Recorded, Captured, Marked, Patches)
TO_PARENT = (Hello, SandboxUp, Built, Started, Result, Failed, Done)


# --- codec ---------------------------------------------------------------------------------------

def to_plain(value: Any) -> Any:
    """A message (or any value in one) as JSON-ready data."""
    if isinstance(value, Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    return value


def encode(msg: Any, **envelope: Any) -> bytes:
    """One JSON line: ``{"type": <class name>, **envelope, **fields}``."""
    name = type(msg).__name__
    if MESSAGES.get(name) is not type(msg):
        raise ProtocolError(f"not a protocol message: {name}")
    return (_dumps({"type": name, **envelope, **to_plain(msg)}, allow_nan=True) + "\n").encode()


def decode(line: bytes | str, allowed: tuple[type, ...], envelope: tuple[str, ...] = ()) -> tuple[Any, dict[str, Any]]:
    """Parse one line into one of the ``allowed`` message types; returns (message, envelope)."""
    try:
        data = _loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"not JSON: {str(line)[:120]!r} ({exc})") from None
    if not isinstance(data, dict):
        raise ProtocolError(f"not a JSON object: {str(line)[:120]!r}")
    name = data.pop("type", None)
    cls = MESSAGES.get(name) if isinstance(name, str) else None
    if cls is None or cls not in allowed:
        raise ProtocolError(f"unexpected message type {name!r} (expected {', '.join(c.__name__ for c in allowed)})")
    env = {k: data.pop(k, None) for k in envelope}
    return build(cls, data, name), env


def build(cls: type, data: Any, where: str) -> Any:
    """A dataclass from JSON data, rejecting unknown keys, missing keys and wrong types."""
    if not isinstance(data, dict):
        raise ProtocolError(f"{where}: expected an object, got {type(data).__name__}")
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    if unknown := sorted(set(data) - set(fields)):
        raise ProtocolError(f"{where}: unknown key(s) {', '.join(unknown)}")
    kwargs = {}
    for name, f in fields.items():
        if name in data:
            kwargs[name] = convert(hints[name], data[name], f"{where}.{name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ProtocolError(f"{where}: missing key {name}")
    return cls(**kwargs)


def convert(tp: Any, value: Any, where: str) -> Any:
    origin = get_origin(tp)
    if tp is Any:
        return value
    if dataclasses.is_dataclass(tp):
        return build(tp, value, where)
    if isinstance(tp, type) and issubclass(tp, Enum):
        try:
            return tp(value)
        except ValueError:
            raise ProtocolError(f"{where}: {value!r} is not a {tp.__name__}") from None
    if origin in (Union, types.UnionType):
        if value is None and type(None) in get_args(tp):
            return None
        errors = []
        for arg in get_args(tp):
            if arg is type(None):
                continue
            try:
                return convert(arg, value, where)
            except ProtocolError as exc:
                errors.append(str(exc))
        raise ProtocolError(errors[0] if errors else f"{where}: bad value {value!r}")
    if origin in (list, tuple):
        if not isinstance(value, list):
            raise ProtocolError(f"{where}: expected a list, got {type(value).__name__}")
        (item,) = get_args(tp)[:1] or (Any,)
        return [convert(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ProtocolError(f"{where}: expected an object, got {type(value).__name__}")
        _, vt = get_args(tp)
        return {k: convert(vt, v, f"{where}.{k}") for k, v in value.items()}
    if tp is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if tp is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if tp in (str, bool) and isinstance(value, tp):
        return value
    raise ProtocolError(f"{where}: expected {getattr(tp, '__name__', tp)}, got {type(value).__name__} {str(value)[:60]!r}")


__all__ = ["MESSAGES", "Outcome", "ProtocolError", "Timing", "build", "decode", "encode", "to_plain"]
