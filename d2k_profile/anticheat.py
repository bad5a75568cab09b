"""Checks that live in the sandbox (the untrusted process) and pure helpers the judge uses.

The sandbox's checks are *confessions*: a submission that patches torch, the reference module or
the sandbox's own modules is reported by name, and a forbidden library op it calls through Python
or from C++ (ATen, through the dispatcher) is recorded. A determined submission can silence them,
since they run in its own process; nothing a verdict needs rests on them alone (the judge's
kernel-name check, clean reference timing and CUPTI cross-checks do that). They exist because
they catch the naive cheat cheaply and say exactly what it did.
"""

from __future__ import annotations

import importlib
import subprocess
import types
from typing import Iterable

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# Modules and classes whose callables a cheat could replace. Snapshotted before the submission is
# imported; a class attribute added later that shadows an inherited callable counts as replaced.
WATCHED = ("time", "json", "os", "torch", "torch.nn.functional", "torch.linalg", "torch.testing", "torch.cuda", "torch.cuda.nvtx", "torch.profiler")
WATCHED_CLASSES = ("torch.Tensor", "torch._C.TensorBase", "torch.cuda.Event", "torch.cuda.Stream", "torch.cuda.CUDAGraph", "torch.Generator")
# Replacing these is never benign, even with a wrapper around the original.
CRITICAL = ("time.", "json.", "torch.cuda.Event.", "torch.cuda.synchronize", "torch.cuda.current_stream", "torch.cuda.Stream.")


def _resolve(dotted: str) -> object | None:
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


def _inherited_callable(cls: type, attr: str) -> bool:
    return any(attr in vars(base) and callable(vars(base)[attr]) for base in cls.__mro__[1:])


def snapshot(extra: Iterable[tuple[str, object]] = (), strict: Iterable[tuple[str, object]] = ()) -> dict[str, object]:
    """Every callable attribute of the watched namespaces and of ``extra``, and *every* attribute of
    ``strict`` (e.g. the reference module, whose globals never change), keyed ``namespace.attr``.
    Class entries also remember which names were not set on the class itself (``#absent``)."""
    found: dict[str, object] = {}
    targets = [(name, _resolve(name)) for name in WATCHED + WATCHED_CLASSES] + list(extra)
    for name, obj in targets:
        if obj is None:
            continue
        for attr, value in list(vars(obj).items()):
            if callable(value) and not isinstance(value, types.ModuleType):
                found[f"{name}.{attr}"] = value
        if isinstance(obj, type):
            found[f"{name}#absent"] = frozenset(a for a in dir(obj) if a not in vars(obj))
    for name, obj in strict:
        for attr, value in list(vars(obj).items()):
            if not attr.startswith("__"):
                found[f"{name}.{attr}"] = value
    return found


def patched(before: dict[str, object], extra: Iterable[tuple[str, object]] = (), strict: Iterable[tuple[str, object]] = ()) -> list[str]:
    """Names replaced or deleted since ``before``, and class attributes added since that shadow an
    inherited callable (``torch.Tensor.fill_`` over ``TensorBase.fill_``). A wrapper whose
    ``__wrapped__`` is the original (torch._dynamo wraps ``torch.manual_seed`` for ``torch.compile``)
    is tolerated, except on the timing-critical names."""
    now = snapshot(extra, strict)
    out = []
    for k, v in before.items():
        if k.endswith("#absent"):
            cls = _resolve(k[:-len("#absent")])
            if isinstance(cls, type):
                out += [f"{k[:-len('#absent')]}.{a}" for a in v if a in vars(cls) and _inherited_callable(cls, a)]
            continue
        new = now.get(k)
        if new is v:
            continue
        if new is not None and getattr(new, "__wrapped__", None) is v and not k.startswith(CRITICAL):
            continue
        out.append(k)
    return sorted(set(out))


def op_aliases(qualified: str) -> set[str]:
    """Function names a forbidden op shows up as: ``torch.nn.functional.layer_norm`` ->
    {layer_norm, _layer_norm, native_layer_norm, __layer_norm__} (``torch.ops.aten._softmax``,
    ``aten::_softmax`` and ``x @ w`` included)."""
    base = qualified.rsplit(".", 1)[-1]
    return {base, "_" + base, "native_" + base, f"__{base}__"}


def forbidden_calls(called: Iterable[str], forbidden: list[str]) -> list[str]:
    """Forbidden ops (as the task names them) among the recorded function or ATen op names."""
    seen = {n.split("::")[-1].split(".")[0] for n in called}
    return [f for f in forbidden if op_aliases(f) & seen]


class _AtenNames(TorchDispatchMode):
    """Sees every ATen op that reaches the dispatcher, also when C++ code (an extension calling
    ``at::_softmax``) makes the call."""

    def __init__(self, names: set[str]):
        super().__init__()
        self.names = names

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        schema = getattr(func, "_schema", None)
        self.names.add(schema.name if schema is not None else str(func))
        return func(*args, **(kwargs or {}))


class OpRecorder:
    """Records the ATen ops called while active, at the dispatcher: Python API calls and C++ calls
    alike. (No ``TorchFunctionMode``: a submission that checks for one would see it.)"""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self._mode = _AtenNames(self.names)

    def __enter__(self) -> "OpRecorder":
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._mode.__exit__(*exc)


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


def classify_exception(exc: BaseException) -> int:
    """1 for a compiler failure, also when it surfaces at the first call (Triton compiles on first
    launch, submissions often call ``load_inline`` lazily: "import worked" is not "built"); else 0."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if "CompilationError" in type(exc).__name__ or isinstance(exc, subprocess.CalledProcessError):
            return 1
        if isinstance(exc, RuntimeError) and str(exc).startswith("Error building extension"):
            return 1
        exc = exc.__cause__ or exc.__context__
    return 0


def import_failure_kind(exc: BaseException) -> str:
    """``compile`` for a syntax error or a compiler failure while importing, ``import`` for any
    other exception the module raised at import time."""
    return "compile" if isinstance(exc, SyntaxError) or classify_exception(exc) else "import"
