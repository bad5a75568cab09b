"""Results back into pandas in one line: ``t = d2k_analyze.load_results("out.jsonl")``.

``t.submissions``, ``t.items``, ``t.units``, ``t.findings`` (and ``t.judge``, ``t.discovery``,
``t.eval_properties``, ``t.eval_layers``, ``t.eval_misses``) are tidy DataFrames, each with exactly
its own columns (``docs/results.md``), empty but typed by their columns when the file has no such
rows. They join on ``submission`` (and ``unit`` + ``file`` for units and findings)::

    t.items.pivot(index="submission", columns="item", values="value")
    t.findings[t.findings.status == "absent"].groupby("property").size()
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Iterator

from .rows import LEGACY_ROW_TYPES, SCHEMAS, TABLES


@dataclass(frozen=True)
class ResultTables:
    """The analyzer's output as named pandas DataFrames (one per table of :mod:`.rows`)."""

    submissions: Any
    items: Any
    units: Any
    findings: Any
    judge: Any
    discovery: Any
    eval_properties: Any
    eval_layers: Any
    eval_misses: Any

    def names(self) -> list[str]:
        return [f.name for f in fields(self)]

    def __getitem__(self, name: str):
        if name not in self.names():
            raise KeyError(f"no table '{name}' (tables: {', '.join(self.names())})")
        return getattr(self, name)

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        return ((n, getattr(self, n)) for n in self.names())


def _records(path: Path) -> list[dict[str, Any]]:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        with path.open(encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]
    if suffix == ".csv":
        import pandas as pd

        frame = pd.read_csv(path, keep_default_na=True, low_memory=False)
        return frame.astype(object).where(frame.notna(), None).to_dict("records")
    raise ValueError(f"{path}: expected a .jsonl or .csv file written by d2k-analyze")


def load_results(path: str | Path) -> ResultTables:  # pandas imported lazily: the CLI never needs it
    """Read a ``--format jsonl`` or ``--format csv`` output into :class:`ResultTables`."""
    import pandas as pd

    by_type: dict[str, list[dict[str, Any]]] = {t: [] for t in SCHEMAS}
    for rec in _records(Path(path)):
        kind = LEGACY_ROW_TYPES.get(rec.get("row_type"), rec.get("row_type"))
        if kind in by_type:
            by_type[kind].append({c: rec.get(c) for c in SCHEMAS[kind]})
    frames = {TABLES[kind]: pd.DataFrame(rows, columns=SCHEMAS[kind]) for kind, rows in by_type.items()}
    return ResultTables(**frames)
