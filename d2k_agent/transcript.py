"""The transcript: one JSON Lines file per attempt, appended and fsynced as the run goes.

Record types, in order: ``start`` (prompt, tools, limits), then per turn a ``response`` line (the
model's message and its token usage, written as soon as it arrives, so a killed run still
accounts for every call it paid for) and a ``tools`` line (the tool calls' results), and finally
``end`` (why it stopped). An attempt with no ``end`` line died: the crash policy reads that.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .pricing import Usage, add_costs

TRANSCRIPT = "transcript.jsonl"


class Transcript:
    """Append-only writer (one ``os.write`` per line: a kill tears at most the last line)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, record_type: str, **data) -> None:
        line = json.dumps({"type": record_type, "time": time.time(), **data}, default=str) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
            os.fsync(fd)
        finally:
            os.close(fd)


def read(path: Path) -> list[dict]:
    """Every complete line (a torn last line from a kill is ignored)."""
    out = []
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        return out
    for line in text.splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def totals(records: list[dict]) -> tuple[int, Usage, float | None]:
    """(turns, tokens, cost) of one attempt's transcript: each ``response`` line counted once."""
    turns, usage, cost = 0, Usage(), 0.0
    for r in records:
        if r.get("type") == "response":
            turns += 1
            usage = usage + Usage.from_dict(r.get("usage"))
            cost = add_costs(cost, r.get("cost_usd"))
    return turns, usage, cost


def ended(records: list[dict]) -> dict | None:
    return next((r for r in reversed(records) if r.get("type") == "end"), None)
