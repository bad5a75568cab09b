"""The mechanical injection defence: a verdict must be backed by citations of live code.

A prompt can only ask the model to ignore text in the source that addresses it; this check makes
sure such text cannot move a score even when the model obeys it. Every "implemented" or
"partial" verdict is kept only if at least one of its citations is a line range, in a file of the
submission, that holds live code (:func:`.source_view.citable_lines`). Otherwise the verdict is
downgraded to "absent" and the note records which citations were rejected and why. Invalid
citations next to a valid one are dropped from the evidence and noted, the verdict stands.
"""

from __future__ import annotations

from ..model import Verdict
from .records import Citation, ItemJudgement


def rejection(c: Citation, citable: dict[str, set[int]], n_lines: dict[str, int]) -> str | None:
    """Why ``c`` is not evidence of live code, or None if it is."""
    if c.file not in citable:
        return f"{c.text()}: no such file in the submission"
    n = n_lines.get(c.file, 0)
    if c.start_line < 1 or c.end_line > n:
        return f"{c.text()}: out of range ({c.file} has {n} lines)"
    if not any(line in citable[c.file] for line in range(c.start_line, c.end_line + 1)):
        return f"{c.text()}: no live code there (comment, string or dead code)"
    return None


def check(
    item: str, stated: Verdict, citations: tuple[Citation, ...], rationale: str,
    citable: dict[str, set[int]], n_lines: dict[str, int],
) -> ItemJudgement:
    """The judge's verdict for ``item`` after the citation check (see the module docstring)."""
    rejected = [(c, why) for c in citations if (why := rejection(c, citable, n_lines))]
    valid = tuple(c for c in citations if c not in {r for r, _ in rejected})
    if stated not in (Verdict.IMPLEMENTED, Verdict.PARTIAL):
        return ItemJudgement(item, stated, stated, valid, rationale)
    if not valid:
        why = "; ".join(w for _, w in rejected) or "no line cited"
        return ItemJudgement(item, stated, Verdict.ABSENT, citations, rationale,
                             f"downgraded from {stated.value} to absent: {why}")
    note = ("ignored citations: " + "; ".join(w for _, w in rejected)) if rejected else ""
    return ItemJudgement(item, stated, stated, valid, rationale, note)
