"""The submission as the judge sees it, and which of its lines are live code it may cite.

Two things, computed from the same files so they cannot drift apart:

* :func:`shown_files`: every source file of the submission, named relative to the submission
  folder (stable cache keys whatever the working directory), numbered line by line and fenced as
  untrusted data (:func:`fence_source`);
* :func:`citable_lines`: per shown file, the lines a verdict may cite. A line is citable when it
  is live code: inside a launched kernel unit only its ``code_lines`` (the analyzer's liveness:
  no comments, strings or constexpr-dead branches); lines of unlaunched kernels never; elsewhere
  (host code, launchers, helpers) any line that holds code other than comments and plain strings.
  CUDA source strings that the module compiles are code, line by line.
"""

from __future__ import annotations

import hashlib
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

from ..model import SubmissionAnalysis
from ..sources import collect_sources

_CUDA_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_NOT_CODE_TOKENS = {
    tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
    tokenize.ENCODING, tokenize.ENDMARKER, tokenize.STRING,
} | {getattr(tokenize, n) for n in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END") if hasattr(tokenize, n)}


@dataclass(frozen=True)
class ShownFile:
    """A source file as shown to the judge: ``name`` relative to the submission, ``display`` as
    the analyzer names it in evidence spans."""

    name: str
    display: str
    kind: str  # cuda | python | other
    text: str

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")


def _resolve(p: str | Path) -> Path:
    try:
        return Path(p).resolve()
    except (OSError, RuntimeError):
        return Path(p)


def shown_files(analysis: SubmissionAnalysis) -> list[ShownFile]:
    """Every readable source file of the submission, in path order."""
    root = Path(analysis.path)
    files, _ = collect_sources([root])
    by_real = {_resolve(ua.unit.file): ua.unit.file for ua in analysis.units}
    out = []
    for f in files:
        if f.text is None:
            continue
        real = _resolve(f.path)
        try:
            name = real.relative_to(_resolve(root)).as_posix() if root.is_dir() else f.path.name
        except ValueError:
            name = f.path.name
        out.append(ShownFile(name, by_real.get(real, str(f.path)), f.kind, f.text))
    return out


def fence_marker(files: list[ShownFile]) -> str:
    """A marker derived from the content, so the content cannot contain it (and the prompt, hence
    the cache key, stays deterministic)."""
    digest = hashlib.sha256("\0".join(f.text for f in files).encode("utf-8", errors="replace")).hexdigest()
    for i in range(0, len(digest) - 12):
        marker = f"UNTRUSTED-SOURCE-{digest[i:i + 12]}"
        if not any(marker in f.text for f in files):
            return marker
    return f"UNTRUSTED-SOURCE-{digest}"


def number_lines(text: str) -> str:
    lines = text.split("\n")
    width = len(str(len(lines)))
    return "\n".join(f"{i:>{width}} | {line}" for i, line in enumerate(lines, 1))


def fence_source(files: list[ShownFile], marker: str) -> str:
    """Each file between BEGIN/END fence lines carrying ``marker``, every line numbered."""
    blocks = []
    for f in files:
        blocks.append(
            f"===== BEGIN {marker} file={f.name} ({f.kind}, {len(f.lines)} lines) =====\n"
            f"{number_lines(f.text)}\n"
            f"===== END {marker} file={f.name} ====="
        )
    return "\n\n".join(blocks)


# --- live lines -------------------------------------------------------------------------------


def _python_code_lines(text: str) -> set[int]:
    """Lines holding a Python token that is neither a comment nor a string literal."""
    lines: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type not in _NOT_CODE_TOKENS:
                lines.update(range(tok.start[0], tok.end[0] + 1))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        # Unparseable Python: fall back to "not blank and not a # comment" line by line.
        return {i for i, ln in enumerate(text.split("\n"), 1) if ln.strip() and not ln.lstrip().startswith("#")}
    return lines


def _cuda_code_lines(text: str, first_line: int = 1) -> set[int]:
    """Lines of CUDA text with something left after removing comments (newlines kept)."""
    stripped = _CUDA_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return {first_line + i for i, ln in enumerate(stripped.split("\n")) if ln.strip()}


def _compiled_cuda_string_lines(text: str, file: str) -> set[int]:
    """Lines of CUDA source strings that the Python module compiles (the analyzer's own parse)."""
    try:
        from ..parsing.python import parse_python

        py = parse_python(text, file)
    except Exception:  # noqa: BLE001 - a parser failure only makes fewer lines citable
        return set()
    out: set[int] = set()
    for emb in py.embedded:
        if not emb.compiled:
            continue
        if emb.flat:
            out.add(emb.row + 1)
        else:
            out |= _cuda_code_lines(emb.text, emb.row + 1)
    return out


def citable_lines(analysis: SubmissionAnalysis, files: list[ShownFile]) -> dict[str, set[int]]:
    """Per shown file name, the live-code lines a verdict may cite (see the module docstring)."""
    out: dict[str, set[int]] = {}
    for f in files:
        real = _resolve(f.display)
        units = [ua.unit for ua in analysis.units if _resolve(ua.unit.file) == real]
        if f.kind == "python":
            lines = _python_code_lines(f.text) | _compiled_cuda_string_lines(f.text, f.display)
        elif f.kind == "cuda":
            lines = _cuda_code_lines(f.text)
        else:
            lines = set()
        live_code = set().union(*(u.code_lines for u in units if u.launched))
        for u in units:
            span = set(range(u.span.start_line, u.span.end_line + 1))
            if u.launched:
                lines -= span - u.code_lines
            else:
                lines -= (span | u.code_lines) - live_code
        lines |= live_code
        n = len(f.lines)
        out[f.name] = {ln for ln in lines if 1 <= ln <= n}
    return out
