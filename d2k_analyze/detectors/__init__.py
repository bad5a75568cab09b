"""Detector registry: one module per catalogue property, found automatically.

A detector module is named after its property id (``tensor_cores.py``) and defines
``detect_cuda(facts)`` and/or ``detect_triton(facts)`` (or one ``detect(facts)`` for both),
each returning a :class:`~._base.Decision`. Adding a property therefore means: a module here, an
entry in ``rubrics/properties.toml`` and labelled examples; nothing else changes. Modules whose
name starts with ``_`` are shared helpers, not detectors.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from types import ModuleType

from ..model import Evidence, KernelUnit, PropertyFinding, Span, Status
from ..parsing.facts import UnitFacts
from ._base import Decision, not_applicable

DEFAULT_CONFIDENCE = "medium"


@lru_cache(maxsize=1)
def registry() -> dict[str, ModuleType]:
    """Property id -> detector module, for every detector module in this package."""
    out: dict[str, ModuleType] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        out[info.name] = importlib.import_module(f"{__name__}.{info.name}")
    return out


def detect(prop_id: str, facts: UnitFacts) -> Decision:
    """Run one property's detector on a unit's facts (NOT_APPLICABLE when it has none for the language)."""
    module = registry().get(prop_id)
    if module is None:
        return not_applicable(f"no detector for '{prop_id}'")
    fn = getattr(module, f"detect_{facts.language}", None) or getattr(module, "detect", None)
    if fn is None:
        return not_applicable(f"'{prop_id}' is not detectable in {facts.language} source")
    try:
        return fn(facts)
    except Exception as exc:  # a detector bug must not take the analysis down
        return not_applicable(f"detector error: {type(exc).__name__}: {exc}")


def _confidence(catalogue, prop_id: str, language: str) -> str:
    try:
        return catalogue[prop_id].confidence.get(language, DEFAULT_CONFIDENCE)
    except (KeyError, TypeError, AttributeError):
        return DEFAULT_CONFIDENCE


def _applies(catalogue, prop_id: str, language: str) -> bool:
    try:
        return catalogue[prop_id].applies_to(language)
    except (KeyError, TypeError, AttributeError):
        return True


def property_ids(catalogue) -> list[str]:
    if catalogue is None:
        return sorted(registry())
    return list(catalogue.ids)


def run_detectors(unit: KernelUnit, catalogue) -> dict[str, PropertyFinding]:
    """A finding for every catalogue property that applies to the unit's language."""
    facts = unit.ast if isinstance(unit.ast, UnitFacts) else None
    findings: dict[str, PropertyFinding] = {}
    for prop_id in property_ids(catalogue):
        if not _applies(catalogue, prop_id, unit.language):
            continue
        conf = _confidence(catalogue, prop_id, unit.language)
        if facts is None:
            findings[prop_id] = PropertyFinding(prop_id, Status.NOT_APPLICABLE, conf, (), "kernel could not be parsed")
            continue
        decision = detect(prop_id, facts)
        evidence = tuple(
            Evidence(Span(h.file, h.line, max(h.end_line, h.line)), facts.snippet(h.file, h.line, max(h.end_line, h.line)), "syntax", conf, h.detail)
            for h in decision.hits
        )
        findings[prop_id] = PropertyFinding(prop_id, decision.status, conf, evidence, decision.reason)
    return findings
