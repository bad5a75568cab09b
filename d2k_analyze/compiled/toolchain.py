"""Finding the CUDA tools. Absent tools are a normal state, not an error."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

from . import processes


@dataclass(frozen=True)
class Toolchain:
    """Paths of ``nvcc`` and ``cuobjdump`` (None where missing) and nvcc's version line,
    which is part of every cache key: a new compiler may emit different instructions."""

    nvcc: str | None
    cuobjdump: str | None
    version: str = ""

    @property
    def missing_reason(self) -> str | None:
        return None if self.nvcc else "nvcc not found"


def _nvcc_version(nvcc: str) -> str:
    try:
        out = processes.run([nvcc, "--version"], timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    return lines[-1] if lines else "unknown"


def find_toolchain() -> Toolchain:
    """Look the tools up on PATH (``cuobjdump`` also beside ``nvcc``, where CUDA installs it)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return Toolchain(None, None)
    cuobjdump = shutil.which("cuobjdump")
    if cuobjdump is None:
        from pathlib import Path

        beside = Path(nvcc).resolve().parent / "cuobjdump"
        cuobjdump = str(beside) if beside.is_file() else None
    return Toolchain(nvcc, cuobjdump, _nvcc_version(nvcc))
