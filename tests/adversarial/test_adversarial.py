"""The adversarial and fault suite: each submission in cases/ tries one cheat or fault and must
get the status in expected.toml. Here (CPU) the ``cpu`` column (``cpu_without_nvcc`` where nvcc is
missing); benchmarks/profile_h200.sh runs the same suite on a GPU against the ``gpu`` column."""

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
TOY_TASK = REPO / "tests" / "profile" / "fixtures" / "toy_softmax"
EXPECTED = tomllib.loads((HERE / "expected.toml").read_text())
ISSUE_11_CLASSES = {"frames", "patch", "forge", "hidden_library_op", "hidden_stream", "slow_reference", "crosscheck_gap"}


def cpu_expected(case: dict) -> str:
    has_nvcc = shutil.which("nvcc") or Path("/usr/local/cuda/bin/nvcc").is_file()
    return case["cpu"] if has_nvcc or "cpu_without_nvcc" not in case else case["cpu_without_nvcc"]


def test_suite_has_every_case_and_every_cheat_class():
    cases = {p.name for p in (HERE / "cases").iterdir() if (p / "submission.py").is_file()}
    assert cases == set(EXPECTED) and len(cases) >= 29
    assert {c["class"] for c in EXPECTED.values() if "class" in c} == ISSUE_11_CLASSES
    assert sum("class" in c for c in EXPECTED.values()) >= 10
    assert all(c["cpu"] != "ok" for name, c in EXPECTED.items() if name != "honest")


def test_every_case_gets_its_cpu_status(tmp_path):
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "d2k_profile.cli", str(HERE / "cases"), "--task", str(TOY_TASK), "--cpu",
           "--timeout", "20", "--jobs", "3", "--out", str(out)]
    proc = subprocess.run(cmd, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = {json.loads(line)["submission"]: json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()}
    wrong = {name: (got.get(name, {}).get("status"), cpu_expected(exp), got.get(name, {}).get("reason", "")[-300:])
             for name, exp in EXPECTED.items() if got.get(name, {}).get("status") != cpu_expected(exp)}
    assert not wrong, wrong
    env = json.loads((out / "environment.json").read_text())
    assert "enforced" in env["sandbox"]  # what the sandbox enforced on this machine is on record


TASK_CASES = HERE / "task_cases"
TASK_EXPECTED = tomllib.loads((TASK_CASES / "expected.toml").read_text())


def test_task_cases_get_their_cpu_status(tmp_path):
    """Cases against a real task (task_cases/<task>/<case>): the task comes from the folder layout.
    rope/untouched_qk returns right values in new tensors but leaves the in-place inputs as they
    were: the judge reads the q and k buffers, so it is incorrect, not ok."""
    cases = {p.parent.name: p.parent for p in TASK_CASES.glob("*/*/submission.py")}
    assert cases.keys() == TASK_EXPECTED.keys()
    assert all(cases[name].parent.name == exp["task"] for name, exp in TASK_EXPECTED.items())
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "d2k_profile.cli", *map(str, cases.values()), "--cpu", "--timeout", "60", "--out", str(out)]
    proc = subprocess.run(cmd, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=600)
    got = {json.loads(line)["submission"]: json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()}
    wrong = {name: (got.get(name, {}).get("status"), exp["cpu"], got.get(name, {}).get("reason", "")[-300:])
             for name, exp in TASK_EXPECTED.items() if got.get(name, {}).get("status") != exp["cpu"]}
    assert not wrong, (wrong, proc.stdout[-2000:], proc.stderr[-2000:])
    assert all("does not hold the in-place result" in got[name]["reason"] for name in TASK_EXPECTED)
