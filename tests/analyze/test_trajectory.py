"""d2k-analyze --trajectory: every snapshot of an agent run analysed; first-implemented turns."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from d2k_agent.snapshots import Snapshots
from d2k_analyze.trajectory import TrajectoryError, trajectory
from d2k_spec.catalogue import load_catalogue
from d2k_spec.task import default_tasks_root, load_task

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "corpus" / "softmax"


def _run_folder(tmp_path: Path) -> Path:
    """A task folder as d2k-agent leaves it: turn 0 the seeded workspace, turn 2 the three-pass
    kernel, turn 5 the online-softmax kernel, turn 7 back to the three-pass kernel."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "reference.py").write_text((REPO / "tasks" / "softmax" / "reference.py").read_text())
    (ws / "submission.py").write_text("def run(x):\n    raise NotImplementedError\n")
    task_dir = tmp_path / "runs" / "r-guided" / "softmax"
    snaps = Snapshots(task_dir / ".agent" / "snapshots.git", ws, attempt=1)
    snaps.commit(0)
    for turn, variant in ((2, "naive_triton"), (5, "online_triton"), (7, "naive_triton")):
        shutil.copyfile(CORPUS / variant / "submission.py", ws / "submission.py")
        assert snaps.commit(turn)
    assert snaps.commit(8) is None  # nothing changed: no snapshot
    return task_dir


def test_first_implemented_turn_and_whether_it_stayed(tmp_path):
    task = load_task(default_tasks_root() / "softmax")
    tr = trajectory(_run_folder(tmp_path), task, load_catalogue())
    assert [s.turn for s in tr.snapshots] == [0, 2, 5, 7] and tr.branch == "attempt-1"
    items = {i.item: i for i in tr.items}
    online = items["online_softmax"]
    # (the exact verdict of the three-pass kernel, absent or not assessed, is the analyzer's business)
    assert (online.first_implemented, online.stayed) == (5, False) and online.final != "implemented"
    assert [t for t, _ in online.changes] == [0, 5, 7] and online.changes[1] == (5, "implemented")
    fp32 = items["fp32_accumulation"]
    assert (fp32.first_implemented, fp32.stayed, fp32.final) == (2, True, "implemented")
    assert items["cache_policy"].first_implemented is None and items["cache_policy"].stayed is None
    scores = [s.score for s in tr.snapshots]
    assert scores[2] > scores[1] > scores[0] and scores[3] == scores[1]


def test_not_a_run_folder_is_a_clear_error(tmp_path):
    task = load_task(default_tasks_root() / "softmax")
    with pytest.raises(TrajectoryError, match="no snapshots"):
        trajectory(tmp_path, task, load_catalogue())


def test_cli_trajectory_flag(tmp_path, capsys):
    import json

    from d2k_analyze import cli

    folder = _run_folder(tmp_path)
    out = tmp_path / "traj.jsonl"
    assert cli.main(["--trajectory", str(folder), "--format", "jsonl", "--out", str(out)]) == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    item = next(r for r in rows if r["row_type"] == "item" and r["item"] == "online_softmax")
    assert (item["first_implemented"], item["stayed"]) == (5, False)
    assert [r["turn"] for r in rows if r["row_type"] == "snapshot"] == [0, 2, 5, 7]
    assert cli.main(["--trajectory", str(folder)]) == 0
    assert "online_softmax" in capsys.readouterr().out
    assert cli.main(["--trajectory", str(tmp_path)]) == 2
    assert "no snapshots" in " ".join(capsys.readouterr().err.split())  # the console may wrap the line
