"""End to end on the CPU: discovery, workers, statuses, SIGKILL + --resume, user errors."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from profile_paths import SUBMISSIONS, TOY_TASK

from d2k_profile import cli
from d2k_profile.discovery import discover

REPO = Path(__file__).resolve().parents[2]


def _cli(out: Path, *extra: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "d2k_profile.cli", str(TOY_TASK), str(SUBMISSIONS), "--task", str(TOY_TASK), "--cpu", "--jobs", "1", "--out", str(out), *extra]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def test_sigkill_then_resume_loses_and_duplicates_nothing(tmp_path):
    out = tmp_path / "out"
    results = out / "results.jsonl"
    first = _cli(out)
    deadline = time.time() + 120
    while time.time() < deadline and (not results.exists() or results.read_text().count("\n") < 2):
        time.sleep(0.2)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    before = [json.loads(line) for line in results.read_text().splitlines()]
    assert 2 <= len(before) < 4, "the kill should land mid-run"
    second = _cli(out, "--resume")
    text, _ = second.communicate(timeout=240)
    assert second.returncode == 0, text
    assert f"{len(before)} already done" in text
    after = [json.loads(line) for line in results.read_text().splitlines()]
    keys = [d["key"] for d in after]
    assert len(keys) == len(set(keys)) == 4
    assert after[: len(before)] == before  # finished records untouched
    status = {d["submission"]: d["status"] for d in after}
    assert status == {"expert": "ok", "honest_torch": "ok", "modelnew": "ok", "honest_cuda": "skipped"}
    expert = next(d for d in after if d["submission"] == "expert")
    assert expert["seeds_checked"] == 3 and expert["rechecked_calls"] > 0 and expert["weak_workload"] == []
    assert "timing needs a GPU" in " ".join(expert["notes"])
    assert (out / "summary.csv").exists() and (out / "environment.json").exists()
    assert "timing needs a GPU" in text


def test_user_errors_exit_2_without_traceback(tmp_path, capsys):
    assert cli.main([str(tmp_path / "missing"), "--cpu", "--out", str(tmp_path / "o1")]) == 2
    assert cli.main([str(SUBMISSIONS / "honest_torch"), "--task", "no_such_task", "--cpu", "--out", str(tmp_path / "o2")]) == 2
    assert cli.main([str(TOY_TASK), "--workloads", "nope", "--cpu", "--out", str(tmp_path / "o3")]) == 2
    (tmp_path / "o4").mkdir()
    (tmp_path / "o4" / "results.jsonl").write_text('{"x": 1}\n')
    assert cli.main([str(TOY_TASK), "--cpu", "--out", str(tmp_path / "o4")]) == 2
    err = capsys.readouterr().err
    assert "no such file" in err and "unknown task" in err and "unknown workload" in err and "--resume" in err
    assert "Traceback" not in err


def test_discovery_rules(tmp_path):
    subs = discover([str(TOY_TASK)], tmp_path)
    assert [(s.name, s.role, s.language) for s in subs] == [("expert", "expert", "triton")]
    subs = discover([str(SUBMISSIONS)], tmp_path, task=str(TOY_TASK), self_check=True)
    got = {s.name: (s.role, s.language) for s in subs}
    assert got == {"honest_cuda": ("submission", "cuda"), "honest_torch": ("submission", "python"),
                   "modelnew": ("submission", "python"), "reference-self": ("reference", "python")}
    # corpus/<task>/<variant> and runs/<run>/<task>: the task comes from the folder names
    root = tmp_path / "tasks"
    (root / "toy_softmax").mkdir(parents=True)
    (root / "toy_softmax" / "task.toml").write_text((TOY_TASK / "task.toml").read_text())
    for d in (tmp_path / "corpus" / "toy_softmax" / "v1", tmp_path / "runs" / "r1" / "toy_softmax"):
        d.mkdir(parents=True)
        (d / "submission.py").write_text("def run(x):\n    return x\n")
    subs = discover([str(tmp_path / "corpus"), str(tmp_path / "runs")], root)
    assert sorted((s.task_id, s.name) for s in subs) == [("toy_softmax", "r1"), ("toy_softmax", "v1")]
