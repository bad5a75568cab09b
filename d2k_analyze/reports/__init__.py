"""Report formats. Each module renders a :class:`Report` to text; :data:`FORMATS` maps the CLI's
``--format`` names onto them. ``table`` is the terminal summary (rich)."""

from __future__ import annotations

from typing import Callable

from . import csv_table, html_page, jsonl, markdown, sarif, terminal
from .load import load_results
from .result import Report, SubmissionResult

FORMATS: dict[str, Callable[[Report], str]] = {
    "table": terminal.render,
    "jsonl": jsonl.render,
    "csv": csv_table.render,
    "md": markdown.render,
    "html": html_page.render,
    "sarif": sarif.render,
}

__all__ = ["FORMATS", "Report", "SubmissionResult", "load_results"]
