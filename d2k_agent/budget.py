"""The limits of one agent run and the shared spend of all of them.

A turn is one model response, parallel tool calls included. Every limit is checked *before* a
model call (:func:`stop_reason`), so a run never makes call N+1 on a budget of N turns, and a
cost limit stops the run before the call that would start over it.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Per-run limits (turns always; cost in USD and wall time in seconds when set) and the
    overall cost limit shared by every run of one invocation."""

    turns: int = 350
    max_cost: float | None = None
    wall_time_s: float | None = None
    max_total_cost: float | None = None

    def describe(self) -> str:
        parts = [f"{self.turns} turns per task"]
        if self.max_cost is not None:
            parts.append(f"max ${self.max_cost:g} per task")
        if self.max_total_cost is not None:
            parts.append(f"max ${self.max_total_cost:g} overall")
        if self.wall_time_s is not None:
            parts.append(f"wall time {self.wall_time_s:g} s per task")
        return ", ".join(parts)


class Ledger:
    """Dollars spent by every run of this invocation (thread-safe). Unknown costs are counted in
    ``unknown_calls``: with an overall limit set, runs refuse to start on an unpriced model."""

    def __init__(self, already_spent: float = 0.0):
        self._lock = threading.Lock()
        self.spent = already_spent
        self.unknown_calls = 0

    def add(self, cost: float | None) -> None:
        with self._lock:
            if cost is None:
                self.unknown_calls += 1
            else:
                self.spent += cost


def stop_reason(turns: int, spent: float | None, started: float, limits: Limits, ledger: Ledger | None,
                now: float | None = None) -> str | None:
    """Why the run must not make another model call, or None. Checked before every call."""
    now = time.monotonic() if now is None else now
    if turns >= limits.turns:
        return "turn_budget"
    if limits.max_cost is not None and spent is not None and spent >= limits.max_cost:
        return "cost_budget"
    if limits.max_total_cost is not None and ledger is not None and ledger.spent >= limits.max_total_cost:
        return "total_cost_budget"
    if limits.wall_time_s is not None and now - started >= limits.wall_time_s:
        return "wall_time"
    return None
