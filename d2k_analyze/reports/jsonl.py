"""JSON Lines: one flat row per line (see :mod:`.rows`)."""

from __future__ import annotations

import json

from .result import Report
from .rows import rows


def render(report: Report) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows(report))
