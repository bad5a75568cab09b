"""Building and loading the native call loop (``native/d2k_native.cpp``), once per machine.

The module is compiled by the parent process before any judge or sandbox starts: with ``nvcc``
(and CUDA, CUPTI) when the run has a GPU, with the C++ compiler otherwise. The result is cached
under ``$D2K_NATIVE_CACHE`` (default ``~/.cache/d2k-bench/native``) in a folder named by a hash of
the source, the compiler command and the Python version, so the build happens once per machine and
again only when one of those changes; concurrent runs build under a file lock. The compiler runs in
its own process group, killed as a whole on timeout. Without a C++ compiler a CPU-only run falls
back to :mod:`.native_py` (the same loop in Python; nothing is timed on a CPU anyway).
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import os
import shutil
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from .procs import run_group

SOURCE = Path(__file__).resolve().parent / "native" / "d2k_native.cpp"
MODULE = "_d2k_native"
BUILD_TIMEOUT_S = 600.0


class NativeBuildError(Exception):
    """The native module could not be compiled (the message holds the compiler's output)."""


@dataclass(frozen=True)
class NativeModule:
    path: Path | None  # None: the Python fallback
    cuda: bool
    note: str = ""


def cache_root() -> Path:
    env = os.environ.get("D2K_NATIVE_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "d2k-bench" / "native"


def _nvcc() -> str | None:
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    cands = [str(Path(home) / "bin" / "nvcc")] if home else []
    cands += [shutil.which("nvcc") or "", "/usr/local/cuda/bin/nvcc"]
    return next((c for c in cands if c and Path(c).is_file()), None)


def _cupti_includes(nvcc: str) -> list[str]:
    """CUPTI headers: in the toolkit's include/ since CUDA 12.x, else extras/CUPTI/include."""
    root = Path(nvcc).resolve().parent.parent
    out = [root / "extras" / "CUPTI" / "include"]
    try:
        import nvidia.cuda_cupti as cupti_pkg  # type: ignore  (pip's CUPTI, beside torch)

        out.append(Path(list(cupti_pkg.__path__)[0]) / "include")
    except ImportError:
        pass
    return [f"-I{p}" for p in out if p.is_dir()]


def command(cuda: bool, out: Path) -> list[str]:
    """The compiler command for this machine."""
    inc = sysconfig.get_paths()["include"]
    if cuda:
        nvcc = _nvcc()
        if nvcc is None:
            raise NativeBuildError("nvcc not found (set CUDA_HOME or put nvcc on PATH)")
        lib = Path(nvcc).resolve().parent.parent / "lib64"
        return [nvcc, "-O2", "-std=c++17", "-shared", "-Xcompiler", "-fPIC", "-x", "cu", "-DD2K_CUDA", f"-I{inc}",
                *_cupti_includes(nvcc), "-gencode", "arch=compute_75,code=compute_75", "-gencode", "arch=compute_90,code=sm_90",
                str(SOURCE), "-o", str(out), "-cudart", "shared", "-Xlinker", f"-rpath={lib}", "-ldl", "-lpthread"]
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        raise NativeBuildError("no C++ compiler found (c++, g++ or clang++)")
    return [cxx, "-O2", "-std=c++17", "-shared", "-fPIC", "-x", "c++", f"-I{inc}", str(SOURCE), "-o", str(out), "-lpthread", "-ldl"]


def build(cuda: bool, timeout_s: float = BUILD_TIMEOUT_S) -> Path:
    """The built module's path, compiling it first if this machine has no cached copy."""
    probe = command(cuda, Path("OUT"))
    key = hashlib.sha256()
    key.update(SOURCE.read_bytes())
    key.update(" ".join(probe).encode())
    key.update(sys.version.encode())
    folder = cache_root() / f"{key.hexdigest()[:16]}-{'cuda' if cuda else 'cpu'}"
    target = folder / f"{MODULE}{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}"
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_file():  # built by a concurrent run while we waited
            return target
        tmp = folder / f"build-{os.getpid()}.so"
        proc = run_group(command(cuda, tmp), timeout_s=timeout_s, cwd=folder)
        if proc.timed_out or proc.returncode != 0 or not tmp.is_file():
            tmp.unlink(missing_ok=True)
            why = f"timed out after {timeout_s:g} s" if proc.timed_out else f"exit {proc.returncode}"
            raise NativeBuildError(f"building {SOURCE.name} failed ({why}):\n{proc.output[-3000:]}")
        os.replace(tmp, target)
    return target


def prepare(cuda: bool) -> NativeModule:
    """The module a run uses: built (cached) for the machine, or the Python loop on a CPU."""
    try:
        return NativeModule(build(cuda), cuda)
    except NativeBuildError as exc:
        if cuda:
            raise
        return NativeModule(None, False, f"native call loop unavailable ({str(exc).splitlines()[0]}): using the Python loop")


def cupti_library() -> str | None:
    """The CUPTI library to trace with: the one beside torch (pip's nvidia-cuda-cupti, the same
    CUDA release as torch), else the toolkit's; None lets the dynamic loader choose."""
    cands = []
    try:
        import nvidia.cuda_cupti as pkg  # type: ignore

        cands += sorted((Path(list(pkg.__path__)[0]) / "lib").glob("libcupti.so*"))
    except ImportError:
        pass
    nvcc = _nvcc()
    if nvcc:
        root = Path(nvcc).resolve().parent.parent
        cands += sorted((root / "extras" / "CUPTI" / "lib64").glob("libcupti.so*")) + sorted((root / "lib64").glob("libcupti.so*"))
    return str(cands[0]) if cands else None


def load(path: str | Path | None) -> ModuleType:
    """Import the built module (``torch`` must already be imported: it loads the CUDA runtime the
    module links against), or the Python fallback for ``None``."""
    if path is None:
        from . import native_py

        return native_py
    import torch  # noqa: F401  (first: the module must bind to torch's CUDA runtime, not load another)

    spec = importlib.util.spec_from_file_location(MODULE, str(path))
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
