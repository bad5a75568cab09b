"""Progress on the terminal (rich): one line per (arm, task) with its turn count and state."""

from __future__ import annotations

import threading

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class RunProgress:
    def __init__(self, units: list[tuple[str, str]], turns: int, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[state]}"),
                            TimeElapsedColumn(), console=self.console)
        self.ids = {u: self.bar.add_task(f"{u[1]} ({u[0]})", total=turns, state="waiting") for u in units}
        self.lock = threading.Lock()

    def __enter__(self):
        self.bar.start()
        return self

    def __exit__(self, *exc):
        self.bar.stop()

    def event(self, kind: str, data: dict) -> None:
        key = (data.get("arm"), data.get("task"))
        if key not in self.ids:
            return
        with self.lock:
            tid = self.ids[key]
            if kind == "attempt":
                self.bar.update(tid, completed=0, state=f"attempt {data['attempt']}")
            elif kind == "turn":
                self.bar.update(tid, completed=data["turn"], state="running")
            elif kind == "evaluate":
                self.bar.update(tid, state="final evaluation")
            elif kind == "finished":
                rec = data["record"]
                self.bar.update(tid, state=f"{rec['end_reason']}, {rec['turns']} turns")
