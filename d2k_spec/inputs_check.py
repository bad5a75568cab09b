"""Checks that need a task's ``reference.py``: can every workload's inputs be built, do they match
the interface, and is the smoke workload really cheap on a CPU?

This imports torch and the task's own ``reference.py`` (trusted benchmark code, never a
submission). Timed workloads are built on torch's ``meta`` device, which checks shapes and dtypes
without allocating; only the smoke workload is built and run for real, on the CPU.
"""

from __future__ import annotations

import importlib.util
import time
import traceback
from pathlib import Path
from types import ModuleType

from .schema import Problem
from .task import VALUE_DTYPE, Task, TensorSpec, Workload

SMOKE_BUDGET_S = 3.0  # the smoke workload's reference must run this fast on a CPU
REFERENCE_API = ("reference", "make_inputs", "flops", "bytes_moved")


def load_reference(task: Task) -> ModuleType:
    """Import ``tasks/<id>/reference.py`` under a private module name."""
    spec = importlib.util.spec_from_file_location(f"d2k_reference_{task.id}", task.reference_path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {task.reference_path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _where(exc: BaseException, path: Path) -> str:
    """'file:line' of the deepest frame inside ``path`` (where the task author has to look)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
    return f"{path}:{frames[-1].lineno}" if frames else str(path)


def expected_shape(spec: TensorSpec, workload: Workload) -> tuple[int, ...]:
    return tuple(int(workload.params[d]) if isinstance(d, str) else d for d in spec.shape)


def expected_dtype(spec: TensorSpec, workload: Workload) -> str:
    return str(workload.params.get(spec.dtype, spec.dtype))


def _check_tensors(kind: str, specs: list[TensorSpec], values: tuple, workload: Workload, file: str, key: str) -> list[Problem]:
    import torch

    problems = []
    if len(values) != len(specs):
        return [Problem(file, key, f"{len(values)} {kind}s built, the interface declares {len(specs)}")]
    for spec, value in zip(specs, values):
        if spec.dtype == VALUE_DTYPE:
            if not isinstance(value, int) or isinstance(value, bool) or value != workload.params.get(spec.name):
                problems.append(Problem(file, key, f"{kind} '{spec.name}' is {value!r}, the interface passes the int "
                                                   f"workload parameter {spec.name} = {workload.params.get(spec.name)!r}"))
            continue
        if not isinstance(value, torch.Tensor):
            problems.append(Problem(file, key, f"{kind} '{spec.name}' is a {type(value).__name__}, not a tensor"))
            continue
        shape, dtype = expected_shape(spec, workload), expected_dtype(spec, workload)
        if tuple(value.shape) != shape:
            problems.append(Problem(file, key, f"{kind} '{spec.name}' has shape {tuple(value.shape)}, the interface says {shape}"))
        if str(value.dtype).removeprefix("torch.") != dtype:
            problems.append(Problem(file, key, f"{kind} '{spec.name}' has dtype {value.dtype}, the interface says {dtype}"))
    return problems


def check_inputs(task: Task) -> list[Problem]:
    """Build every workload (meta device) and run the smoke workload (CPU); report what fails."""
    file = str(task.path / "task.toml")
    try:
        ref = load_reference(task)
    except Exception as exc:  # the reference's own bug: report it where it is
        return [Problem(_where(exc, task.reference_path), "", f"reference.py does not import: {exc!r}")]
    missing = [name for name in REFERENCE_API if not callable(getattr(ref, name, None))]
    if missing:
        return [Problem(str(task.reference_path), "", f"missing function(s): {', '.join(missing)}")]

    problems: list[Problem] = []
    for i, w in enumerate(task.workload):
        key = f"workload[{i}] ({w.name})"
        try:
            inputs = tuple(ref.make_inputs(w, w.seeds[0], "meta"))
            problems += _check_tensors("input", task.interface.inputs, inputs, w, file, key)
            # flops() may be 0 for pure data movement (a transpose computes nothing); bytes_moved never is
            for fn in ("flops", "bytes_moved"):
                value = getattr(ref, fn)(dict(w.params))
                zero_ok = fn == "flops"
                if not isinstance(value, (int, float)) or value < 0 or (value == 0 and not zero_ok):
                    what = "a non-negative number" if zero_ok else "a positive number"
                    problems.append(Problem(file, key, f"{fn}() returned {value!r}, expected {what}"))
        except Exception as exc:
            problems.append(Problem(file, key, f"inputs cannot be built: {exc!r} (at {_where(exc, task.reference_path)})"))

    smoke = next((w for w in task.workload if w.smoke), None)
    if smoke is not None:
        key = f"workload ({smoke.name})"
        try:
            start = time.perf_counter()
            for seed in smoke.seeds:
                inputs = tuple(ref.make_inputs(smoke, seed, "cpu"))
                out = ref.reference(*inputs)
            elapsed = time.perf_counter() - start
            outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
            problems += _check_tensors("output", task.interface.outputs, outs, smoke, file, key)
            if elapsed > SMOKE_BUDGET_S:
                problems.append(Problem(file, key, f"smoke workload took {elapsed:.1f} s on the CPU (budget {SMOKE_BUDGET_S:.0f} s)"))
        except Exception as exc:
            problems.append(Problem(file, key, f"smoke workload fails on the CPU: {exc!r} (at {_where(exc, task.reference_path)})"))
    return problems
