"""What the LLM judge produces, as plain data: one record per request, one verdict per design item.

A :class:`JudgeRecord` is everything a report needs to audit a judgement: which model and prompt
version answered, what it cost, whether the answer came from the cache, and what went wrong if
nothing usable came back. A judge error is recorded as an error (``error`` set, no verdicts); it
is never turned into a guessed verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import Verdict


@dataclass(frozen=True)
class Citation:
    """A line range the judge cited, as it cited it (file relative to the submission folder)."""

    file: str
    start_line: int
    end_line: int

    def text(self) -> str:
        lines = str(self.start_line) if self.start_line == self.end_line else f"{self.start_line}-{self.end_line}"
        return f"{self.file}:{lines}"


@dataclass(frozen=True)
class ItemJudgement:
    """The judge's answer for one design item, before and after the mechanical citation check.

    ``stated`` is what the model said; ``verdict`` is what scoring uses. They differ only when the
    citation check downgraded the verdict, and then ``note`` says why (see :mod:`.citations`).
    """

    item: str
    stated: Verdict
    verdict: Verdict
    citations: tuple[Citation, ...]
    rationale: str
    note: str = ""

    @property
    def downgraded(self) -> bool:
        return self.stated != self.verdict


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens)


@dataclass
class JudgeRecord:
    """One judge request (grading or design discovery) for one submission.

    ``usage`` and ``cost_usd`` add up every attempt, including malformed answers that were retried
    (they were paid for). ``cached`` answers cost nothing in this run; ``cost_usd`` then shows what
    the original request cost. ``cost_usd`` is None when the model has no entry in the price table.
    """

    submission: str
    kind: str  # "grade" | "discover"
    model: str
    prompt_version: str
    key: str
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0
    cached: bool = False
    attempts: int = 0
    via: str = "messages"  # "messages" | "batch" | "cache"
    error: str | None = None
    answer: dict | None = None  # the validated tool input, as the model gave it
    injection_flagged: bool = False  # the model reported text in the source addressing it

    @property
    def ok(self) -> bool:
        return self.error is None and self.answer is not None


@dataclass
class SubmissionJudgement:
    """The judge's results for one submission: item verdicts and, with design notes, proposals."""

    grade: JudgeRecord
    items: dict[str, ItemJudgement] = field(default_factory=dict)
    discover: JudgeRecord | None = None
    proposed: dict[str, Verdict] = field(default_factory=dict)  # item -> implemented/partial/absent as proposed

    @property
    def records(self) -> list[JudgeRecord]:
        return [r for r in (self.grade, self.discover) if r is not None]


@dataclass
class JudgeTotals:
    """What a run spent: requests sent, answers from the cache, tokens and dollars (this run only)."""

    requests: int = 0
    cached: int = 0
    errors: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    unpriced: set[str] = field(default_factory=set)  # models without a price entry

    def add(self, record: JudgeRecord) -> None:
        if record.error is not None:
            self.errors += 1
        if record.cached:
            self.cached += 1
            return
        self.requests += record.attempts
        self.usage = self.usage + record.usage
        if record.cost_usd is None:
            self.unpriced.add(record.model)
        else:
            self.cost_usd += record.cost_usd

    def line(self) -> str:
        cost = f"${self.cost_usd:.4f}" + (f" (no price for {', '.join(sorted(self.unpriced))})" if self.unpriced else "")
        return (
            f"judge: {self.requests} requests, {self.cached} answers from the cache, {self.errors} errors; "
            f"{self.usage.input_tokens} input + {self.usage.output_tokens} output tokens; cost {cost}"
        )
