"""Reading the files a user points the analyzer at.

The analyzer must survive whatever a benchmark run leaves on disk: binary blobs, Latin-1 files,
multi-megabyte generated headers, unreadable files, symlink loops. The walk always goes on; nothing
here imports or executes what it reads. A source file that cannot be analysed (unreadable, binary,
over the size limit) comes back as a :class:`SourceFile` with ``text`` None and ``error`` saying
why: one record per file, which makes the analysis of its submission incomplete (exit status 1).
What can still be analysed (e.g. bytes that are not UTF-8, replaced) is a warning.
"""

from __future__ import annotations

import os
from pathlib import Path

from .model import SourceFile

CUDA_SUFFIXES = {".cu", ".cuh"}
CPP_SUFFIXES = {".cpp", ".cc", ".cxx", ".h", ".hpp", ".hh"}
PYTHON_SUFFIXES = {".py"}
SOURCE_SUFFIXES = CUDA_SUFFIXES | CPP_SUFFIXES | PYTHON_SUFFIXES
MAX_BYTES = 5 * 1024 * 1024  # larger files are generated code or data, not kernels
SKIP_DIRS = {"__pycache__", ".git", ".hg", ".svn", "node_modules", ".venv", "venv", ".mypy_cache", ".pytest_cache"}


def file_kind(path: Path) -> str:
    """'cuda' for CUDA/C++ sources (headers next to CUDA code are parsed with the CUDA grammar)."""
    suffix = path.suffix.lower()
    if suffix in CUDA_SUFFIXES or suffix in CPP_SUFFIXES:
        return "cuda"
    if suffix in PYTHON_SUFFIXES:
        return "python"
    return "other"


def read_source(path: Path) -> tuple[SourceFile, list[str]]:
    """Read one file; return (SourceFile, warnings). ``text`` is None when it cannot be analysed."""
    kind = file_kind(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        return SourceFile(path, kind, None, f"cannot read: {exc.strerror or exc}"), []
    if size > MAX_BYTES:
        return SourceFile(path, kind, None, f"skipped: {size / 1e6:.1f} MB is over the {MAX_BYTES // (1024 * 1024)} MB limit"), []
    try:
        data = path.read_bytes()
    except OSError as exc:
        return SourceFile(path, kind, None, f"cannot read: {exc.strerror or exc}"), []
    if b"\x00" in data[:8192]:
        return SourceFile(path, kind, None, "skipped: looks binary (NUL bytes)"), []
    try:
        text = data.decode("utf-8")
        warnings: list[str] = []
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        line = data[: exc.start].count(b"\n") + 1
        warnings = [f"{path}:{line}: not valid UTF-8; undecodable bytes replaced"]
    return SourceFile(path, kind, text), warnings


def _walk(folder: Path, seen: set[tuple[int, int]], warnings: list[str]) -> list[Path]:
    """Source files under ``folder``, sorted, following each directory (by inode) at most once."""
    out: list[Path] = []
    try:
        st = folder.stat()
    except OSError as exc:
        warnings.append(f"{folder}: cannot read folder ({exc.strerror or exc})")
        return out
    key = (st.st_dev, st.st_ino)
    if key in seen:
        warnings.append(f"{folder}: symlink loop or repeated folder, not followed again")
        return out
    seen.add(key)
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        warnings.append(f"{folder}: cannot list folder ({exc.strerror or exc})")
        return out
    for entry in entries:
        path = Path(entry.path)
        try:
            is_dir = entry.is_dir()  # follows symlinks; loops are caught by the inode set
        except OSError:
            is_dir = False
        if is_dir:
            if entry.name in SKIP_DIRS or entry.name.startswith("."):
                continue
            out += _walk(path, seen, warnings)
        elif path.suffix.lower() in SOURCE_SUFFIXES:
            if entry.is_symlink() and not path.exists():
                warnings.append(f"{path}: broken symlink")
                continue
            out.append(path)
    return out


def collect_sources(paths: list[Path]) -> tuple[list[SourceFile], list[str]]:
    """Every source file under ``paths`` (files or folders; ``text`` None where it cannot be
    analysed), and the warnings met."""
    warnings: list[str] = []
    files: list[Path] = []
    seen_dirs: set[tuple[int, int]] = set()
    for raw in paths:
        path = Path(raw)
        if not path.exists() and not path.is_symlink():
            warnings.append(f"{path}: no such file or folder")
        elif path.is_dir():
            found = _walk(path, seen_dirs, warnings)
            if not found:
                warnings.append(f"{path}: no source files (.cu/.cuh/.cpp/.h/.hpp/.py) found")
            files += found
        elif not path.exists():
            warnings.append(f"{path}: broken symlink or symlink loop")
        else:
            if path.suffix.lower() not in SOURCE_SUFFIXES:
                warnings.append(f"{path}: not a recognised source file, read as-is")
            files.append(path)
    sources: list[SourceFile] = []
    seen_files: set[Path] = set()
    for path in files:
        try:
            real = path.resolve()
        except (OSError, RuntimeError):
            warnings.append(f"{path}: symlink loop, skipped")
            continue
        if real in seen_files:
            continue
        seen_files.add(real)
        source, found = read_source(path)
        warnings += found
        sources.append(source)
    return sources, warnings
