"""d2k-analyze --trajectory: every snapshot of an agent run analysed; first-implemented turns."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from d2k_agent.snapshots import Snapshots
from d2k_analyze.analysis import analyze_submission
from d2k_analyze.scoring import score_submission
from d2k_analyze.trajectory import SnapshotScore, TrajectoryError, item_trajectories, trajectory
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


def _direct(variant: str, task, catalogue) -> dict[str, str]:
    p = CORPUS / variant
    sc = score_submission(analyze_submission(str(p), p, "softmax", catalogue), task, catalogue)
    return {v.item: v.final.value for v in sc.items}


def test_every_snapshot_is_scored_like_the_submission_itself(tmp_path):
    """Each snapshot gets exactly the verdicts the analyzer gives the same kernel directly (the
    reference copy in the workspace changes nothing), whatever those verdicts are."""
    task, catalogue = load_task(default_tasks_root() / "softmax"), load_catalogue()
    tr = trajectory(_run_folder(tmp_path), task, catalogue)
    assert [s.turn for s in tr.snapshots] == [0, 2, 5, 7] and tr.branch == "attempt-1"
    naive, online = _direct("naive_triton", task, catalogue), _direct("online_triton", task, catalogue)
    assert [s.items for s in tr.snapshots[1:]] == [naive, online, naive]
    assert naive != online
    assert item_trajectories(task, list(tr.snapshots)) == tr.items


def test_first_implemented_turn_and_whether_it_stayed():
    task = load_task(default_tasks_root() / "softmax")
    ids = [d.id for d in task.design]
    a, b = ids[0], ids[1]

    def snap(turn, **verdicts):
        return SnapshotScore(turn, f"c{turn}", None, {i: verdicts.get(i, "absent") for i in ids})

    snaps = [snap(0), snap(2, **{a: "implemented"}), snap(5, **{a: "partial", b: "implemented"}),
             snap(7, **{a: "implemented", b: "implemented"})]
    got = {t.item: t for t in item_trajectories(task, snaps)}
    assert (got[a].first_implemented, got[a].stayed, got[a].final) == (2, False, "implemented")
    assert got[a].changes == ((0, "absent"), (2, "implemented"), (5, "partial"), (7, "implemented"))
    assert (got[b].first_implemented, got[b].stayed, got[b].final) == (5, True, "implemented")
    assert (got[ids[2]].first_implemented, got[ids[2]].stayed) == (None, None)


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
    assert {r["item"] for r in rows if r["row_type"] == "item"} == {d.id for d in load_task(default_tasks_root() / "softmax").design}
    assert [r["turn"] for r in rows if r["row_type"] == "snapshot"] == [0, 2, 5, 7]
    assert cli.main(["--trajectory", str(folder)]) == 0
    assert "first implemented" in capsys.readouterr().out
    assert cli.main(["--trajectory", str(tmp_path)]) == 2
    assert "no snapshots" in " ".join(capsys.readouterr().err.split())  # the console may wrap the line
