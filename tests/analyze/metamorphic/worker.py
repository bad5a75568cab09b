"""Run transformed submissions in a child process: Triton ones on the CPU interpreter, CUDA ones
up to their ``load_inline`` call (recorded, not compiled; the parent compiles what it records).

Why a child process: submissions are imported code with module-level state (Triton autotuner
caches, ``sys.path`` helpers); one fresh interpreter keeps the pytest process clean and sets
``TRITON_INTERPRET=1`` before triton is imported, whatever machine the tests run on.

Usage: ``python worker.py CASES.json RESULTS.json`` where CASES.json is a list of
``{"id", "folder", "task", "kind": "triton" | "cuda"}``.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from dataclasses import replace
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"

# Extra inputs that reach code paths the smoke workload does not: the softmax expert splits rows
# longer than 32768 elements over several programs (two other kernels).
EXTRA_PARAMS = {"softmax": {"M": 2, "N": 33000, "dtype": "float32"}}


class _Recorder:
    """Stands in for the extension module load_inline would build; records the functions used."""

    def __init__(self, log: list[str]) -> None:
        self._log = log

    def __getattr__(self, name: str):
        self._log.append(name)
        return lambda *args, **kwargs: None


def _constexpr_like_the_jit() -> None:
    """Make the interpreter find ``constexpr`` parameters the way the GPU JIT does.

    With ``from __future__ import annotations`` an annotation is the string as written. Triton
    3.6's JIT (``KernelParam.is_constexpr``) accepts any spelling containing "constexpr", so
    ``import triton.language as q7`` ... ``BLOCK: q7.constexpr`` compiles on a GPU; its
    interpreter only strips a literal ``tl.`` prefix and would treat such a parameter as a runtime
    value. Renaming the ``tl`` alias is part of the test, so the interpreter is aligned with the JIT.
    """
    from triton.runtime import interpreter as interp
    from triton.runtime.jit import _normalize_ty

    original = interp.GridExecutor.__init__
    if getattr(original, "_d2k_metamorphic", False):
        return

    def init(self, fn, arg_names, grid, pre_run_hooks=[]):  # noqa: B006 (triton's own signature)
        original(self, fn, arg_names, grid, pre_run_hooks)
        notes = {name: _normalize_ty(ty) for name, ty in fn.__annotations__.items()}
        self.constexprs = [name for name in arg_names if "constexpr" in notes.get(name, "")]

    init._d2k_metamorphic = True
    interp.GridExecutor.__init__ = init


def _capture_load_inline(module, run, inputs) -> dict:
    import torch.utils.cpp_extension as ext

    calls: list[dict] = []
    used: list[str] = []

    def fake(name, cpp_sources, cuda_sources=None, functions=None, **kwargs):
        def listed(x):
            return [] if x is None else ([x] if isinstance(x, str) else list(x))
        calls.append({"name": name, "cpp_sources": listed(cpp_sources), "cuda_sources": listed(cuda_sources),
                      "functions": listed(functions) if not isinstance(functions, dict) else list(functions),
                      "extra_include_paths": listed(kwargs.get("extra_include_paths")),
                      "extra_cuda_cflags": listed(kwargs.get("extra_cuda_cflags")),
                      "extra_cflags": listed(kwargs.get("extra_cflags"))})
        return _Recorder(used)

    original = ext.load_inline
    # ``from torch.utils.cpp_extension import load_inline`` at the top of a submission binds the
    # function before this patch: swap those module-level names too.
    bound = [k for k, v in vars(module).items() if v is original]
    ext.load_inline = fake
    for k in bound:
        setattr(module, k, fake)
    try:
        run(inputs)
    finally:
        ext.load_inline = original
        for k in bound:
            setattr(module, k, original)
    return {"load_inline": calls, "attributes": used}


def _one(case: dict, index: int) -> dict:
    from d2k_profile import interpreter
    from d2k_profile.checks import tolerance_for
    from d2k_profile.correctness import compare_all
    from d2k_profile.loader import entry_point, load_module
    from d2k_spec.inputs_check import load_reference
    from d2k_spec.task import load_task

    repo = Path(__file__).resolve().parents[3]
    task = load_task(repo / "tasks" / case["task"])
    ref = load_reference(task)
    module = load_module(Path(case["folder"]), f"d2k_metamorphic_{index}")
    run = entry_point(module, device="cpu")
    smoke = task.smoke
    inputs = ref.make_inputs(smoke, smoke.seeds[0], "cpu")
    if case["kind"] == "cuda":
        return {"ok": True, "capture": _capture_load_inline(module, run, inputs)}
    interpreter.apply()
    _constexpr_like_the_jit()
    checked = []
    workloads = [smoke]
    if case["task"] in EXTRA_PARAMS:
        workloads.append(replace(smoke, name="extra", params=EXTRA_PARAMS[case["task"]]))
    for w in workloads:
        inputs = ref.make_inputs(w, w.seeds[0], "cpu")
        tol = tolerance_for(task, w)
        check = compare_all(run(inputs), ref.reference(*inputs), tol)
        if not check.ok:
            return {"ok": False, "error": f"workload {w.name} {w.params}: {check.reason}"}
        checked.append(w.name)
    return {"ok": True, "checked": checked}


def main(cases_path: str, results_path: str) -> None:
    cases = json.loads(Path(cases_path).read_text())
    results = {}
    for i, case in enumerate(cases):
        try:
            results[case["id"]] = _one(case, i)
        except Exception:
            results[case["id"]] = {"ok": False, "error": traceback.format_exc(limit=8)}
    Path(results_path).write_text(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
