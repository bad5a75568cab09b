"""End to end on the CPU: discovery, workers, statuses, SIGKILL + --resume, user errors."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from profile_paths import SUBMISSIONS, TOY_TASK

from d2k_profile import cli
from d2k_profile.discovery import discover

REPO = Path(__file__).resolve().parents[2]


def _cli(out: Path, *extra: str, submissions: Path = SUBMISSIONS) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "d2k_profile.cli", str(TOY_TASK), str(submissions), "--task", str(TOY_TASK), "--cpu",
           "--jobs", "1", "--out", str(out), *extra]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # SIGINT back to its default in the child: a test run started in the background (`cmd &` in a
    # script) inherits SIGINT ignored, and the CLI would never see the Ctrl-C this file sends
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


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


def test_limits_must_be_positive(capsys):
    import pytest

    for flag in ("--timeout", "--build-timeout", "--budget", "--target-rse", "--jobs"):
        for bad in ("0", "-1"):
            with pytest.raises(SystemExit) as exc:
                cli.main([str(TOY_TASK), "--cpu", flag, bad])
            assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "must be greater than 0" in err and "Traceback" not in err


def test_a_broken_task_toml_is_one_line_and_exit_2(tmp_path, capsys):
    task = tmp_path / "tasks" / "broken"
    task.mkdir(parents=True)
    (task / "task.toml").write_text('id = "broken"\n[interface\n')
    (task / "reference.py").write_text("def reference(x):\n    return x\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "submission.py").write_text("def run(x):\n    return x\n")
    assert cli.main([str(sub), "--task", str(task), "--cpu", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "TOML syntax error" in err and "Traceback" not in err


def test_a_second_run_on_the_same_out_says_who_holds_it(tmp_path, capsys):
    import os
    import socket

    from d2k_profile.lock import OutLock

    out = tmp_path / "o"
    with OutLock(out):
        assert cli.main([str(TOY_TASK), "--cpu", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"pid {os.getpid()} on {socket.gethostname()}, started" in err and "Traceback" not in err
    assert not (out / "results.jsonl").exists()  # the second run wrote nothing


def test_ctrl_c_exits_130_keeps_the_records_and_leaves_no_process(tmp_path):
    out = tmp_path / "out"
    results = out / "results.jsonl"
    # the fixture submissions plus a correct one that takes 10 s per call and is run last
    # (submissions of one folder run in name order), so a pair is still under way when the
    # interrupt comes, however fast the others ran
    subs = tmp_path / "subs"
    shutil.copytree(SUBMISSIONS, subs, ignore=shutil.ignore_patterns("__pycache__"))
    slow = subs / "zz_slow"
    slow.mkdir()
    (slow / "submission.py").write_text("import time\nimport torch\n\n\ndef run(x):\n    time.sleep(10)\n    e = torch.exp(x - x.amax(dim=-1, keepdim=True))\n    return e / e.sum(dim=-1, keepdim=True)\n")
    proc = _cli(out, submissions=subs)
    deadline = time.time() + 180
    while time.time() < deadline and (not results.exists() or results.read_text().count("\n") < 1):
        time.sleep(0.2)
    time.sleep(1.0)
    assert proc.poll() is None, "the run ended before the interrupt"
    os.kill(proc.pid, signal.SIGINT)
    text, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, text
    assert "interrupted" in text and "--resume" in text and "Traceback" not in text
    kept = results.read_text().splitlines()
    assert kept and all(line.endswith("}") for line in kept)
    # every sandbox (they run in their build folders) is gone. A killed process can take a moment
    # to leave /proc on a loaded machine (once seen after 1 s in a full CI run): wait up to 5 s,
    # well short of the 10 s each call of the slow submission takes, so an orphan still fails this
    gone_by = time.time() + 5.0
    leftovers = _sandboxes_in(out)
    while leftovers and time.time() < gone_by:
        time.sleep(0.2)
        leftovers = _sandboxes_in(out)
    assert leftovers == []


def _sandboxes_in(folder) -> list[str]:
    return [p for p in os.listdir("/proc") if p.isdigit() and _cwd(p).startswith(str(folder))]


def _cwd(pid: str) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


def test_plurals_in_the_progress_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "d2k_profile.cli", str(SUBMISSIONS / "honest_torch"), "--task", str(TOY_TASK), "--cpu",
                           "--out", str(tmp_path / "o")], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
                          timeout=300)
    assert "d2k-profile: 1 submission, 1 pair to run" in proc.stdout, proc.stdout + proc.stderr
