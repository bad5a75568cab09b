"""The adversarial and fault suite: each submission in cases/ tries one cheat or fault and must
get the status in expected.toml. Here (CPU) the ``cpu`` column; benchmarks/profile_h200.sh runs the
same suite on a GPU against the ``gpu`` column."""

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
TOY_TASK = REPO / "tests" / "profile" / "fixtures" / "toy_softmax"
EXPECTED = tomllib.loads((HERE / "expected.toml").read_text())


def test_suite_has_every_case():
    cases = {p.name for p in (HERE / "cases").iterdir() if (p / "submission.py").is_file()}
    assert cases == set(EXPECTED) and len(cases) >= 15


def test_every_case_gets_its_cpu_status(tmp_path):
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "d2k_profile.cli", str(HERE / "cases"), "--task", str(TOY_TASK), "--cpu",
           "--timeout", "8", "--jobs", "3", "--out", str(out)]
    proc = subprocess.run(cmd, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = {json.loads(line)["submission"]: json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()}
    wrong = {name: (got.get(name, {}).get("status"), exp["cpu"], got.get(name, {}).get("reason", "")[:200])
             for name, exp in EXPECTED.items() if got.get(name, {}).get("status") != exp["cpu"]}
    assert not wrong, wrong
