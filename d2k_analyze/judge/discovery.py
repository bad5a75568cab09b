"""Design discovery: what the agent's design notes proposed, beside what its code implements.

Per design item, "proposed" is the judge's reading of ``design.md`` (implemented = clearly
proposed, partial = partly or vaguely, absent = not proposed) and "implemented" is the item's
final combined verdict. Partial counts as yes on both sides. Each item falls in one of four
classes; per level we count them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import SubmissionScore, Verdict

BOTH, PROPOSED_ONLY, IMPLEMENTED_ONLY, NEITHER, UNKNOWN = (
    "proposed_and_implemented", "proposed_not_implemented", "implemented_not_proposed", "neither", "unknown",
)
CLASSES = (BOTH, PROPOSED_ONLY, IMPLEMENTED_ONLY, NEITHER)


@dataclass(frozen=True)
class DiscoveryRow:
    item: str
    level: str
    proposed: Verdict
    implemented: Verdict
    outcome: str


def _yes(v: Verdict) -> bool | None:
    return None if v == Verdict.NOT_ASSESSED else v in (Verdict.IMPLEMENTED, Verdict.PARTIAL)


def outcome(proposed: Verdict, implemented: Verdict) -> str:
    p, i = _yes(proposed), _yes(implemented)
    if p is None or i is None:
        return UNKNOWN
    return {(True, True): BOTH, (True, False): PROPOSED_ONLY, (False, True): IMPLEMENTED_ONLY}.get((p, i), NEITHER)


def discovery_rows(proposed: dict[str, Verdict], score: SubmissionScore) -> list[DiscoveryRow]:
    rows = []
    for v in score.items:
        p = proposed.get(v.item, Verdict.NOT_ASSESSED)
        rows.append(DiscoveryRow(v.item, v.level, p, v.final, outcome(p, v.final)))
    return rows


def per_level(rows: list[DiscoveryRow]) -> dict[str, dict[str, int]]:
    """``{"L1": {class: count}, ..., "all": {...}}``."""
    out: dict[str, dict[str, int]] = {}
    for key in sorted({r.level for r in rows}) + ["all"]:
        chosen = [r for r in rows if key == "all" or r.level == key]
        out[key] = {c: sum(r.outcome == c for r in chosen) for c in CLASSES + (UNKNOWN,)}
    return out
