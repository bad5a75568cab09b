"""Markdown: the report blocks as GitHub-flavoured Markdown (tables, headings, lists)."""

from __future__ import annotations

from .document import Block, Bullets, Heading, Paragraph, Table, build
from .result import Report


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ") or " "


def render_blocks(blocks: list[Block]) -> str:
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append(f"{'#' * b.level} {b.text}\n")
        elif isinstance(b, Paragraph):
            out.append(f"{b.text}\n")
        elif isinstance(b, Bullets):
            out.append("\n".join(f"- {_cell(i)}" for i in b.items) + "\n")
        elif isinstance(b, Table):
            lines = [f"**{b.title}**\n"] if b.title else []
            lines.append("| " + " | ".join(_cell(h) for h in b.headers) + " |")
            lines.append("|" + "---|" * len(b.headers))
            lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in b.rows]
            out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def render(report: Report) -> str:
    return render_blocks(build(report))
