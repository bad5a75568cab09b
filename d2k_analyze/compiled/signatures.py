"""Which emitted instructions evidence which catalogue property.

Two sets matter for combining with syntax findings (see :mod:`.combine`):

* ``REFUTABLE``: properties that cannot be live without their instruction in the kernel's code.
  A syntax finding of PRESENT with no such instruction in the compiled kernel is refuted.
* ``UPGRADABLE``: properties where the instruction *is* the property, so its presence can lift a
  medium-confidence ABSENT / NOT_APPLICABLE to PRESENT.

Other properties (fast_math, cache_hints...) are recorded as compiled evidence only: the compiler
emits ``ex2.approx`` for plain ``expf`` and ``ld.global.nc`` for ``const __restrict__`` pointers,
so the instruction alone proves neither the design choice nor its absence.
"""

from __future__ import annotations

import re

# property -> (PTX pattern, SASS pattern); None where the artifact has no reliable marker.
PATTERNS: dict[str, tuple[str | None, str | None]] = {
    "tensor_cores": (
        r"\b(?:wmma\.mma|mma\.sync|mma\.sp|wgmma\.mma_async|tcgen05\.mma)\S*",
        r"\b(?:HMMA|HGMMA|IMMA|IGMMA|QGMMA|DMMA|BMMA|UTC\w*MMA)\S*",
    ),
    "async_copy": (r"\bcp\.async\S*", r"\b(?:LDGSTS|UTMALDG|UBLKCP)\S*"),
    "tma": (r"\bcp(?:\.reduce)?\.async\.bulk\.tensor\S*", r"\b(?:UTMALDG|UTMASTG|UTMAREDG|UTMAPF)\S*"),
    "ldmatrix": (r"\b(?:ldmatrix|stmatrix)\S*", r"\b(?:LDSM|STSM)\S*"),
    "vectorized_access": (
        r"\b(?:ld|st)\.(?:global|shared)(?:\.[\w:]+)*?\.v[248]\.\w+",
        r"\b(?:LDG|STG|LDS|STS)(?:\.\w+)*\.(?:64|128|256)\b\S*",
    ),
    "warp_shuffle_reduction": (r"\b(?:shfl\.sync|redux\.sync)\S*", r"\b(?:SHFL|REDUX)\S*"),
    "mbarrier": (r"\bmbarrier\.\S+", r"\bSYNCS\.\S+"),
    "atomics": (r"(?<![.\w])(?:atom|red)\.[\w.:]+", r"\b(?:ATOMG?|ATOMS|RED)\.\S+"),
    "fast_math": (r"\b(?:ex2|lg2|rsqrt|rcp|div|sin|cos|tanh)\.approx\S*", r"\bMUFU\.\S+"),
    "cache_hints": (r"\b(?:ld\.global\.(?:nc|cs|lu|cv)|st\.global\.(?:cs|wt))\S*|\.L2::(?:evict_\w+|cache_hint)|\bcreatepolicy\S*", r"\bLDG\S*\.CONSTANT\S*|\b(?:LDG|STG)\S*\.E[FL]\b\S*"),
    "programmatic_dependent_launch": (r"\bgriddepcontrol\S*", None),
    "thread_block_cluster": (r"\bbarrier\.cluster\S*|\bmapa\S*|\.shared::cluster\b|%cluster_\w+", r"\bUCGABAR\S*"),
    "warp_specialization": (r"\bsetmaxnreg\S*", r"\bUSETMAXREG\S*"),
    "launch_bounds": (r"\.(?:maxntid|minnctapersm|maxnreg)\b[^\n]*", None),
}

REFUTABLE = frozenset({"tensor_cores", "async_copy", "tma", "ldmatrix", "warp_shuffle_reduction", "mbarrier", "atomics"})
UPGRADABLE = frozenset({"tensor_cores", "async_copy", "tma", "ldmatrix", "vectorized_access", "warp_shuffle_reduction"})

_COMPILED = {
    prop: tuple(re.compile(p) if p else None for p in pats) for prop, pats in PATTERNS.items()
}

MAX_SAMPLES = 3


def scan(text: str, artifact: str) -> dict[str, tuple[int, tuple[str, ...]]]:
    """Find every property marker in ``text`` (one kernel's PTX or SASS).

    ``artifact`` is "ptx" or "sass". Returns property -> (count, a few distinct matched
    instructions), for the report's evidence snippet.
    """
    index = 0 if artifact == "ptx" else 1
    found: dict[str, tuple[int, tuple[str, ...]]] = {}
    for prop, patterns in _COMPILED.items():
        pattern = patterns[index]
        if pattern is None:
            continue
        matches = [m.group(0).rstrip(",;") for m in pattern.finditer(text)]
        if matches:
            samples = tuple(dict.fromkeys(matches))[:MAX_SAMPLES]
            found[prop] = (len(matches), samples)
    return found
