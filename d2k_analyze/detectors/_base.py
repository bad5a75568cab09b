"""What a detector returns, before the registry turns it into a :class:`PropertyFinding`.

Detectors answer with a :class:`Decision`: a status, the places that show it (``Hit``), and a
reason in words. Confidence and the evidence layer come from the catalogue and the registry, so a
detector module holds only the recognition logic of its property.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import Status


@dataclass(frozen=True)
class Hit:
    file: str
    line: int
    end_line: int = 0
    detail: str = ""


@dataclass
class Decision:
    status: Status
    hits: list[Hit] = field(default_factory=list)
    reason: str = ""


def hit(obj, detail: str = "") -> Hit:
    """A Hit from any fact record with ``file`` and ``line`` (Call, Loop, Decl, Line, Assign...)."""
    end = getattr(obj, "end_line", 0) or obj.line
    return Hit(obj.file, obj.line, end, detail)


def present(hits, reason: str) -> Decision:
    hs = [h if isinstance(h, Hit) else hit(h) for h in hits]
    return Decision(Status.PRESENT, hs[:8], reason)


def absent(reason: str, hits=()) -> Decision:
    return Decision(Status.ABSENT, [h if isinstance(h, Hit) else hit(h) for h in hits][:8], reason)


def not_applicable(reason: str) -> Decision:
    return Decision(Status.NOT_APPLICABLE, [], reason)


def first(*candidates):
    """The first non-empty list among ``candidates`` (detectors try signatures in order)."""
    for c in candidates:
        if c:
            return c
    return []
