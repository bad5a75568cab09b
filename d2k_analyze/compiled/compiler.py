"""Running ``nvcc`` (and ``cuobjdump``) on translation units, in parallel, through the cache.

One nvcc call per unit: ``-cubin -Xptxas -v --keep`` leaves the PTX in the keep folder, prints
resource usage, and produces the cubin that ``cuobjdump -sass`` disassembles. Code that needs the
architecture-specific target (``wgmma``, ``setmaxnreg``) fails on ``sm_90``; it is retried once on
``sm_90a``.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from . import cache, processes
from .artifacts import KernelArtifact, kernel_artifacts
from .toolchain import Toolchain
from .units import TranslationUnit

ARCH = "sm_90"
ARCH_SPECIFIC = "sm_90a"
TIMEOUT_S = 300


@dataclass(frozen=True)
class CompileResult:
    """The outcome for one translation unit. ``status`` is ok / failed / skipped and ``message``
    says why in one line ("nvcc not found", "kernel.cu(12): error: ...")."""

    origin: str
    status: Literal["ok", "failed", "skipped"]
    message: str = ""
    arch: str = ARCH
    kernels: tuple[KernelArtifact, ...] = ()
    sass: bool = False
    cached: bool = False

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> CompileResult:
        def markers(raw: dict) -> dict:
            return {k: (v[0], tuple(v[1])) for k, v in raw.items()}

        kernels = tuple(
            KernelArtifact(**{**k, "ptx_markers": markers(k["ptx_markers"]), "sass_markers": markers(k["sass_markers"])})
            for k in data.get("kernels", ())
        )
        return cls(**{**data, "kernels": kernels})


def first_error(log: str) -> str:
    """The line a user needs: the first one that says "error", else the first non-empty one."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for line in lines:
        if "error" in line.lower():
            return line
    return lines[0] if lines else "nvcc failed with no message"


_MISSING_HEADER = re.compile(r'fatal error: ([^\s:]+): No such file or directory|cannot open source file "([^"]+)"')


def missing_header(log: str) -> str | None:
    """The header a failed compile could not find (``torch/extension.h``, ``cute/tensor.hpp``):
    a library that is not installed is the machine's limit, not an error in the source."""
    m = _MISSING_HEADER.search(log)
    return (m.group(1) or m.group(2)) if m else None


def _needs_arch_specific(log: str) -> bool:
    """ptxas rejects sm_90a-only instructions with "... not supported on .target 'sm_90'"."""
    return ARCH_SPECIFIC in log or f"target '{ARCH}'" in log


def _run_nvcc(tc: Toolchain, src: Path, include: str, arch: str, work: Path) -> subprocess.CompletedProcess:
    cmd = [
        tc.nvcc, f"-arch={arch}", "-cubin", "-Xptxas", "-v", "--keep", "--keep-dir", str(work),
        # the relaxations PyTorch's extension builds pass, which real kernels rely on
        "-std=c++17", "--expt-relaxed-constexpr", "--expt-extended-lambda",
        "-I", include, "-o", str(work / "kernel.cubin"), str(src),
    ]
    return processes.run(cmd, timeout=TIMEOUT_S, cwd=work)


def _compile_uncached(tu: TranslationUnit, tc: Toolchain) -> CompileResult:
    with tempfile.TemporaryDirectory(prefix="d2k-nvcc-") as tmp:
        work = Path(tmp)
        src = work / "kernel.cu"
        src.write_text(tu.text)
        include = str(Path(tu.origin).resolve().parent)
        arch = ARCH
        try:
            proc = _run_nvcc(tc, src, include, arch, work)
            if proc.returncode != 0 and _needs_arch_specific(proc.stderr + proc.stdout):
                arch = ARCH_SPECIFIC
                proc = _run_nvcc(tc, src, include, arch, work)
        except subprocess.TimeoutExpired:
            return CompileResult(tu.label, "failed", f"nvcc timed out after {TIMEOUT_S} s", arch)
        except processes.Stopped:
            return CompileResult(tu.label, "skipped", "stopped before compiling", arch)
        except OSError as exc:
            return CompileResult(tu.label, "failed", f"cannot run nvcc: {exc}", arch)
        log = proc.stderr + proc.stdout
        if proc.returncode < 0:  # killed (the analysis is stopping): not the source's fault, not cached
            return CompileResult(tu.label, "failed", f"nvcc killed by signal {-proc.returncode}", arch)
        if proc.returncode != 0:
            missing = missing_header(log)
            if missing:  # the unit is not standalone here: a library it builds on is not installed
                return CompileResult(tu.label, "skipped", f"needs {missing}, which is neither beside the source nor on this machine's include path", arch)
            return CompileResult(tu.label, "failed", first_error(log.replace(str(src), tu.origin)), arch)
        ptx = "\n".join(p.read_text(errors="replace") for p in sorted(work.glob("*.ptx")))
        sass = ""
        if tc.cuobjdump:
            try:
                dump = processes.run([tc.cuobjdump, "-sass", str(work / "kernel.cubin")], timeout=TIMEOUT_S)
                sass = dump.stdout if dump.returncode == 0 else ""
            except (OSError, subprocess.SubprocessError):
                sass = ""
        kernels = tuple(kernel_artifacts(ptx, sass, log))
        note = "" if sass else "PTX only (cuobjdump not found)" if not tc.cuobjdump else "PTX only (cuobjdump failed)"
        return CompileResult(tu.label, "ok", note, arch, kernels, sass=bool(sass))


def compile_unit(tu: TranslationUnit, tc: Toolchain) -> CompileResult:
    """Compile one unit, or say why not. Never raises."""
    if tc.nvcc is None:
        return CompileResult(tu.label, "skipped", "nvcc not found")
    key = cache.cache_key(tc.version, ARCH, "-cubin -Xptxas -v", str(bool(tc.cuobjdump)), tu.text, tu.context)
    hit = cache.load(key)
    if hit is not None:
        try:
            result = CompileResult.from_json(hit)
            return dataclasses.replace(result, origin=tu.label, cached=True)
        except (TypeError, KeyError, IndexError, ValueError):
            pass  # an entry from an incompatible version: recompile
    try:
        result = _compile_uncached(tu, tc)
    except Exception as exc:  # noqa: BLE001 - the layer must never take the analysis down
        return CompileResult(tu.label, "failed", f"internal error: {exc}")
    if result.status == "ok" or "error" in result.message:
        cache.store(key, result.to_json())  # a real compile error is as reproducible as a success
    return result


def compile_all(units: list[TranslationUnit], tc: Toolchain, jobs: int = 1) -> list[CompileResult]:
    """Compile units in parallel (``jobs`` threads; nvcc does the work in its own processes).

    An interrupt or SIGTERM (raised in this, the main, thread) kills every running compiler's
    process group, cancels what has not started, and waits for the threads to clean up their
    temporary folders before it propagates."""
    if not units:
        return []
    if jobs <= 1 or len(units) == 1:
        return [compile_unit(tu, tc) for tu in units]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        try:
            return list(pool.map(lambda tu: compile_unit(tu, tc), units))
        except BaseException:
            processes.stop_all()
            pool.shutdown(wait=True, cancel_futures=True)
            processes.resume()
            raise
