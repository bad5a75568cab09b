"""Detector registry: one module per catalogue property, each registering a :class:`~._base.Rule`.

Importing this package imports every detector module (modules starting with ``_`` are shared
helpers), which registers its rule. Adding a property means: a module here, an entry in
``rubrics/properties.toml``, fixtures under ``tests/analyze/fixtures/<property>/`` and labelled
examples; ``tests/analyze/test_registry.py`` checks the catalogue and the registry agree.

A detector that raises is an internal error: the finding is recorded with status
NOT_APPLICABLE *and* an ``error`` kind so that reports and tests can tell a crash from an honest
"cannot be decided" (the fuzz test asserts no such error is ever recorded).
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from ..facts.kernel import KernelFacts
from ..model import Evidence, KernelUnit, PropertyFinding, Span, Status
from ._base import REGISTRY, Decision, Rule, Signature, not_applicable

DEFAULT_CONFIDENCE = "medium"


@lru_cache(maxsize=1)
def registry() -> dict[str, Rule]:
    """Property id -> rule, after importing every detector module of this package."""
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    return dict(REGISTRY)


def signatures() -> dict[str, Signature]:
    return {pid: rule.compiled for pid, rule in registry().items() if rule.compiled is not None}


class DetectorError(Exception):
    pass


def detect(prop_id: str, facts: KernelFacts) -> Decision:
    """Run one property's detector on a unit's facts. NOT_APPLICABLE when the property has no
    detector for the language; an exception inside a detector propagates as DetectorError."""
    rule = registry().get(prop_id)
    if rule is None:
        return not_applicable(f"no detector for '{prop_id}'")
    fn = rule.languages.get(facts.language)
    if fn is None:
        return not_applicable(f"'{prop_id}' is not detectable in {facts.language} source")
    try:
        return fn(facts)
    except Exception as exc:  # noqa: BLE001 - re-raised with the property it came from
        raise DetectorError(f"{prop_id}: {type(exc).__name__}: {exc}") from exc


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
    """A finding for every catalogue property that applies to the unit's language. A detector
    crash becomes a finding with ``error`` set (never a silent "not applicable")."""
    facts = unit.ast if isinstance(unit.ast, KernelFacts) else None
    findings: dict[str, PropertyFinding] = {}
    for prop_id in property_ids(catalogue):
        if not _applies(catalogue, prop_id, unit.language):
            continue
        conf = _confidence(catalogue, prop_id, unit.language)
        if facts is None:
            failed = next((w for w in unit.parse_warnings if "internal error" in w), None)
            findings[prop_id] = PropertyFinding(prop_id, Status.NOT_APPLICABLE, conf, (), failed or "kernel could not be parsed",
                                                error="facts" if failed else None)
            continue
        try:
            decision = detect(prop_id, facts)
        except DetectorError as exc:
            findings[prop_id] = PropertyFinding(prop_id, Status.NOT_APPLICABLE, conf, (), f"internal error: {exc}", error="detector")
            continue
        evidence = tuple(
            Evidence(Span(h.file, h.line, max(h.end_line, h.line)), facts.snippet(h.file, h.line, max(h.end_line, h.line)), "syntax", conf, h.detail)
            for h in decision.hits
        )
        findings[prop_id] = PropertyFinding(prop_id, decision.status, conf, evidence, decision.reason)
    return findings
