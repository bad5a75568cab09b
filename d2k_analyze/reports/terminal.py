"""The default terminal summary, rendered with rich (colours only where the output is a terminal)."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from .document import Block, Bullets, Heading, Paragraph, Table, build
from .result import Report

STYLES = {
    "implemented": "green", "launched": "green", "partial": "yellow",
    "absent": "red", "dead": "red dim", "not_assessed": "dim",
}


def _table(t: Table) -> RichTable:
    table = RichTable(title=t.title or None, title_justify="left", show_lines=False, expand=False)
    for h in t.headers:
        table.add_column(h, overflow="fold")
    for row in t.rows:
        table.add_row(*(Text(c, style=STYLES.get(c, "")) if i in t.styled else Text(c) for i, c in enumerate(row)))
    return table


def print_blocks(blocks: list[Block], console: Console) -> None:
    for b in blocks:
        if isinstance(b, Heading):
            console.print(Text(b.text, style="bold underline" if b.level == 1 else "bold cyan"))
        elif isinstance(b, Paragraph):
            console.print(Text(b.text))
        elif isinstance(b, Bullets):
            for item in b.items:
                console.print(Text(f"  • {item}", style="yellow"))
        elif isinstance(b, Table):
            console.print(_table(b))


def render(report: Report, console: Console | None = None, width: int = 160) -> str:
    """Print to ``console`` if given (returns ""), else return plain text (for ``--out`` files)."""
    if console is not None:
        print_blocks(build(report), console)
        return ""
    buf = io.StringIO()
    print_blocks(build(report), Console(file=buf, width=width, no_color=True, highlight=False))
    return buf.getvalue()
