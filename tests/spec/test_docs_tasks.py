"""docs/tasks.md: 26 tasks, 85 timed workloads, and the rows marked as present are exactly the task
folders of this repository, with their workload counts."""

from __future__ import annotations

import re
from pathlib import Path

from d2k_spec.task import load_tasks

DOC = (Path(__file__).resolve().parents[2] / "docs" / "tasks.md").read_text()
ROW = re.compile(r"^\| (\d+) \| `([a-z_0-9]+)`( ✔)? \| [^|]+ \| (\d+): ")


def test_the_suite_table_and_what_exists():
    rows = [m.groups() for line in DOC.splitlines() if (m := ROW.match(line))]
    assert [int(r[0]) for r in rows] == list(range(1, 27))
    assert sum(int(r[3]) for r in rows) == 85
    present = {r[1]: int(r[3]) for r in rows if r[2]}
    tasks = load_tasks()
    assert set(present) == set(tasks)
    for task_id, n in present.items():
        assert len(tasks[task_id].workloads) == n, task_id
