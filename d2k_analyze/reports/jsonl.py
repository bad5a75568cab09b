"""JSON Lines: one row per line, each with its own table's columns (see :mod:`.rows`)."""

from __future__ import annotations

import json

from .result import Report
from .rows import rows


def render(report: Report) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows(report))
