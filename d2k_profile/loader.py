"""Importing a submission (or a reference) from its folder and turning it into a callable.

Each folder is imported under its own module name, with its folder first on ``sys.path`` for local
helpers. Helper modules imported from the folder are then removed from ``sys.modules`` (they stay
bound inside the module), so an expert and a submission that both ship a ``kernel.py`` each get
their own.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable

Call = Callable[[tuple], object]


def load_module(path: Path, module_name: str) -> ModuleType:
    """Execute ``path`` (a submission folder's ``submission.py``, or a .py file) as a module."""
    path = Path(path)
    file = path / "submission.py" if path.is_dir() else path
    folder = str(file.parent)
    before = set(sys.modules)
    sys.path.insert(0, folder)
    try:
        spec = importlib.util.spec_from_file_location(module_name, file)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {file}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    finally:
        if sys.path and sys.path[0] == folder:
            sys.path.pop(0)
        for name in set(sys.modules) - before - {module_name}:
            mod_file = getattr(sys.modules[name], "__file__", None) or ""
            if mod_file.startswith(folder + "/"):
                del sys.modules[name]
    return module


def entry_point(module: ModuleType, init_inputs: tuple = (), device: str = "cuda") -> Call:
    """``run(*inputs)``, or a KernelBench-style ``ModelNew(*init_inputs)`` called with the inputs."""
    run = getattr(module, "run", None)
    if callable(run):
        return lambda inputs: run(*inputs)
    model_cls = getattr(module, "ModelNew", None)
    if model_cls is not None:
        model = model_cls(*init_inputs)
        if hasattr(model, "to"):
            model = model.to(device)
        if hasattr(model, "eval"):
            model.eval()
        return lambda inputs: model(*inputs)
    raise AttributeError(f"{module.__file__} defines neither run(*inputs) nor ModelNew")


def reference_entry(module: ModuleType) -> Call:
    """The task's ``reference(*inputs)`` as a callable on an input tuple."""
    ref = module.reference
    return lambda inputs: ref(*inputs)
