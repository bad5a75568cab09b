"""CSV: every table of :mod:`.rows` on one sheet (the union of their columns, in a fixed order;
empty where a column is not the row's table's). ``load_results`` splits it back into tables."""

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
        writer.writerow({k: "" if row.get(k) is None else row[k] for k in COLUMNS})
    return buf.getvalue()
