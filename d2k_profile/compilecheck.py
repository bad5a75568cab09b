"""Compile-checking CUDA C++ submissions on a machine without a GPU (when ``nvcc`` is there).

A CUDA submission cannot run without a GPU, but whether its CUDA and C++ sources compile can be
known: its ``.cu`` files, and the ``cuda_sources`` / ``cpp_sources`` string literals it passes to
``torch.utils.cpp_extension.load_inline`` (found with :mod:`ast`, never by importing it), are
compiled with ``nvcc -c`` against torch's headers, with the preamble ``load_inline`` itself adds.
Each compiler runs in its own process group with the build timeout; results are cached in the
submission's build folder by source hash, so a re-run costs nothing.
"""

from __future__ import annotations

import ast
import hashlib
import re
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from .procs import run_group

CPP_PREAMBLE = "#include <torch/extension.h>\n"
CUDA_PREAMBLE = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"
NVCC_FLAGS = ["-std=c++17", "--expt-relaxed-constexpr", "-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__",
              "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__", "-DTORCH_EXTENSION_NAME=d2k_compile_check",
              "-DTORCH_API_INCLUDE_EXTENSION_H", "-arch=sm_90"]


@dataclass(frozen=True)
class CheckResult:
    ok: bool | None  # None: not checked (no nvcc, no sources)
    summary: str  # one line for a record's reason
    text: str = ""  # the compiler's output on failure


def _strings(node: ast.AST, consts: dict[str, str]) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name) and node.id in consts:
        return [consts[node.id]]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [s for e in node.elts for s in _strings(e, consts)]
    return []


def inline_sources(text: str) -> list[tuple[str, str]]:
    """(kind, source) for every string literal passed as ``cuda_sources``/``cpp_sources`` (kind
    "cu" or "cpp"), directly or through a module-level constant."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    consts = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    consts[t.id] = node.value.value
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg in ("cuda_sources", "cpp_sources"):
                    out += [("cu" if kw.arg == "cuda_sources" else "cpp", s) for s in _strings(kw.value, consts)]
    return out


def sources(folder: Path) -> list[tuple[str, str]]:
    """(file name, source with its preamble) to compile, in a stable order."""
    out = [(p.name, p.read_text(errors="replace")) for p in sorted(folder.glob("*.cu"))]
    for py in sorted(folder.glob("*.py")):
        for i, (kind, src) in enumerate(inline_sources(py.read_text(errors="replace"))):
            if kind == "cpp" and "{" not in src:  # declarations only (load_inline's usual cpp_sources)
                continue
            out.append((f"{py.stem}.inline{i}.{kind}", (CUDA_PREAMBLE if kind == "cu" else CPP_PREAMBLE) + src))
    return out


MISSING = re.compile(r"^(?P<file>[^\s:]+):\d+:\d+: fatal error: (?P<header>[^:]+): No such file or directory", re.M)


def toolkit_gap(output: str, source: str) -> str | None:
    """The header a *library* header (not the submission's own source) could not find: the
    machine's toolkit is incomplete, which says nothing about the submission."""
    m = MISSING.search(output)
    if m and Path(m["file"]).resolve() != Path(source).resolve():
        return m["header"].strip()
    return None


def _nvcc() -> str | None:
    from .native import _nvcc

    return _nvcc()


def check(folder: Path, work: Path, timeout_s: float) -> CheckResult:
    """Compile every CUDA/C++ source of the submission in ``folder`` (objects go to ``work``)."""
    nvcc = _nvcc()
    if nvcc is None:
        return CheckResult(None, "not compile-checked (no nvcc on this machine)")
    srcs = sources(Path(folder))
    if not srcs:
        return CheckResult(None, "not compile-checked (no CUDA sources found without importing it)")
    from torch.utils.cpp_extension import include_paths

    incs = [f"-I{p}" for p in include_paths()] + [f"-I{sysconfig.get_paths()['include']}"]
    work.mkdir(parents=True, exist_ok=True)
    for name, src in srcs:
        key = hashlib.sha256((nvcc + " ".join(NVCC_FLAGS) + src).encode()).hexdigest()[:16]
        done = work / f"{key}.ok"
        if done.exists():
            continue
        path = work / (name if name.endswith((".cu", ".cpp")) else name + ".cu")
        path.write_text(src)
        res = run_group([nvcc, "-c", "-x", "cu", *NVCC_FLAGS, *incs, str(path), "-o", str(work / f"{key}.o")], timeout_s=timeout_s, cwd=work)
        if res.timed_out:
            return CheckResult(False, f"nvcc timed out after {timeout_s:g} s on {name}", res.output[-3000:])
        if res.returncode != 0:
            if missing := toolkit_gap(res.output, str(path)):
                return CheckResult(None, f"not compile-checked: torch's headers include <{missing}>, which this CUDA toolkit lacks")
            return CheckResult(False, f"nvcc failed on {name}", f"nvcc failed on {name}:\n{res.output[-3000:]}")
        done.write_text("ok\n")
        (work / f"{key}.o").unlink(missing_ok=True)
    return CheckResult(True, f"compile-checked with nvcc ({len(srcs)} source(s) compiled)")


__all__ = ["CheckResult", "check", "inline_sources", "sources"]
