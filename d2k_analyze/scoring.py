"""The static implementation score of a submission: design items judged from property findings.

Three steps, each a small pure function below.

1. **Property state in the submission** (:func:`property_state`), over the *live* (launched)
   kernel units whose language the property applies to:
   PRESENT if PRESENT in any of them; ABSENT if ABSENT in every one; otherwise undecided
   (NOT_APPLICABLE findings, missing detectors, no applicable live unit). A finding whose catalogue
   confidence for the unit's language is ``low`` never decides without a judge: it counts as
   undecided. A submission whose units are all dead launches none of its kernels: everything is
   ABSENT.

2. **Item verdict** (:func:`static_verdict`) from its properties, by ``require``:
   ``all`` -> implemented if all present, absent if none present, partial otherwise; the first
   listed property defines the item, so when it is absent the item is absent (fp32 accumulation
   without tensor cores is not "part of" a tensor-core MMA);
   ``any`` -> implemented if any present, absent otherwise. Undecided properties are handled by
   asking whether they could change the answer: the verdict is computed with every undecided
   property present (best case) and absent (worst case); if both agree that is the verdict,
   otherwise the item is NOT ASSESSED. E.g. all-of [present, absent, undecided] is partial either
   way; all-of [present, undecided] could be implemented or partial, so it is not assessed.

   A judge verdict per item plugs in here (:func:`combine_layers`, docs/judge.md): a not-assessed
   static verdict takes the judge's; a static verdict decided by high-confidence properties
   stands; a medium-confidence one is a vote with the judge (agreement keeps it, disagreement
   gives partial). With no judge, the static verdict is final.

3. **Dependencies and score** (:func:`apply_dependencies`, :func:`weighted_score`). With values
   implemented 1, partial 0.5, absent 0, an item's final value is capped at the smallest final
   value of its ``depends_on`` prerequisites (a not-assessed prerequisite does not cap; the
   item's reason notes it). Then, over the *assessed* items ``A`` (overall, or one level)::

       score = 100 * sum(w_i * v_i for i in A) / sum(w_i for i in A)      (None if A is empty)

Worked example (a softmax task; weights in brackets)::

    online_softmax  L1 [2]  raw implemented                        -> final 1
    row_on_chip     L2 [1]  raw partial, depends on online_softmax  -> min(0.5, 1)   = 0.5
    vectorized_io   L3 [1]  raw implemented, depends on row_on_chip -> min(1, 0.5)   = 0.5
    warp_shuffle    L3 [1]  not assessed                            -> left out, listed

    overall = 100 * (2*1 + 1*0.5 + 1*0.5) / (2 + 1 + 1) = 75.0
    L1 = 100.0   L2 = 50.0   L3 = 100 * (1*0.5) / 1 = 50.0

These exact numbers are asserted in ``tests/analyze/test_scoring.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping

from d2k_spec.catalogue import Catalogue
from d2k_spec.task import DesignItem, Task

from .model import Evidence, ItemVerdict, Layer, Status, SubmissionAnalysis, SubmissionScore, Verdict

LEVELS = ("L1", "L2", "L3")
_RANK = {"low": 0, "medium": 1, "high": 2}
_FROM_VALUE = {1.0: Verdict.IMPLEMENTED, 0.5: Verdict.PARTIAL, 0.0: Verdict.ABSENT}

State = Literal["present", "absent", "undecided"]


@dataclass(frozen=True)
class PropertyState:
    """A catalogue property's state in one submission, with the evidence that decided it.

    ``confidence`` is the lowest catalogue confidence among the units that decided it (None when
    undecided): it tells :func:`combine_layers` how far the static verdict can be trusted.
    """

    property: str
    state: State
    confidence: str | None = None
    evidence: tuple[Evidence, ...] = ()
    sources: tuple[Layer, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class JudgeVerdict:
    """What an LLM judge said about one design item (the judge issue produces these)."""

    item: str
    verdict: Verdict
    evidence: tuple[Evidence, ...] = ()
    reason: str = ""


def _layers(evidence: tuple[Evidence, ...], default: Layer = "syntax") -> tuple[Layer, ...]:
    found = tuple(dict.fromkeys(e.layer for e in evidence))
    return found or (default,)


def _compiled_verdict(finding) -> bool:
    """A Triton finding decided by the compiled layer (what ``triton.compile`` emitted): it counts
    even where Triton *source* cannot decide the property (the catalogue's Triton conventions)."""
    return bool(finding is not None and finding.evidence and finding.evidence[-1].layer == "compiled"
                and finding.status in (Status.PRESENT, Status.ABSENT))


def property_state(prop: str, analysis: SubmissionAnalysis, catalogue: Catalogue) -> PropertyState:
    """Step 1: the state of ``prop`` in the submission, from its live units."""
    if prop not in catalogue:
        return PropertyState(prop, "undecided", reason=f"'{prop}' is not in the catalogue")
    if not analysis.units:
        if analysis.errors:
            return PropertyState(prop, "undecided", reason="no kernel could be analysed")
        return PropertyState(prop, "absent", "high", sources=("syntax",), reason="no kernel in the submission")
    live = analysis.live_units
    if not live:
        return PropertyState(prop, "absent", "high", sources=("syntax",), reason="no kernel is launched")
    entry = catalogue[prop]
    present, absent, undecided = [], [], []
    for ua in live:
        finding = ua.findings.get(prop)
        compiled = ua.unit.language == "triton" and _compiled_verdict(finding)
        if not entry.applies_to(ua.unit.language) and not compiled:
            continue
        confidence = "high" if compiled else entry.confidence[ua.unit.language]
        if finding is None:
            undecided.append(f"{ua.unit.name}: no finding")
        elif confidence == "low":
            undecided.append(f"{ua.unit.name}: low-confidence property, needs the judge")
        elif finding.status == Status.PRESENT:
            present.append((ua, finding, confidence))
        elif finding.status == Status.ABSENT:
            absent.append((ua, finding, confidence))
        else:
            undecided.append(f"{ua.unit.name}: not applicable ({finding.reason or 'source cannot decide'})")
    if present:
        evidence = tuple(e for _, f, _ in present for e in f.evidence)
        conf = min((c for _, _, c in present), key=_RANK.__getitem__)
        names = ", ".join(ua.unit.name for ua, _, _ in present)
        return PropertyState(prop, "present", conf, evidence, _layers(evidence), f"present in {names}")
    if absent and not undecided:
        evidence = tuple(e for _, f, _ in absent for e in f.evidence)
        conf = min((c for _, _, c in absent), key=_RANK.__getitem__)
        return PropertyState(prop, "absent", conf, evidence, _layers(evidence), "absent in every live kernel")
    if not absent and not undecided:
        return PropertyState(prop, "undecided", reason=f"no live kernel in a language '{prop}' applies to")
    return PropertyState(prop, "undecided", reason="; ".join(undecided))


def _verdict(present: int, absent: int, require: str) -> Verdict:
    if require == "any":
        return Verdict.IMPLEMENTED if present else Verdict.ABSENT
    if absent == 0:
        return Verdict.IMPLEMENTED
    return Verdict.PARTIAL if present else Verdict.ABSENT


def static_verdict(item: DesignItem, states: Mapping[str, PropertyState]) -> Verdict:
    """Step 2: the item's verdict from its properties' states (best case == worst case, or not assessed)."""
    kinds = [states[p].state for p in item.properties]
    if item.require == "all" and kinds and kinds[0] == "absent":
        return Verdict.ABSENT  # the defining property is missing: the rest cannot make it partial
    p, a, u = kinds.count("present"), kinds.count("absent"), kinds.count("undecided")
    best, worst = _verdict(p + u, a, item.require), _verdict(p, a + u, item.require)
    return best if best == worst else Verdict.NOT_ASSESSED


def item_confidence(item: DesignItem, states: Mapping[str, PropertyState]) -> str | None:
    """The lowest confidence among the item's decided properties (None if none decided)."""
    found = [states[p].confidence for p in item.properties if states[p].confidence]
    return min(found, key=_RANK.__getitem__) if found else None


def combine_layers(static: Verdict, confidence: str | None, judge: JudgeVerdict | None) -> tuple[Verdict, str]:
    """Step 2b: the item's raw verdict from the static layers and an optional judge verdict."""
    if judge is None or judge.verdict == Verdict.NOT_ASSESSED:
        return static, ""
    if static == Verdict.NOT_ASSESSED or confidence in (None, "low"):
        return judge.verdict, "judge's call (static layers undecided)"
    if judge.verdict == static:
        return static, "judge agrees"
    if confidence == "high":
        return static, f"high-confidence static verdict stands (judge said {judge.verdict.value})"
    return Verdict.PARTIAL, f"static {static.value} vs judge {judge.verdict.value}: split vote, partial"


def apply_dependencies(items: list[DesignItem], raw: Mapping[str, Verdict]) -> dict[str, tuple[Verdict, str]]:
    """Step 3a: final verdict per item, capped by its prerequisites' final values, with a note."""
    by_id = {d.id: d for d in items}
    final: dict[str, tuple[Verdict, str]] = {}

    def resolve(item_id: str, visiting: frozenset[str]) -> Verdict:
        if item_id in final:
            return final[item_id][0]
        verdict, notes = raw[item_id], []
        for dep in by_id[item_id].depends_on:
            if dep not in by_id or dep in visiting:
                continue  # unknown ids and cycles are rejected by the task validator
            dep_final = resolve(dep, visiting | {item_id})
            if dep_final == Verdict.NOT_ASSESSED:
                if verdict != Verdict.NOT_ASSESSED:
                    notes.append(f"prerequisite '{dep}' not assessed: no cap applied")
            elif verdict != Verdict.NOT_ASSESSED and dep_final.value01 < verdict.value01:
                verdict = _FROM_VALUE[dep_final.value01]
                notes.append(f"capped at {verdict.value} by prerequisite '{dep}'")
        final[item_id] = (verdict, "; ".join(notes))
        return verdict

    for d in items:
        resolve(d.id, frozenset())
    return final


def weighted_score(verdicts: list[ItemVerdict]) -> float | None:
    """Step 3b: 100 * sum(w*v) / sum(w) over assessed items; None if none is assessed."""
    assessed = [v for v in verdicts if v.final.value01 is not None]
    total = sum(v.weight for v in assessed)
    if not assessed or total <= 0:
        return None
    return 100.0 * sum(v.weight * v.final.value01 for v in assessed) / total


def score_submission(
    analysis: SubmissionAnalysis,
    task: Task,
    catalogue: Catalogue,
    judge: Mapping[str, JudgeVerdict] | None = None,
) -> SubmissionScore:
    """Score one submission against its task's design items (static layers, plus a judge if given)."""
    judge = judge or {}
    props = {p for d in task.design for p in d.properties}
    states = {p: property_state(p, analysis, catalogue) for p in sorted(props)}
    raw: dict[str, Verdict] = {}
    why: dict[str, str] = {}
    for d in task.design:
        static = static_verdict(d, states)
        raw[d.id], note = combine_layers(static, item_confidence(d, states), judge.get(d.id))
        parts = [f"{p}: {states[p].state} ({states[p].reason})" for p in d.properties]
        why[d.id] = "; ".join(parts + ([note] if note else []))
    final = apply_dependencies(task.design, raw)
    verdicts = []
    for d in task.design:
        verdict, dep_note = final[d.id]
        evidence = tuple(e for p in d.properties for e in states[p].evidence)
        sources = tuple(dict.fromkeys(s for p in d.properties for s in states[p].sources))
        if d.id in judge and judge[d.id].verdict != Verdict.NOT_ASSESSED:
            evidence += judge[d.id].evidence
            sources += ("judge",)
        reason = "; ".join(x for x in (why[d.id], dep_note) if x)
        verdicts.append(ItemVerdict(d.id, d.level, d.weight, raw[d.id], verdict, sources, evidence, reason))
    per_level = {lvl: weighted_score([v for v in verdicts if v.level == lvl]) for lvl in LEVELS}
    not_assessed = tuple(v.item for v in verdicts if v.final == Verdict.NOT_ASSESSED)
    return SubmissionScore(
        analysis.name, task.id, weighted_score(verdicts), per_level, tuple(verdicts), not_assessed
    )
