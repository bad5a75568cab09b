"""What to hand to ``nvcc``: the CUDA translation units of a submission.

A ``.cu`` file is compiled as-is (the submission format keeps them standalone). A ``.cuh``
header is compiled through the ``.cu`` files that include it, never on its own. CUDA embedded in
a Python string is compiled when it is a complete translation unit: it defines a ``__global__``
kernel and does not need the torch/pybind headers that only ``load_inline`` can supply.
Python files are read with :mod:`ast`, never imported.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

# Headers only a torch extension build provides: such a string is not a standalone unit.
_TORCH_HEADERS = re.compile(r"#\s*include\s*[<\"](?:torch/|ATen/|c10/|pybind11/|Python\.h)")


@dataclass(frozen=True)
class TranslationUnit:
    """CUDA text to compile. ``origin`` is the file it comes from (for messages and includes);
    ``first_line`` is where the text starts in that file (1 for a ``.cu``, the string's line for
    embedded CUDA); ``context`` hashes the headers beside it so edits to them miss the cache."""

    origin: str
    text: str
    first_line: int = 1
    context: str = ""

    @property
    def label(self) -> str:
        return self.origin if self.first_line == 1 else f"{self.origin}:{self.first_line}"


def _header_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    try:
        headers = sorted(p for p in folder.iterdir() if p.suffix in {".cuh", ".h", ".hpp"} and p.is_file())
    except OSError:
        return ""
    for header in headers:
        try:
            digest.update(header.name.encode() + b"\0" + header.read_bytes())
        except OSError:
            continue
    return digest.hexdigest()


def embedded_cuda(path: Path, text: str) -> list[tuple[int, str]]:
    """(line, text) of every string constant in a Python file that is a complete CUDA unit."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            src = node.value
            if "__global__" in src and not _TORCH_HEADERS.search(src):
                out.append((node.lineno, src))
    return out


def translation_units(files: list[Path]) -> tuple[list[TranslationUnit], list[str]]:
    """Translation units of the given kernel files (the files kernel units were found in), and
    notes on what was left out (headers compiled only through their includers, torch strings)."""
    units: list[TranslationUnit] = []
    notes: list[str] = []
    for path in dict.fromkeys(Path(f) for f in files):
        suffix = path.suffix.lower()
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            notes.append(f"{path}: cannot read ({exc.strerror or exc})")
            continue
        if suffix == ".cu":
            units.append(TranslationUnit(str(path), text, 1, _header_digest(path.parent)))
        elif suffix == ".py":
            found = embedded_cuda(path, text)
            units += [TranslationUnit(str(path), src, line, _header_digest(path.parent)) for line, src in found]
            if not found and "__global__" in text:
                notes.append(f"{path}: embedded CUDA needs torch extension headers, not compiled standalone")
        else:
            notes.append(f"{path}: header, compiled only through the .cu files that include it")
    return units, notes
