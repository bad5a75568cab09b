"""Text outputs of a :class:`Report`: cell formatting, Markdown, CSV and JSON.

CSV and JSON keep raw values (intervals and task counts as columns of their own) for machines;
Markdown and HTML show formatted cells, e.g. ``1.23× [0.98, 1.51] (n=3)``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from typing import Any

from .model import Column, Report, Table

DEMO_BANNER = ("DEMONSTRATION: the runs marked DEMONSTRATION are corpus kernels arranged as runs to show the report; "
               "they are not results of an agent.")


def number(value: Any, fmt: str) -> str:
    """One value as shown to a person."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, str):
        return value
    if fmt == "rate":
        return f"{value:.2f}"
    if fmt == "score":
        return f"{value:.2f}"
    if fmt == "pct":
        return f"{value:.1f}"
    if fmt == "pct_delta":
        return f"{value:+.1f}"
    if fmt in ("speedup", "ratio"):
        # Three significant digits: a 0.0041x naive GEMM must not read as 0.00x.
        return f"{value:.3g}×" if fmt == "speedup" else f"{value:.3g}"
    if fmt == "delta":
        return f"{value:+.2f}"
    if fmt == "int":
        return str(int(value)) if isinstance(value, (int, float)) else str(value)
    if fmt == "value":
        return {1.0: "1", 0.5: "0.5", 0.0: "0"}.get(float(value), f"{value:.2f}")
    return str(value)


def cell_parts(row: dict[str, Any], col: Column) -> tuple[str, str]:
    """(value, detail) of a cell; detail is the interval and task count, '' when the column has none.
    Pair rows of the headline hold differences (shown signed), except the speedup ratio."""
    fmt = col.fmt
    if row.get("kind") == "pair" and col.ci and col.fmt != "speedup":
        fmt = "pct_delta" if col.fmt == "pct" else "delta"
    detail = []
    if col.ci and row.get(f"{col.key}_lo") is not None:
        detail.append(f"[{number(row[f'{col.key}_lo'], fmt)}, {number(row[f'{col.key}_hi'], fmt)}]")
    if col.n and row.get(f"{col.key}_n") is not None:
        detail.append(f"(n={row[f'{col.key}_n']})")
    return number(row.get(col.key), fmt), " ".join(detail)


def cell(row: dict[str, Any], col: Column) -> str:
    """A formatted cell on one line, e.g. ``0.63× [0.27×, 1.17×] (n=3)``."""
    value, detail = cell_parts(row, col)
    return f"{value} {detail}" if detail else value


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(table: Table) -> str:
    head = "| " + " | ".join(_md_escape(c.header) for c in table.columns) + " |"
    rule = "|" + "|".join("---" for _ in table.columns) + "|"
    body = ["| " + " | ".join(_md_escape(cell(r, c)) for c in table.columns) + " |" for r in table.rows]
    if not table.rows:
        body = ["| " + " | ".join(["(none)"] + [""] * (len(table.columns) - 1)) + " |"]
    return "\n".join([head, rule, *body])


def markdown(report: Report) -> str:
    parts = ["# D2K-Bench paired comparison", ""]
    if report.demonstration:
        parts += [f"> **{DEMO_BANNER}**", ""]
    if report.notes:
        parts += ["## Notes and rules applied", "", *[f"- {_md_escape(n)}" for n in report.notes], ""]
    for t in report.tables:
        parts += [f"## {t.title}", "", t.description, "", markdown_table(t), ""]
    return "\n".join(parts)


def csv_text(table: Table) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=table.raw_keys(), extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in table.rows:
        w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in table.raw_keys()})
    return buf.getvalue()


def _rel(path: Path) -> str:
    """A path relative to the working directory where it lies below it (portable JSON), as posix."""
    rel = os.path.relpath(path)
    return Path(rel if not rel.startswith("..") else path).as_posix()


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def json_document(report: Report) -> dict[str, Any]:
    """Everything for machines: runs, parameters, notes, every table with raw values."""
    return {
        "demonstration": report.demonstration,
        "suite_size": report.suite_size,
        "bootstrap": {"n_boot": report.config.n_boot, "seed": report.config.seed, "level": report.config.level,
                      "method": "percentile bootstrap over task slots, pairs resampled jointly"},
        "runs": [
            {"name": r.name, "condition": r.condition, "model": r.spec.model, "budget": r.spec.budget, "notes": r.spec.notes,
             "demonstration": r.spec.demonstration, "tasks": {t: _rel(p) for t, p in r.submissions.items()},
             "problems": r.notes}
            for r in report.runs
        ],
        "pairs": [{"guided": p.guided, "unguided": p.unguided} for p in report.pairs],
        "notes": report.notes,
        "tables": {
            t.id: {"title": t.title, "description": t.description, "columns": table_columns(t),
                   "rows": [{k: _clean(r.get(k)) for k in t.raw_keys()} for r in t.rows]}
            for t in report.tables
        },
    }


def table_columns(table: Table) -> list[dict[str, Any]]:
    return [{"key": c.key, "header": c.header, "format": c.fmt, "ci": c.ci, "n": c.n} for c in table.columns]


def json_text(report: Report) -> str:
    return json.dumps(json_document(report), indent=1, ensure_ascii=False) + "\n"
