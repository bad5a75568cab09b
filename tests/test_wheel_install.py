"""A non-editable install works anywhere: the wheel carries the property catalogue and the tasks.

Builds the wheel from a copy of the checkout, installs it into a fresh virtual environment in a
temporary folder *outside the checkout*, and runs the commands a new user runs first, from a
working folder that is not the checkout either: ``d2k-tasks validate``, ``d2k-analyze`` and
``d2k-profile --smoke`` on a copied submission laid out as ``<task>/<variant>``, and
``d2k-report`` on a copied run. The venv reuses this interpreter's site-packages
(``--system-site-packages``, ``--no-deps``, ``--no-index``): nothing big is installed twice, and
nothing is downloaded. About 30 s.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from d2k_spec.task import load_tasks

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def copy_sources(dest: Path) -> None:
    """What the wheel is built from: the packaging files, every listed package, the data."""
    dest.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, dest / name)
    tops = {p.split(".")[0] for p in PYPROJECT["tool"]["setuptools"]["packages"]}
    data = set(PYPROJECT["tool"]["setuptools"]["package-dir"].values())
    for name in sorted(tops | data):
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(cmd)} exited {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_wheel_installed_outside_the_checkout_runs_every_command(tmp_path):
    assert not tmp_path.resolve().is_relative_to(ROOT)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "D2K_SUITE", "VIRTUAL_ENV")}
    copy_sources(tmp_path / "src")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
         "-w", str(tmp_path / "dist"), str(tmp_path / "src")], tmp_path, env)
    [wheel] = list((tmp_path / "dist").glob("d2k_bench-*.whl"))
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], tmp_path, env)
    bin_dir = venv / "bin"
    run([str(bin_dir / "python"), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)], tmp_path, env)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    work = tmp_path / "work"
    sub = work / "somewhere" / "softmax" / "mine"
    shutil.copytree(ROOT / "corpus" / "softmax" / "online_triton", sub)

    where = run([str(bin_dir / "python"), "-c", "import d2k_spec.locations as l; print(l.bundled_root())"], work, env)
    assert Path(where.stdout.strip()).is_relative_to(venv), "the wheel's copy must be used, not the checkout"

    out = run([str(bin_dir / "d2k-tasks"), "validate"], work, env).stdout
    tasks = load_tasks(ROOT / "tasks")  # the checkout's suite, which the wheel must carry whole
    timed = sum(len(t.workloads) for t in tasks.values())
    assert len(tasks) >= 3 and f"{len(tasks)} tasks, {timed} workloads" in out and "all valid" in out and str(venv) in out

    out = run([str(bin_dir / "d2k-analyze"), str(sub), "--no-compiled", "--format", "md"], work, env).stdout
    assert "task: softmax · implementation score:" in out

    run([str(bin_dir / "d2k-analyze"), str(sub), "--no-compiled", "--format", "jsonl", "--out", "a/analyze.jsonl"], work, env)
    assert (work / "a" / "analyze.jsonl").stat().st_size > 0

    out = run([str(bin_dir / "d2k-profile"), str(sub), "--smoke", "--cpu", "--out", "prof"], work, env).stdout
    assert "softmax" in out and "1/1" in out
    assert '"status": "ok"' in (work / "prof" / "results.jsonl").read_text()

    run_dir = work / "runs" / "r-guided"
    shutil.copytree(ROOT / "examples" / "runs" / "demo_optimized", run_dir)
    (run_dir / "run.toml").write_text('model = "demo"\ncondition = "guided"\ndemonstration = true\n')
    shutil.copytree(sub, run_dir / "softmax")
    run([str(bin_dir / "d2k-report"), str(run_dir), "--out", "rep", "--bootstrap", "0"], work, env)
    assert (work / "rep" / "report.html").is_file()
