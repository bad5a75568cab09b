"""The detector registry and what a detector returns.

A detector module declares one :class:`Rule` for its catalogue property and registers a
function per language with ``@RULE.cuda`` / ``@RULE.triton`` (or ``@RULE.both``). Each function
reads a :class:`~d2k_analyze.facts.kernel.KernelFacts` and answers with a :class:`Decision`:
a status, the places that show it (``Hit``) and a reason in words. The rule may carry the
:class:`Signature` of its property in compiled code, so the compiled layer knows what confirms
or refutes a finding without a second registry. Confidence and the evidence layer come from the
catalogue, so a module holds only the recognition logic of its property.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol

from ..facts.ir import Loc
from ..facts.kernel import KernelFacts
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


class DetectFn(Protocol):
    def __call__(self, facts: KernelFacts) -> Decision: ...


@dataclass(frozen=True)
class Signature:
    """How the property shows in compiled code (one kernel's PTX / SASS text).

    ``refutes``: without a match in the kernel's compiled code, a syntax PRESENT is wrong (the
    property cannot be live without its instruction). ``upgrades``: a match *is* the property, so
    it lifts a medium/low-confidence ABSENT or NOT_APPLICABLE to PRESENT. Otherwise the match is
    recorded as evidence only.

    ``triton`` reads the property off what ``triton.compile`` emitted for a Triton kernel (a
    :class:`~d2k_analyze.compiled.ttgir.TritonIR`, TTGIR and PTX): a
    :class:`~d2k_analyze.compiled.ttgir.Reading` that says present, absent or cannot tell, with
    the lines that show it. When the Triton layer ran, a decided reading is the verdict."""

    ptx: str | None = None
    sass: str | None = None
    refutes: bool = False
    upgrades: bool = False
    triton: Callable | None = None


REGISTRY: dict[str, "Rule"] = {}


class Rule:
    """One catalogue property's detector: registered on creation, languages added by decorators."""

    def __init__(self, prop_id: str, compiled: Signature | None = None):
        if prop_id in REGISTRY:
            raise ValueError(f"two detectors for '{prop_id}'")
        self.id = prop_id
        self.compiled = compiled
        self.languages: dict[str, DetectFn] = {}
        REGISTRY[prop_id] = self

    def cuda(self, fn: DetectFn) -> DetectFn:
        self.languages["cuda"] = fn
        return fn

    def triton(self, fn: DetectFn) -> DetectFn:
        self.languages["triton"] = fn
        return fn

    def both(self, fn: DetectFn) -> DetectFn:
        self.languages["cuda"] = fn
        self.languages["triton"] = fn
        return fn


def hit(obj, detail: str = "") -> Hit:
    """A Hit from any fact record with a ``loc`` (Access, Assignment, LoopFact, CallFact...) or a Loc."""
    loc: Loc = obj if isinstance(obj, Loc) else obj.loc
    return Hit(loc.file, loc.line, max(loc.end_line, loc.line) if isinstance(obj, Loc) else loc.line, detail)


def _hits(items) -> list[Hit]:
    out: list[Hit] = []
    seen: set[tuple[str, int]] = set()
    for h in items:
        h = h if isinstance(h, Hit) else hit(h)
        if (h.file, h.line) not in seen:
            seen.add((h.file, h.line))
            out.append(h)
    return out[:8]


def present(hits, reason: str) -> Decision:
    return Decision(Status.PRESENT, _hits(hits), reason)


def absent(reason: str, hits=()) -> Decision:
    return Decision(Status.ABSENT, _hits(hits), reason)


def not_applicable(reason: str) -> Decision:
    return Decision(Status.NOT_APPLICABLE, [], reason)


Detector = Callable[[KernelFacts], Decision]
