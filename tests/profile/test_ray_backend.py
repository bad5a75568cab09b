"""The Ray backend on the CPU (a local Ray instance with two CPUs, one judge per worker): the same
records as the local backend, and a worker killed mid-job costs nothing: its job runs again, and
every (submission, workload) is in the results file exactly once."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from profile_paths import SUBMISSIONS, TOY_TASK

REPO = Path(__file__).resolve().parents[2]


def _cli(out: Path, subs: Path, *extra: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "d2k_profile.cli", str(subs), "--task", str(TOY_TASK), "--cpu", "--jobs", "2",
           "--out", str(out), "--no-prebuild", *extra]
    env = {**os.environ, "PYTHONPATH": str(REPO), "RAY_DISABLE_USAGE_STATS": "1"}
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]


def _submissions(tmp_path: Path) -> Path:
    """honest_torch, modelnew, and a copy of honest_torch that takes a few seconds to import."""
    subs = tmp_path / "subs"
    for name in ("honest_torch", "modelnew"):
        shutil.copytree(SUBMISSIONS / name, subs / name)
    slow = subs / "slow_torch"
    shutil.copytree(SUBMISSIONS / "honest_torch", slow)
    (slow / "submission.py").write_text("import time\ntime.sleep(8)\n" + (slow / "submission.py").read_text())
    return subs


def test_ray_matches_local_and_survives_a_killed_worker(tmp_path):
    subs = _submissions(tmp_path)
    local = _cli(tmp_path / "local", subs)
    text, _ = local.communicate(timeout=300)
    assert local.returncode == 0, text

    out = tmp_path / "ray"
    run = _cli(out, subs, "--backend", "ray")
    markers = out / "build" / "ray-workers"
    killed = None
    deadline = time.time() + 180
    while killed is None and time.time() < deadline and run.poll() is None:
        for m in markers.glob("*") if markers.exists() else []:
            if m.read_text().strip() == "slow_torch":
                os.kill(int(m.name), signal.SIGKILL)  # the Ray worker holding the slow job, mid-job
                killed = m.name
                break
        time.sleep(0.1)
    text, _ = run.communicate(timeout=300)
    assert killed, "the slow job's worker was never seen running: " + text[-2000:]
    assert run.returncode == 0, text[-3000:]

    ray_recs, local_recs = _records(out), _records(tmp_path / "local")
    keys = [r["key"] for r in ray_recs]
    assert len(keys) == len(set(keys)) == 3  # nothing lost, nothing duplicated
    assert {r["submission"]: r["status"] for r in ray_recs} == {r["submission"]: r["status"] for r in local_recs} \
        == {"honest_torch": "ok", "modelnew": "ok", "slow_torch": "ok"}
    drop = {"finished_at", "wall_s", "notes", "clocks", "rechecked_calls"}
    strip = lambda rs: sorted(({k: v for k, v in r.items() if k not in drop} for r in rs), key=lambda r: r["key"])  # noqa: E731
    assert strip(ray_recs) == strip(local_recs)
    # the killed job ran twice: once in the lost worker, once again; only the second is stored
    assert len(list((out / "store").rglob("*.json"))) == 3
    jobs = json.loads((out / "environment.json").read_text())["jobs"]
    assert sorted(j["slot"] == "ray:lost" for j in jobs if j["submission"] == "slow_torch") == [False, True]
    assert all(j["backend"] == "ray" for j in jobs) and len(jobs) == 4
