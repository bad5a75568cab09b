"""Which files' definitions a CUDA file sees: itself and what it includes, transitively.

A folder of tutorial versions (``v1.cu`` ... ``v10.cu``, each a program of its own with a kernel
called ``kernel``, a ``BM`` and helpers called ``make_desc``) is several translation units: a
name in one of them means that file's definition, and a ``#define`` in one never reaches another.
The analyzer reads a submission's files together, so it scopes names the way the compiler
would:

- a file sees itself, the files it ``#include``\\s (quoted includes resolved against the
  submission's files by path, then by file name), transitively, and, for a header, what its
  includers see (its code is compiled inside theirs);
- *shared* files are seen by everyone as a fallback: headers (an include the analyzer could
  not resolve, such as ``<common.h>`` or a flattened vendored tree, is most often one of them)
  and CUDA strings embedded in Python (compiled together by ``load_inline``);
- a definition in another translation-unit root (a ``.cu`` / ``.cpp`` file neither side
  includes) is only a last resort for functions and constants, which the linker can join
  (``main.cu`` calling ``launch_gemm`` from ``gemm.cu``), and never for macros.
"""

from __future__ import annotations

import posixpath
import re

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^">]+)[">]', re.M)
TU_ROOT_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c", ".cuda")


def is_tu_root(name: str, embedded: bool = False) -> bool:
    """A file the compiler takes on its own (``nvcc x.cu``), as opposed to a header it includes;
    a CUDA string embedded in Python is compiled with its siblings, so it is shared."""
    return not embedded and name.lower().endswith(TU_ROOT_SUFFIXES)


def include_targets(text: str) -> list[str]:
    """The paths a source ``#include``\\s, in order (quoted and angle-bracket forms)."""
    return _INCLUDE.findall(text)


def _resolve(including: str, target: str, names: list[str]) -> str | None:
    """The submission file an ``#include`` names: the path relative to the including file, then
    a unique file with that path suffix, then a unique file with that base name."""
    rel = posixpath.normpath(posixpath.join(posixpath.dirname(including), target))
    if rel in names:
        return rel
    suffix = [n for n in names if n == target or n.endswith("/" + target)]
    if len(suffix) == 1:
        return suffix[0]
    base = posixpath.basename(target)
    same = [n for n in names if posixpath.basename(n) == base]
    return same[0] if len(same) == 1 else None


def visibility(texts: dict[str, str]) -> dict[str, frozenset[str]]:
    """For each file (keyed by its display name), the files whose definitions it sees."""
    names = list(texts)
    includes = {n: [r for t in include_targets(texts[n]) if (r := _resolve(n, t, names)) is not None and r != n] for n in names}

    def closure(start: str) -> set[str]:
        seen, todo = {start}, [start]
        while todo:
            for m in includes[todo.pop()]:
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        return seen

    down = {n: closure(n) for n in names}
    out = {n: set(down[n]) for n in names}
    for n in names:  # a header's code is compiled inside each file that includes it
        for m in down[n]:
            if m != n:
                out[m] |= down[n]
    return {n: frozenset(v) for n, v in out.items()}


class Scope:
    """Ranks a name's definitions for the code of one file: those the file sees, then shared
    ones (headers, embedded strings; in the order the submission lists them), then the rest
    (other translation units)."""

    def __init__(self, visible: dict[str, frozenset[str]], shared: list[str]):
        self.visible = visible
        self.shared = shared
        self._shared = set(shared)

    def rank(self, near: str, file: str) -> int:
        if not near or file == near or file in self.visible.get(near, ()):
            return 0
        return 1 if file in self._shared else 2

    def sees(self, near: str, file: str) -> bool:
        """Whether code in ``near`` can see a definition in ``file`` without linking."""
        return self.rank(near, file) < 2

    def reaches(self, site: str, definition: str, definitions: set[str], template: bool) -> bool:
        """Whether a launch in file ``site`` reaches the kernel defined in ``definition``, one
        of the files ``definitions`` defining that name: the definition the site sees, or, when
        it sees none (``main.cu`` launching an ``extern`` kernel), every one that is not a
        template (another file's template is out of reach of an ``extern`` declaration)."""
        seen = {d for d in definitions if self.sees(site, d)}
        return definition in seen or (not seen and not template)


def scope_of(entries) -> Scope:
    """The scope of a submission's CUDA texts, given as (file, text, embedded) in submission
    order; several texts of one file (the CUDA strings of one Python module) are one file."""
    texts: dict[str, str] = {}
    shared: list[str] = []
    for name, text, embedded in entries:
        texts[name] = texts.get(name, "") + "\n" + text
        if not is_tu_root(name, embedded) and name not in shared:
            shared.append(name)
    return Scope(visibility(texts), shared)


def file_scope(sources) -> Scope:
    """The scope of parsed CUDA sources (:class:`.cuda.CudaSource` objects)."""
    return scope_of((src.file, src.text, src.embedded) for src in sources)
