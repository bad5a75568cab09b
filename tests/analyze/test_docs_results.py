"""docs/results.md documents every column of every analyzer table (they are declared once, in
d2k_analyze/reports/rows.py), and names every table load_results returns."""

from __future__ import annotations

import re
from pathlib import Path

from d2k_analyze.reports.rows import SCHEMAS, TABLES

DOC = (Path(__file__).resolve().parents[2] / "docs" / "results.md").read_text()


def test_every_table_and_column_is_documented():
    mentioned = set(re.findall(r"`([A-Za-z_0-9]+)`", DOC))
    for row_type, columns in SCHEMAS.items():
        assert TABLES[row_type] in mentioned and row_type in mentioned, row_type
        missing = [c for c in columns if c not in mentioned]
        assert not missing, f"{TABLES[row_type]}: columns not in docs/results.md: {missing}"
