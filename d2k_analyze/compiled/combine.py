"""Combining compiled evidence with syntax findings, per kernel unit (docs/architecture.md, layers 1 + 2).

Rules, applied only to CUDA units whose kernel the compiler emitted (matched by name; a template
never instantiated or a kernel in a header nobody includes emits nothing and is left alone):

* **refute**: a syntax PRESENT for a :func:`refutable` property with none of its instructions in
  any compiled instance of the kernel becomes ABSENT (high), the syntax evidence kept and the
  reason recorded. A finding stands unless compiled evidence contradicts it.
* **confirm**: a syntax PRESENT whose instruction was emitted gains the compiled evidence.
* **upgrade**: a medium/low-confidence ABSENT or NOT_APPLICABLE for an :func:`upgradable` property
  (the instruction *is* the property) becomes PRESENT when the instruction was emitted.
"""

from __future__ import annotations

import dataclasses

from d2k_spec.catalogue import Catalogue

from ..model import Evidence, PropertyFinding, Status, SubmissionAnalysis, UnitAnalysis
from .artifacts import KernelArtifact
from .compiler import CompileResult
from .signatures import pattern, refutable, signed_properties, upgradable


def kernels_for(unit_name: str, results: list[CompileResult]) -> list[KernelArtifact]:
    """Every compiled instance of a kernel unit (template instantiations give several). An explicit
    specialisation's unit (``k<__half>``) shares the compiled name ``k`` with its primary template:
    the instances are not told apart by the unit's name."""
    base = unit_name.split("<", 1)[0]
    return [k for r in results if r.status == "ok" for k in r.kernels if k.name == base]


def _evidence(ua: UnitAnalysis, kernels: list[KernelArtifact], prop: str, arch: str) -> Evidence:
    samples = [s for k in kernels for s in k.samples(prop)]
    symbols = ", ".join(sorted({k.symbol for k in kernels}))
    return Evidence(
        span=ua.unit.span,
        snippet="; ".join(samples)[:400],
        layer="compiled",
        confidence="high",
        detail=f"{arch}: {symbols}",
    )


def combine_finding(
    ua: UnitAnalysis, prop: str, finding: PropertyFinding | None, kernels: list[KernelArtifact], arch: str
) -> PropertyFinding | None:
    """The finding of ``prop`` after the compiled layer (None stays None unless upgraded)."""
    emitted = any(k.has(prop) for k in kernels)
    if finding is not None and finding.status == Status.PRESENT:
        if emitted:
            note = "confirmed by the compiled layer"
            return dataclasses.replace(
                finding,
                evidence=finding.evidence + (_evidence(ua, kernels, prop, arch),),
                reason=f"{finding.reason}; {note}" if finding.reason else note,
            )
        if prop in refutable():
            symbols = ", ".join(sorted({k.symbol for k in kernels}))
            reason = (
                f"refuted by the compiled layer: the source shows {prop}, but the {arch} code of {symbols} "
                f"has no matching instruction (/{pattern(prop)}/)"
            )
            refutation = Evidence(ua.unit.span, "", "compiled", "high", reason)
            return PropertyFinding(prop, Status.ABSENT, "high", finding.evidence + (refutation,), reason)
        return finding
    if emitted and prop in upgradable() and (finding is None or finding.confidence != "high"):
        was = "no syntax finding" if finding is None else f"syntax said {finding.status.value} ({finding.confidence})"
        reason = f"upgraded by the compiled layer ({was}): the instruction was emitted"
        old = finding.evidence if finding else ()
        return PropertyFinding(prop, Status.PRESENT, "high", old + (_evidence(ua, kernels, prop, arch),), reason)
    return finding


def apply_compiled(
    analysis: SubmissionAnalysis, results: list[CompileResult], catalogue: Catalogue
) -> SubmissionAnalysis:
    """A copy of ``analysis`` with every matched CUDA unit's findings combined with compiled evidence."""
    units = []
    for ua in analysis.units:
        kernels = kernels_for(ua.unit.name, results) if ua.unit.language == "cuda" else []
        if not kernels:
            units.append(ua)
            continue
        arch = next((r.arch for r in results if r.status == "ok" and any(k in r.kernels for k in kernels)), "sm_90")
        findings = dict(ua.findings)
        for prop in sorted(signed_properties()):
            if prop not in catalogue or not catalogue[prop].applies_to("cuda"):
                continue
            new = combine_finding(ua, prop, findings.get(prop), kernels, arch)
            if new is not None:
                findings[prop] = new
        units.append(UnitAnalysis(ua.unit, findings))
    return dataclasses.replace(analysis, units=units)


def compiled_status(results: list[CompileResult], notes: list[str] | None = None, enabled: bool = True) -> str:
    """One line for the report: what the compiled layer did for a submission."""
    if not enabled:
        return "compiled layer: off (--no-compiled)"
    if not results:
        why = notes[0] if notes else "no standalone CUDA translation unit"
        return f"compiled layer: nothing to compile ({why})"
    skipped = [r for r in results if r.status == "skipped"]
    if len(skipped) == len(results):
        return f"compiled layer: skipped: {skipped[0].message}"
    failed = [r for r in results if r.status == "failed"]
    ok = [r for r in results if r.status == "ok"]
    n_kernels = sum(len(r.kernels) for r in ok)
    parts = [f"{len(ok)}/{len(results)} units compiled, {n_kernels} kernels"]
    if ok and not all(r.sass for r in ok):
        parts.append(next(r.message for r in ok if not r.sass) or "PTX only")
    if failed:
        return f"compiled layer: failed: {failed[0].origin}: {failed[0].message} ({'; '.join(parts)})"
    return f"compiled layer: ok ({'; '.join(parts)})"
