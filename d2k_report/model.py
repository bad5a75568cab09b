"""The report as data: runs, pairs, per-task outcomes, and the tables built from them.

Every output format (CSV, Markdown, JSON, HTML) renders the same :class:`Report`, so they cannot
disagree. A :class:`Table` keeps raw values (numbers, None, short strings) in its rows; how a cell
is shown (``1.23×``, ``0.42 [0.31, 0.55]``) is decided by its :class:`Column` at render time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .bootstrap import BootstrapConfig
from .outcomes import TaskOutcome
from .runs import Run

# rate: 0-1; score: Performance Score 0-3; pct: implementation score 0-100; speedup: "1.23×";
# ratio: a plain ratio; delta: signed difference; value: a design item's 0 / 0.5 / 1.
Fmt = Literal["text", "int", "rate", "score", "pct", "speedup", "ratio", "delta", "value"]


@dataclass(frozen=True)
class Column:
    """One column. ``ci``: the row also holds ``<key>_lo``/``<key>_hi`` (shown as an interval);
    ``n``: the row holds ``<key>_n``, the number of tasks the value rests on."""

    key: str
    header: str
    fmt: Fmt = "text"
    ci: bool = False
    n: bool = False


@dataclass
class Table:
    id: str
    title: str
    description: str
    columns: list[Column]
    rows: list[dict[str, Any]]

    def raw_keys(self) -> list[str]:
        """Column keys as stored (CSV/JSON): intervals and counts as columns of their own."""
        keys = []
        for c in self.columns:
            keys.append(c.key)
            if c.ci:
                keys += [f"{c.key}_lo", f"{c.key}_hi"]
            if c.n:
                keys.append(f"{c.key}_n")
        return keys


@dataclass(frozen=True)
class RunPair:
    guided: str
    unguided: str

    @property
    def label(self) -> str:
        return f"{self.guided} vs {self.unguided}"


@dataclass
class Report:
    runs: list[Run]
    pairs: list[RunPair]
    universe: list[str]  # the suite's task slots, in order (placeholders for tasks not in the checkout)
    slots: dict[str, list[TaskOutcome]]  # run name -> outcome per slot of ``universe``
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # rules applied and what was missing, for every format
    config: BootstrapConfig = field(default_factory=BootstrapConfig)
    suite_size: int = 0  # the number of task slots the run metrics average over (len(universe))
    problems: list[str] = field(default_factory=list)  # inputs not handled in full (also in notes)

    @property
    def demonstration(self) -> bool:
        return any(r.spec.demonstration for r in self.runs)

    def table(self, table_id: str) -> Table:
        return next(t for t in self.tables if t.id == table_id)

    def run(self, name: str) -> Run:
        return next(r for r in self.runs if r.name == name)
