"""Checks that catch a submission gaming the harness rather than computing the answer.

Each check is a small pure function over tensors or names; the worker decides when to run them.
The cheats they answer are the ones other harnesses were beaten by (see docs/profiling.md):
aliasing or modifying inputs, lazy tensor subclasses, patched timers or reference functions,
calling the library op the task forbids, work escaping the timed stream, impossible speed.
"""

from __future__ import annotations

import types
from typing import Iterable

import torch
from torch.overrides import TorchFunctionMode

# Modules and classes whose callables a cheat could replace to fool timing or checking. Snapshotted
# after the harness is warmed up and before the submission is imported.
WATCHED = ("time", "torch", "torch.nn.functional", "torch.linalg", "torch.testing", "torch.cuda", "torch.cuda.nvtx", "torch.profiler")
WATCHED_CLASSES = ("torch.Tensor", "torch.cuda.Event", "torch.cuda.Stream", "torch.cuda.CUDAGraph", "torch.Generator")


def _resolve(dotted: str) -> object | None:
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
        return obj
    return None


# Replacing these is never benign, even with a wrapper around the original.
CRITICAL = ("time.", "torch.cuda.Event.", "torch.cuda.synchronize", "torch.cuda.current_stream", "torch.cuda.Stream.", "timing.", "anticheat.")


def snapshot(extra: Iterable[tuple[str, object]] = ()) -> dict[str, object]:
    """Every callable attribute of the watched namespaces (plus ``extra`` objects, e.g. the task's
    reference module), keyed ``namespace.attr``. Only callables: flags and caches change
    legitimately."""
    found: dict[str, object] = {}
    targets = [(name, _resolve(name)) for name in WATCHED + WATCHED_CLASSES] + list(extra)
    for name, obj in targets:
        if obj is None:
            continue
        for attr, value in list(vars(obj).items()):
            if callable(value) and not isinstance(value, types.ModuleType):
                found[f"{name}.{attr}"] = value
    return found


def patched(before: dict[str, object], extra: Iterable[tuple[str, object]] = ()) -> list[str]:
    """Names whose callable was replaced or deleted since ``before`` (additions are ignored).

    A wrapper whose ``__wrapped__`` is the original (torch._dynamo wraps ``torch.manual_seed`` when
    a submission uses ``torch.compile``) is tolerated, except on the timing-critical names."""
    now = snapshot(extra)
    out = []
    for k, v in before.items():
        new = now.get(k)
        if new is v:
            continue
        if new is not None and getattr(new, "__wrapped__", None) is v and not k.startswith(CRITICAL):
            continue
        out.append(k)
    return sorted(out)


def is_plain_tensor(value: object) -> bool:
    """Outputs must be real tensors, not subclasses that compute lazily when the checker looks."""
    return type(value) is torch.Tensor


def _span(t: torch.Tensor) -> tuple[int, int]:
    start = t.untyped_storage().data_ptr()
    return start, start + t.untyped_storage().nbytes()


def aliased(outputs: tuple, inputs: tuple) -> list[tuple[int, int]]:
    """(output index, input index) pairs whose storages overlap."""
    pairs = []
    for i, o in enumerate(outputs):
        if not isinstance(o, torch.Tensor) or o.untyped_storage().nbytes() == 0:
            continue
        o0, o1 = _span(o)
        for j, x in enumerate(inputs):
            if isinstance(x, torch.Tensor) and x.untyped_storage().nbytes():
                x0, x1 = _span(x)
                if o0 < x1 and x0 < o1:
                    pairs.append((i, j))
    return pairs


def bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal bit for bit (NaN payloads included), so a NaN input counts as unchanged."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype == torch.bool or a.element_size() == 0:
        return torch.equal(a, b)
    return torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))


def modified_inputs(originals: tuple, inputs: tuple) -> list[int]:
    """Indices of inputs that differ from the copies taken before the call."""
    return [i for i, (a, b) in enumerate(zip(originals, inputs)) if isinstance(b, torch.Tensor) and not bitwise_equal(a, b)]


def op_aliases(qualified: str) -> set[str]:
    """Function names a forbidden op shows up as: ``torch.nn.functional.layer_norm`` ->
    {layer_norm, _layer_norm, native_layer_norm, __layer_norm__} (``torch.ops.aten._softmax`` and
    ``x @ w`` included)."""
    base = qualified.rsplit(".", 1)[-1]
    return {base, "_" + base, "native_" + base, f"__{base}__"}


class CallRecorder(TorchFunctionMode):
    """Records the name of every torch function called while active (torch.*, F.*, Tensor
    methods and torch.ops). Cheap, unlike the profiler, and sees calls by their Python API name."""

    def __init__(self):
        super().__init__()
        self.names: set[str] = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.add(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))


def forbidden_calls(called: Iterable[str], forbidden: list[str]) -> list[str]:
    """Forbidden ops (as the task names them) among the recorded function names."""
    seen = set(called)
    return [f for f in forbidden if op_aliases(f) & seen]


def escaped_stream(event_ms: float, drain_ms: float, min_gap_ms: float = 0.05) -> bool:
    """True when the device-wide drain after the call returned (see
    :func:`d2k_profile.timing.probe_stream_escape`) far exceeds the event time on the current
    stream: the work ran on another stream, outside the events (a ~250 us kernel timed at ~5 us).
    An honest call drains at most its own event time plus the synchronize's overhead."""
    return drain_ms - event_ms > max(min_gap_ms, event_ms)
