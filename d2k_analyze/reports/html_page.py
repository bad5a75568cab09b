"""A self-contained HTML page: inline CSS, no scripts, no network (safe to attach or e-mail)."""

from __future__ import annotations

from html import escape

from .document import Block, Bullets, Heading, Paragraph, Table, build
from .result import Report

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #1d1d1f; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; font-family: monospace; }
table { border-collapse: collapse; margin: .6em 0 1.2em; width: 100%; }
caption { text-align: left; font-weight: 600; padding: .3em 0; }
th, td { border: 1px solid #ddd; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f5f5f7; }
td.implemented, td.launched { background: #e3f6e5; } td.partial { background: #fff4d6; }
td.absent, td.dead { background: #fde4e4; } td.not_assessed { background: #eef0f4; color: #555; }
"""


def _table(t: Table) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in t.headers)
    body = []
    for row in t.rows:
        cells = []
        for i, c in enumerate(row):
            cls = f' class="{escape(c)}"' if i in t.styled else ""
            cells.append(f"<td{cls}>{escape(c)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    caption = f"<caption>{escape(t.title)}</caption>" if t.title else ""
    return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render_blocks(blocks: list[Block]) -> str:
    parts = []
    for b in blocks:
        if isinstance(b, Heading):
            parts.append(f"<h{b.level}>{escape(b.text)}</h{b.level}>")
        elif isinstance(b, Paragraph):
            parts.append(f"<p>{escape(b.text)}</p>")
        elif isinstance(b, Bullets):
            parts.append("<ul>" + "".join(f"<li>{escape(i)}</li>" for i in b.items) + "</ul>")
        elif isinstance(b, Table):
            parts.append(_table(b))
    return "\n".join(parts)


def render(report: Report) -> str:
    body = render_blocks(build(report))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<title>D2K-Bench static analysis</title>"
        f"<style>{CSS}</style></head><body>\n{body}\n</body></html>\n"
    )
