"""Scanning compiled code for the instructions that evidence properties.

The patterns are not kept here: each detector declares its property's :class:`Signature` next
to its recognition logic (``d2k_analyze/detectors/<property>.py``); this module only applies
them to one kernel's PTX or SASS.
"""

from __future__ import annotations

import re
from functools import lru_cache

MAX_SAMPLES = 3


@lru_cache(maxsize=1)
def _compiled() -> dict[str, tuple[re.Pattern | None, re.Pattern | None]]:
    from ..detectors import signatures

    return {prop: (re.compile(s.ptx) if s.ptx else None, re.compile(s.sass) if s.sass else None) for prop, s in signatures().items()}


def signed_properties() -> frozenset[str]:
    """Every property whose detector declares compiled-code patterns."""
    return frozenset(_compiled())


def refutable() -> frozenset[str]:
    from ..detectors import signatures

    return frozenset(p for p, s in signatures().items() if s.refutes)


def upgradable() -> frozenset[str]:
    from ..detectors import signatures

    return frozenset(p for p, s in signatures().items() if s.upgrades)


def pattern(prop: str, artifact: str = "ptx") -> str:
    from ..detectors import signatures

    s = signatures().get(prop)
    return (s.ptx if artifact == "ptx" else s.sass) or "" if s else ""


def scan(text: str, artifact: str) -> dict[str, tuple[int, tuple[str, ...]]]:
    """Every property marker in ``text`` (one kernel's PTX or SASS): property -> (count, a few
    distinct matched instructions, for the report's evidence snippet)."""
    index = 0 if artifact == "ptx" else 1
    found: dict[str, tuple[int, tuple[str, ...]]] = {}
    for prop, patterns in _compiled().items():
        rx = patterns[index]
        if rx is None:
            continue
        matches = [m.group(0).rstrip(",;") for m in rx.finditer(text)]
        if matches:
            found[prop] = (len(matches), tuple(dict.fromkeys(matches))[:MAX_SAMPLES])
    return found
