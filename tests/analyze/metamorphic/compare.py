"""What must not change, and how a change is reported.

The fingerprint of a submission is what the analyzer concludes, not where it found it: the kernel
units with their launched flags, every (unit, property) status, and the implementation score
(overall, per level, and each design item's final verdict). Evidence lines and reason texts may
differ (the code moved); reasons are kept only to explain a difference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from d2k_analyze.analysis import analyze_submission
from d2k_analyze.scoring import score_submission


@dataclass
class Fingerprint:
    units: dict[str, bool] = field(default_factory=dict)  # unit name -> launched
    status: dict[tuple[str, str], str] = field(default_factory=dict)  # (unit, property) -> status
    reason: dict[tuple[str, str], str] = field(default_factory=dict)
    score: dict[str, float | None] = field(default_factory=dict)  # "overall", "L1", ...
    items: dict[str, str] = field(default_factory=dict)  # design item -> final verdict
    item_reason: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def _unit_keys(names: list[str]) -> list[str]:
    """Unit names, made unique in order (``k``, ``k#2``) should two units share a name."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}#{seen[n]}")
    return out


def fingerprint(name: str, folder: Path, task, catalogue) -> Fingerprint:
    """Analyse ``folder`` with the static layers and score it against ``task``."""
    analysis = analyze_submission(name, folder, task.id, catalogue)
    fp = Fingerprint(errors=list(analysis.errors))
    keys = _unit_keys([u.unit.name for u in analysis.units])
    for key, ua in zip(keys, analysis.units):
        fp.units[key] = ua.unit.launched
        for prop, finding in ua.findings.items():
            fp.status[(key, prop)] = finding.status.value
            fp.reason[(key, prop)] = finding.reason
    score = score_submission(analysis, task, catalogue)
    fp.score = {"overall": score.overall, **score.per_level}
    for item in score.items:
        fp.items[item.item] = item.final.value
        fp.item_reason[item.item] = item.reason
    return fp


@dataclass(frozen=True)
class Difference:
    kind: str  # "unit", "status", "score", "item", "error"
    unit: str
    what: str  # property, score level or item id
    before: str
    after: str
    why_before: str = ""
    why_after: str = ""

    def line(self) -> str:
        head = {"status": f"{self.unit} / {self.what}", "unit": f"unit {self.unit}", "score": f"score {self.what}",
                "item": f"design item {self.what}", "error": "analysis error"}[self.kind]
        text = f"{head}: {self.before} -> {self.after}"
        if self.why_before or self.why_after:
            text += f"\n      before: {self.why_before}\n      after:  {self.why_after}"
        return text


def _fmt(x: float | None) -> str:
    return "None" if x is None else f"{x:.1f}"


def differences(before: Fingerprint, after: Fingerprint) -> list[Difference]:
    out: list[Difference] = []
    for e in after.errors:
        if e not in before.errors:
            out.append(Difference("error", "", "", "", e))
    for unit in sorted(set(before.units) | set(after.units)):
        b = before.units.get(unit)
        a = after.units.get(unit)
        if b != a:
            show = {None: "missing", True: "launched", False: "not launched"}
            out.append(Difference("unit", unit, "", show[b], show[a]))
    for key in sorted(set(before.status) | set(after.status)):
        b, a = before.status.get(key, "missing"), after.status.get(key, "missing")
        if b != a and key[0] in before.units and key[0] in after.units:
            out.append(Difference("status", key[0], key[1], b, a, before.reason.get(key, ""), after.reason.get(key, "")))
    for level in before.score:
        b, a = before.score[level], after.score.get(level)
        if (b is None) != (a is None) or (b is not None and a is not None and abs(b - a) > 1e-9):
            out.append(Difference("score", "", level, _fmt(b), _fmt(a)))
    for item in sorted(set(before.items) | set(after.items)):
        b, a = before.items.get(item, "missing"), after.items.get(item, "missing")
        if b != a:
            out.append(Difference("item", "", item, b, a, before.item_reason.get(item, ""), after.item_reason.get(item, "")))
    return out


def report(submission: str, transformation: str, notes: list[str], diffs: list[Difference]) -> str:
    lines = [f"{submission} under {transformation}: {len(diffs)} difference(s)"]
    lines += [f"  ({n})" for n in notes]
    lines += [f"  {d.line()}" for d in diffs]
    return "\n".join(lines)
