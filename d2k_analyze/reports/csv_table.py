"""CSV: the flat rows of :mod:`.rows`, every column in a fixed order."""

from __future__ import annotations

import csv
import io

from .result import Report
from .rows import COLUMNS, rows


def render(report: Report) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows(report):
        writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return buf.getvalue()
