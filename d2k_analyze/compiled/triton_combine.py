"""Folding the Triton layer's readings into the findings of each launched Triton unit.

Source syntax cannot decide what Triton's compiler decides (the Triton conventions of
docs/properties.md): vectorization, coalescing, shared staging and its swizzle, shuffle and block
reductions, pipelining. Once the compiler's output is read, it can. The rule is simple:

* a property is **present** when its reading is present for some compiled variant on some target
  (an autotune config the GPU may pick, a workload's specialization);
* **absent** when every variant that could be read says absent;
* otherwise the syntax finding stands (its old "cannot be decided" reason kept).

A decided reading replaces the syntax status, keeps the syntax evidence, and adds one compiled
evidence record carrying the TTGIR/PTX lines (the report's snippet) and where they come from.
"""

from __future__ import annotations

import dataclasses

from d2k_spec.catalogue import Catalogue

from ..model import Evidence, PropertyFinding, Status, SubmissionAnalysis, UnitAnalysis
from .triton import TritonResult, VariantOutcome, readers
from .ttgir import Reading


def decide(outcomes: list[VariantOutcome], prop: str) -> tuple[bool | None, list[tuple[str, Reading]]]:
    """The decision over every compiled variant, with the readings behind it."""
    read = [(o.where, o.readings[prop]) for o in outcomes if o.status == "ok" and prop in o.readings]
    present = [(w, r) for w, r in read if r.decision is True]
    if present:
        return True, present
    decided = [(w, r) for w, r in read if r.decision is False]
    if decided:
        return False, decided
    return None, read


def _finding(ua: UnitAnalysis, prop: str, old: PropertyFinding | None, decision: bool, readings: list[tuple[str, Reading]],
             n_variants: int) -> PropertyFinding:
    where, first = readings[0]
    others = f" and {len(readings) - 1} more variants" if len(readings) > 1 else ""
    snippet = "; ".join(first.evidence)[:400]
    detail = f"{where}{others}: {first.note}"
    evidence = Evidence(ua.unit.span, snippet, "compiled", "high", detail)
    status = Status.PRESENT if decision else Status.ABSENT
    scope = "in" if decision else f"in all {len(readings)} of {n_variants}"
    reason = f"compiled layer (triton.compile), {scope} compiled variants: {first.note} ({where})"
    if old is not None and old.status != status and old.reason:
        reason += f"; the source alone said {old.status.value}: {old.reason}"
    old_evidence = old.evidence if old is not None else ()
    return PropertyFinding(prop, status, "high", old_evidence + (evidence,), reason)


def apply_triton(analysis: SubmissionAnalysis, result: TritonResult, catalogue: Catalogue) -> SubmissionAnalysis:
    """A copy of ``analysis`` whose compiled Triton units carry the layer's verdicts."""
    if result.status != "ok":
        return analysis
    props = [p for p in readers() if p in catalogue]
    units = []
    for ua in analysis.units:
        outcomes = result.kernels.get(ua.unit.name, []) if ua.unit.language == "triton" else []
        ok = [o for o in outcomes if o.status == "ok"]
        if not ok:
            units.append(ua)
            continue
        findings = dict(ua.findings)
        for prop in props:
            decision, readings = decide(ok, prop)
            if decision is not None:
                findings[prop] = _finding(ua, prop, findings.get(prop), decision, readings, len(ok))
        units.append(UnitAnalysis(ua.unit, findings))
    return dataclasses.replace(analysis, units=units)

