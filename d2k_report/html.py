"""The report as one self-contained HTML page: inline CSS, inline SVG plots, no scripts, no network.

Every table is a ``<section id="table-<id>">`` and every plot an ``<figure id="...">`` holding an
``<svg id="plot-...">``, so that tests (and readers following links) find them by id.
"""

from __future__ import annotations

from html import escape

from .formatting import DEMO_BANNER, cell_parts
from .model import Report, Table
from .plots import Figure, report_figures

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 1320px; color: #1d1d1f; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: .2em; } h2 { margin-top: 1.8em; border-bottom: 1px solid #ddd; }
.demo { background: #fff3cd; border: 2px solid #d9a400; padding: .6em 1em; font-weight: 600; }
.desc { color: #555; max-width: 1100px; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: .25em .55em; text-align: left; vertical-align: top; }
th { background: #f5f5f7; } td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; }
.ci { color: #666; font-size: 11px; white-space: normal; }  /* intervals may wrap: tables fit 1400 px */
tr.pair td { background: #eef4fb; font-weight: 600; }
td.bad { background: #fde4e4; } td.good { background: #e3f6e5; } td.meh { background: #fff4d6; }
figure { margin: 1em 0; } figcaption { color: #555; font-size: 12px; }
nav a { margin-right: 1em; }
"""

STATUS_CLASS = {
    "still missing under guidance": "bad", "regressed under guidance": "bad", "guided run not assessed": "meh",
    "fixed by guidance": "good", "implemented in both": "good",
}
NUMERIC = {"int", "rate", "score", "pct", "speedup", "ratio", "delta", "value"}


def _table(t: Table) -> str:
    head = "".join(f"<th>{escape(c.header)}</th>" for c in t.columns)
    body = []
    for r in t.rows:
        cells = []
        for c in t.columns:
            text, detail = cell_parts(r, c)
            cls = "num" if c.fmt in NUMERIC else STATUS_CLASS.get(text, "")
            inner = escape(text) + (f'<br><span class="ci">{escape(detail)}</span>' if detail else "")
            cells.append(f'<td class="{cls}">{inner}</td>' if cls else f"<td>{inner}</td>")
        body.append(f'<tr class="{escape(str(r.get("kind", "")))}">' + "".join(cells) + "</tr>")
    if not t.rows:
        body.append(f'<tr><td colspan="{len(t.columns)}">(none)</td></tr>')
    return (f'<section id="table-{t.id}"><h2>{escape(t.title)}</h2><p class="desc">{escape(t.description)}</p>'
            f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div></section>')


def _figure(f: Figure) -> str:
    return f'<figure id="{escape(f.id)}-figure">{f.svg}<figcaption>{escape(f.title)}: {escape(f.caption)}</figcaption></figure>'


def render(report: Report) -> str:
    figures = report_figures(report)
    by_prefix = lambda p: "\n".join(_figure(f) for f in figures if f.id.startswith(p))  # noqa: E731
    parts = ["<h1>D2K-Bench paired comparison</h1>"]
    if report.demonstration:
        parts.append(f'<p class="demo">{escape(DEMO_BANNER)}</p>')
    runs = ", ".join(f"{r.name} ({r.condition}, {r.spec.model})" for r in report.runs)
    parts.append(f"<p>Runs: {escape(runs)}. Pairs: {escape(', '.join(p.label for p in report.pairs) or 'none')}.</p>")
    nav = "".join(f'<a href="#table-{t.id}">{escape(t.title)}</a>' for t in report.tables)
    parts.append(f'<nav>{nav}<a href="#plots">Plots</a></nav>')
    if report.notes:
        parts.append('<section id="notes"><h2>Notes and rules applied</h2><ul>'
                     + "".join(f"<li>{escape(n)}</li>" for n in report.notes) + "</ul></section>")
    tables = {t.id: _table(t) for t in report.tables}
    parts += [tables.pop("coverage", ""), tables.pop("headline", "")]
    parts.append(f'<section id="plots"><h2>Plots</h2>{by_prefix("plot-speedup")}{by_prefix("plot-ps")}{by_prefix("plot-impl")}</section>')
    parts += [tables.pop("per_task", ""), tables.pop("design_items", ""), tables.pop("properties", "")]
    parts.append(by_prefix("plot-property"))
    parts += list(tables.values())
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>D2K-Bench paired comparison{' (DEMONSTRATION)' if report.demonstration else ''}</title>"
            f"<style>{CSS}</style></head><body>\n" + "\n".join(p for p in parts if p) + "\n</body></html>\n")
