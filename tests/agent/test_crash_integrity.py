"""Crash policy (an infrastructure failure or a killed process is re-run from scratch as attempt 2,
nothing double-counted) and the digest check (the workspace cannot change the reference)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agent_helpers import REPO, busy_script, config, machine
from fake_server import Step

from d2k_agent import evaluation, final, runner, snapshots, transcript
from d2k_agent.layout import RunDir

USAGE = {"input_tokens": 1000, "output_tokens": 100}
PER_TURN = (1000 * 3 + 100 * 15) / 1e6  # 0.0045 with fake-model's prices


def _priced_busy(api):
    api.steps = busy_script()
    for s in api.steps:
        s.usage = USAGE


def test_infrastructure_failure_is_rerun_as_attempt_2_and_nothing_double_counted(tmp_path, api, keys):
    _priced_busy(api)
    api.fail_once = {2}  # the third call fails with HTTP 500; no SDK retries: an infrastructure failure
    cfg = config(tmp_path / "i-guided", api, turns=3, evaluate=False, max_retries=0)
    [res] = runner.execute([cfg], machine(tmp_path))
    td = RunDir(tmp_path / "i-guided").task("softmax")
    assert res.status == "finished" and res.attempt == 2
    first = transcript.read(td.attempt(1) / "transcript.jsonl")  # the partial transcript is kept
    assert [r["turn"] for r in first if r["type"] == "response"] == [1, 2]
    assert first[-1]["type"] == "end" and first[-1]["kind"] == "infra" and first[-1]["error_kind"] == "api_error"
    rec = res.record
    assert (rec["attempt"], rec["turns"], rec["end_reason"]) == (2, 3, "turn_budget")  # attempt 2 started from scratch
    assert rec["cost_usd"] == pytest.approx(3 * PER_TURN)
    assert [a["turns"] for a in rec["attempts"]] == [2, 3]
    assert rec["all_attempts"]["turns"] == 5 and rec["all_attempts"]["cost_usd"] == pytest.approx(5 * PER_TURN)
    assert rec["all_attempts"]["usage"]["input_tokens"] == 5000
    # attempt 2 saw a fresh conversation: its first request holds only the task prompt
    reqs = api.model_requests()
    assert len(reqs) == 6 and len(reqs[3]["body"]["messages"]) == 1
    # each attempt has its own snapshot branch; attempt 2's workspace started from the seed again
    assert snapshots.branches(td.snapshots) == ["attempt-1", "attempt-2"]
    assert [s.turn for s in snapshots.history(td.snapshots, "attempt-2")] == [0, 1, 2, 3]


def _cli(args: list[str], api_url: str) -> subprocess.Popen:
    env = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "d2k_agent.cli", *args], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def test_killed_run_is_rerun_as_attempt_2_on_resume(tmp_path, api):
    _priced_busy(api)
    api.hang_once = {2}  # the third model call hangs: the process is killed while waiting for it
    out = tmp_path / "runs" / "k"
    work = tmp_path / "work"
    proc = _cli(["run", "--tasks", "softmax", "--arm", "guided", "--model", "fake-model", "--base-url", api.url, "--turns", "4",
                 "--out", str(out), "--cpu", "--sandbox", "none", "--no-eval", "--work-root", str(work),
                 "--prices", str(Path(__file__).parent / "prices.toml")], api.url)
    td = RunDir(Path(f"{out}-guided")).task("softmax")
    log = td.attempt(1) / "transcript.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and sum(r["type"] == "tools" for r in transcript.read(log)) < 2:
        time.sleep(0.2)
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert final.validate(td)[1] == "no final record"  # a killed run is not finished, whatever files exist
    st = runner.status([str(out)])
    assert [(s.task, s.state, s.attempts, s.turns) for s in st] == [("softmax", "unfinished", 1, 2)]
    second = _cli(["resume", str(out), "--cpu", "--work-root", str(work)], api.url)
    text, _ = second.communicate(timeout=180)
    assert second.returncode == 0, text
    rec, why = final.validate(td)
    assert why == ""
    assert (rec["attempt"], rec["turns"], rec["end_reason"]) == (2, 4, "turn_budget")
    assert [a["turns"] for a in rec["attempts"]] == [2, 4]
    assert rec["attempts"][0]["outcome"].startswith("died")
    assert rec["cost_usd"] == pytest.approx(4 * PER_TURN) and rec["all_attempts"]["cost_usd"] == pytest.approx(6 * PER_TURN)
    # a resumed run never continues a conversation: attempt 2's first call carries only the task
    assert len(api.model_requests()[3]["body"]["messages"]) == 1
    # resume again: nothing to do, nothing re-run or re-counted
    n = len(api.model_requests())
    third = _cli(["resume", str(out), "--cpu", "--work-root", str(work)], api.url)
    assert third.wait(timeout=120) == 0 and len(api.model_requests()) == n
    assert final.validate(td)[0]["digest"] == rec["digest"]


def test_collect_lists_each_finished_task_once(tmp_path, api, keys):
    """Re-evaluating or re-running a task replaces its records in profile.jsonl; never appends."""
    api.steps = [Step([{"name": "submit", "input": {}}])]
    cfg = config(tmp_path / "c-guided", api, evaluate=False)
    runner.execute([cfg], machine(tmp_path))
    run = RunDir(tmp_path / "c-guided")
    ev = run.eval_dir("softmax") / "profile"
    ev.mkdir(parents=True)
    (ev / "results.jsonl").write_text(json.dumps({"task": "softmax", "workload": "smoke", "status": "ok"}) + "\n")
    final.update_evaluation(run.task("softmax"), {"profile": {"status": "done"}})
    for _ in range(3):
        evaluation.collect(run)
    assert len(run.profile.read_text().splitlines()) == 1


def test_workspace_copy_of_the_reference_changed_is_recorded(tmp_path, api, keys):
    api.steps = [Step([{"name": "bash", "input": {"command": "echo 'def reference(x): return x' >> reference.py"}}]),
                 Step([{"name": "submit", "input": {}}])]
    [res] = runner.execute([config(tmp_path / "w-guided", api, evaluate=False)], machine(tmp_path))
    integ = res.record["integrity"]
    assert integ == {"trusted_changed": [], "harness_changed": ["reference.py"], "scorable": True}
    assert "reference.py" not in res.record["files"]  # never exported as part of the submission


def test_changed_task_reference_refuses_scoring(tmp_path, api, keys):
    """Without a sandbox an agent could reach the task folder itself: the digest check catches it
    and nothing is scored (the final evaluation would have compared against the altered reference)."""
    root = tmp_path / "tasks"
    shutil.copytree(REPO / "tasks" / "softmax", root / "softmax")
    target = root / "softmax" / "reference.py"
    api.steps = [Step([{"name": "bash", "input": {"command": f"echo '# harmless?' >> {target}"}}]), Step([{"name": "submit", "input": {}}])]
    [res] = runner.execute([config(tmp_path / "t-guided", api, tasks_root=str(root))], machine(tmp_path))
    rec = res.record
    assert rec["integrity"]["trusted_changed"] == ["reference.py"] and rec["integrity"]["scorable"] is False
    assert rec["evaluation"]["profile"]["status"] == "refused" and rec["evaluation"]["analyze"]["status"] == "refused"
    assert RunDir(tmp_path / "t-guided").profile.read_text() == ""


def test_only_a_validated_final_record_counts_as_finished(tmp_path, api, keys):
    api.steps = [Step([{"name": "editor", "input": {"command": "create", "path": "submission.py", "file_text": "def run(x):\n    return x\n"}}]),
                 Step([{"name": "submit", "input": {}}])]
    runner.execute([config(tmp_path / "v-guided", api, evaluate=False)], machine(tmp_path))
    td = RunDir(tmp_path / "v-guided").task("softmax")
    assert final.validate(td)[1] == ""
    good = td.final.read_text()
    td.final.write_text(good.replace('"turns": 2', '"turns": 1'))  # an edited record
    assert final.validate(td)[1] == "final record digest does not match its content"
    td.final.write_text(good[: len(good) // 2])  # a torn record
    assert final.validate(td)[1] == "final record unreadable"
    td.final.write_text(good)
    (td.root / "submission.py").write_text("def run(x):\n    return x * 2\n")  # the submission changed afterwards
    assert "submission.py is missing or changed" in final.validate(td)[1]
    assert [s.state for s in runner.status([str(tmp_path / "v")])] == ["unfinished"]
