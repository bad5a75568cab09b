"""Reading nvcc's outputs: PTX split per kernel, SASS split per kernel, ``-Xptxas -v`` resources.

Everything is keyed by the kernel's symbol (the mangled name, or the plain name of an
``extern "C"`` kernel); :func:`base_name` recovers the source name used to match kernel units.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .signatures import scan

_PTX_HEADER = re.compile(
    r"^[ \t]*(?:\.(?:visible|weak|extern)[ \t]+)*\.(entry|func)[ \t]+(?:\([^)]*\)[ \t]*)?([\w$.]+)", re.M
)
_PTX_CALL = re.compile(r"\bcall(?:\.uni)?\s+(?:\([^)]*\)\s*,\s*)?([\w$.]+)")
_SASS_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)", re.M)


@dataclass(frozen=True)
class KernelArtifact:
    """One compiled ``__global__`` function: the property markers found in its code (its own body
    plus the non-inlined device functions it calls) and its resource usage."""

    symbol: str
    name: str
    ptx_markers: dict[str, tuple[int, tuple[str, ...]]] = field(default_factory=dict)
    sass_markers: dict[str, tuple[int, tuple[str, ...]]] = field(default_factory=dict)
    registers: int | None = None
    spill_stores: int | None = None
    spill_loads: int | None = None
    smem_bytes: int | None = None
    stack_bytes: int | None = None

    def has(self, prop: str) -> bool:
        return prop in self.ptx_markers or prop in self.sass_markers

    def samples(self, prop: str) -> list[str]:
        """Human-readable evidence: "PTX: mma.sync.aligned... (x4)"."""
        out = []
        for label, markers in (("PTX", self.ptx_markers), ("SASS", self.sass_markers)):
            if prop in markers:
                count, found = markers[prop]
                out.append(f"{label}: {', '.join(found)} (x{count})")
        return out


def base_name(symbol: str) -> str:
    """The unqualified source name of an (Itanium-)mangled symbol: ``_ZN2ns6kernelEPf`` -> ``kernel``,
    ``_Z6gemmILi4EEvPf`` -> ``gemm``; unmangled (``extern "C"``) names come back unchanged.

    Only the name is needed to match kernel units, so the parameter types are not decoded.
    """
    if not symbol.startswith("_Z"):
        return symbol
    i = 2
    nested = symbol[i:i + 1] == "N"
    if nested:
        i += 1
        while i < len(symbol) and symbol[i] in "rVKL":  # cv-qualifiers of member functions
            i += 1
    name = symbol
    while i < len(symbol) and symbol[i].isdigit():
        j = i
        while j < len(symbol) and symbol[j].isdigit():
            j += 1
        length = int(symbol[i:j])
        name = symbol[j:j + length]
        i = j + length
        if not nested:
            break
        if i < len(symbol) and symbol[i] == "I":  # template args of an enclosing scope or the name
            break
    return name


def split_ptx(ptx: str) -> dict[str, str]:
    """Kernel symbol -> its PTX, with the bodies of the ``.func`` functions it calls appended
    (transitively), so markers inside non-inlined helpers count for the kernel."""
    headers = list(_PTX_HEADER.finditer(ptx))
    chunks: dict[str, tuple[str, str]] = {}  # symbol -> (kind, text)
    for n, match in enumerate(headers):
        end = headers[n + 1].start() if n + 1 < len(headers) else len(ptx)
        text = ptx[match.start():end]
        kind, symbol = match.group(1), match.group(2)
        if "{" not in text:
            continue  # a prototype
        old_kind, old_text = chunks.get(symbol, (kind, ""))
        chunks[symbol] = (old_kind, old_text + text)
    funcs = {s: t for s, (k, t) in chunks.items() if k == "func"}
    out: dict[str, str] = {}
    for symbol, (kind, text) in chunks.items():
        if kind != "entry":
            continue
        seen, todo, parts = {symbol}, [text], [text]
        while todo:
            for callee in _PTX_CALL.findall(todo.pop()):
                if callee in funcs and callee not in seen:
                    seen.add(callee)
                    todo.append(funcs[callee])
                    parts.append(funcs[callee])
        out[symbol] = "\n".join(parts)
    return out


def split_sass(sass: str) -> dict[str, str]:
    """Function symbol -> its SASS, from ``cuobjdump -sass`` output."""
    heads = list(_SASS_FUNCTION.finditer(sass))
    return {
        m.group(1): sass[m.end(): heads[n + 1].start() if n + 1 < len(heads) else len(sass)]
        for n, m in enumerate(heads)
    }


def parse_ptxas(log: str) -> dict[str, dict[str, int]]:
    """Symbol -> {registers, spill_stores, spill_loads, smem_bytes, stack_bytes} from ``-Xptxas -v``."""
    out: dict[str, dict[str, int]] = {}
    current: str | None = None
    for line in log.splitlines():
        if m := re.search(r"(?:Compiling entry function|Function properties for)\s+'?([\w$.]+)'?", line):
            current = m.group(1)
            out.setdefault(current, {})
            continue
        if current is None:
            continue
        info = out[current]
        if m := re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line):
            info.update(stack_bytes=int(m[1]), spill_stores=int(m[2]), spill_loads=int(m[3]))
        if m := re.search(r"Used (\d+) registers", line):
            info["registers"] = int(m[1])
            smem = re.search(r"(\d+) bytes smem", line)
            info["smem_bytes"] = int(smem[1]) if smem else 0
    return out


def kernel_artifacts(ptx: str, sass: str, ptxas_log: str) -> list[KernelArtifact]:
    """One :class:`KernelArtifact` per ``.entry`` of the PTX."""
    sass_by_symbol = split_sass(sass) if sass else {}
    resources = parse_ptxas(ptxas_log)
    out = []
    for symbol, text in split_ptx(ptx).items():
        res = resources.get(symbol, {})
        out.append(
            KernelArtifact(
                symbol=symbol,
                name=base_name(symbol),
                ptx_markers=scan(text, "ptx"),
                sass_markers=scan(sass_by_symbol[symbol], "sass") if symbol in sass_by_symbol else {},
                registers=res.get("registers"),
                spill_stores=res.get("spill_stores"),
                spill_loads=res.get("spill_loads"),
                smem_bytes=res.get("smem_bytes"),
                stack_bytes=res.get("stack_bytes"),
            )
        )
    return out
