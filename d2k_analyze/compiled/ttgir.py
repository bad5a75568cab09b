"""Reading what Triton emitted for one kernel: TTGIR layouts, shared buffers and PTX lines.

Detectors declare, next to their recognition logic, a reader ``TritonIR -> Reading`` in their
:class:`~d2k_analyze.detectors._base.Signature`; this module gives them the parsed view they ask
questions of. Everything here reads text only.

TTGIR facts used (Triton 3.x spelling):

* layouts: ``#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8],
  warpsPerCTA = [4, 1], order = [1, 0]}>``;
* shared encodings: ``#ttg.nvmma_shared<{swizzlingByteWidth = 128, ...}>``,
  ``#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, ...}>``, ``#ttg.padded_shared<...>``;
* buffers: ``ttg.local_alloc ... -> !ttg.memdesc<3x128x64xbf16, #shared, #smem, mutable>`` (a
  leading dimension over a tile's rank is a ring of pipeline stages);
* reductions: ``"tt.reduce"(%x) <{axis = 1 : i32}> (...) : (tensor<4x1024xf32, #blocked>) -> ...``;
* warp specialization: ``ttg.warp_specialize``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

_LAYOUT = re.compile(r"^(#[\w.]+) = #ttg\.blocked<\{([^}]*)\}>", re.M)
_ENCODING = re.compile(r"^(#[\w.]+) = (#ttg\.(?:nvmma_shared|swizzled_shared|padded_shared|shared_linear)<[^\n]*>)\s*$", re.M)
_ALLOC = re.compile(r"ttg\.local_alloc\b([^\n]*?)-> !ttg\.memdesc<([\dx]+)x(\w+), (#[\w.]+)[^>]*>")
_REDUCE = re.compile(r'"tt\.reduce"\([^)]*\)\s*<\{axis = (\d+)[^}]*\}>.*?\}\) : \(tensor<[^,>]*, (#[\w.]+(?:<\{[^}]*\}>)?)', re.S)
_LOAD = re.compile(r"tt\.load [^\n]*: tensor<[^,>]*x!tt\.ptr<\w+>, (#[\w.]+)>")
_INTS = re.compile(r"(\w+) = \[([\d, ]*)\]")
_INDEX = re.compile(r"ttg\.memdesc_index [^\n]*?: !ttg\.memdesc<([\dx]+)x(\w+),[^\n]*?-> !ttg\.memdesc<([\dx]+)x\w+,")


@dataclass(frozen=True)
class Reading:
    """A property read off compiled code: True (present), False (absent) or None (cannot tell),
    with the TTGIR/PTX lines that show it and a short note."""

    decision: bool | None
    evidence: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class Blocked:
    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]


@dataclass(frozen=True)
class Buffer:
    """A shared-memory allocation: its shape (with a leading stage dimension for a ring), element
    type, encoding text, and whether it is allocated empty (to be filled by copies) or from a value."""

    shape: tuple[int, ...]
    element: str
    encoding: str
    empty: bool


@dataclass
class TritonIR:
    """One compiled kernel variant for one target."""

    ttgir: str
    ptx: str
    arch: int
    label: str = ""
    cache: dict = field(default_factory=dict, repr=False)

    def lines(self, pattern: str, artifact: str = "ptx", limit: int = 3) -> tuple[str, ...]:
        """The first distinct lines of TTGIR or PTX that match ``pattern`` (stripped, shortened)."""
        rx = re.compile(pattern)
        text = self.ptx if artifact == "ptx" else self.ttgir
        found: dict[str, None] = {}
        for line in text.splitlines():
            if rx.search(line):
                found.setdefault(_short(line), None)
                if len(found) >= limit:
                    break
        return tuple(found)

    def count(self, pattern: str, artifact: str = "ptx") -> int:
        return len(re.findall(pattern, self.ptx if artifact == "ptx" else self.ttgir))

    @cached_property
    def layouts(self) -> dict[str, Blocked]:
        out = {}
        for m in _LAYOUT.finditer(self.ttgir):
            fields = {k: tuple(int(x) for x in v.split(",") if x.strip()) for k, v in _INTS.findall(m.group(2))}
            out[m.group(1)] = Blocked(fields.get("sizePerThread", ()), fields.get("threadsPerWarp", ()),
                                      fields.get("warpsPerCTA", ()), fields.get("order", ()))
        return out

    @cached_property
    def encodings(self) -> dict[str, str]:
        return {m.group(1): m.group(2) for m in _ENCODING.finditer(self.ttgir)}

    @cached_property
    def buffers(self) -> list[Buffer]:
        out = []
        for m in _ALLOC.finditer(self.ttgir):
            shape = tuple(int(x) for x in m.group(2).split("x") if x)
            out.append(Buffer(shape, m.group(3), self.encodings.get(m.group(4), m.group(4)), ": ()" in m.group(1)))
        return out

    def rings(self) -> list[tuple[int, str]]:
        """(depth, line) of every multi-buffered shared allocation indexed by a stage counter
        (``ttg.memdesc_index`` of a ``NxAxB`` buffer to an ``AxB`` one); barrier arrays excluded."""
        out = []
        for line in self.ttgir.splitlines():
            m = _INDEX.search(line)
            if not m or m.group(2) == "i64":
                continue
            src, dst = m.group(1).split("x"), m.group(3).split("x")
            if len(src) == len(dst) + 1:
                out.append((int(src[0]), _short(line)))
        return out

    def reduces(self) -> list[tuple[int, Blocked | None]]:
        """(axis, layout of the reduced operand) of every ``tt.reduce``; a ``#ttg.slice`` layout
        resolves to its parent with the sliced dimension removed."""
        out = []
        for m in _REDUCE.finditer(self.ttgir):
            out.append((int(m.group(1)), self.layout_of(m.group(2))))
        return out

    def layout_of(self, ref: str) -> Blocked | None:
        if ref in self.layouts:
            return self.layouts[ref]
        sliced = re.match(r"#ttg\.slice<\{dim = (\d+), parent = (#[\w.]+)\}>", ref)
        if sliced and sliced.group(2) in self.layouts:
            p, d = self.layouts[sliced.group(2)], int(sliced.group(1))
            drop = lambda t: tuple(x for i, x in enumerate(t) if i != d)  # noqa: E731
            order = tuple(o - (o > d) for o in p.order if o != d)
            return Blocked(drop(p.size_per_thread), drop(p.threads_per_warp), drop(p.warps_per_cta), order)
        return None

    def load_layouts(self) -> list[Blocked]:
        """Layouts of the pointer tensors of every ``tt.load`` (global loads through pointers)."""
        return [self.layouts[m.group(1)] for m in _LOAD.finditer(self.ttgir) if m.group(1) in self.layouts]

    def dot_ops(self) -> tuple[str, ...]:
        return self.lines(r"\b(?:tt\.dot(?:_scaled)?|ttng\.warp_group_dot|ttng\.tc_gen5_mma(?:_scaled)?)\b", "ttgir", 2)


def _short(line: str) -> str:
    """A TTGIR/PTX line without its location suffix, trimmed for a report."""
    line = re.sub(r"\s+loc\(#?[^)]*\)\s*$", "", line.strip())
    return line if len(line) <= 160 else line[:157] + "..."


def has_loop(ir: TritonIR) -> bool:
    return "scf.for" in ir.ttgir or "scf.while" in ir.ttgir


def by_instruction(pattern: str, artifact: str = "ptx") -> "Callable[[TritonIR], Reading]":
    """A reader for a property that *is* an instruction: present when ``pattern`` matches the
    kernel's PTX (or TTGIR), absent otherwise."""

    def read(ir: TritonIR) -> Reading:
        found = ir.lines(pattern, artifact)
        return Reading(bool(found), found, f"{ir.count(pattern, artifact)} matching {artifact.upper()} instructions" if found else f"no match for /{pattern}/ in the {artifact.upper()}")

    return read
