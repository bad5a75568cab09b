"""The benchmark's own programs, called through their command lines: d2k-profile for the test,
bench and profile tools and the final evaluation, d2k-analyze for the final evaluation.

They run as subprocesses (``python -m d2k_profile.cli`` / ``d2k_analyze.cli``) so that the agent
sees exactly what the final evaluation sees, and so that the profiler's internals (being split
into trusted and untrusted processes) can change without touching this package.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass
class ProfileRun:
    """One d2k-profile invocation: its exit code, console output and result records."""

    returncode: int
    output: str
    records: list[dict]
    timed_out: bool = False


def profile_argv(submission: Path, task_path: Path, out: Path, *, smoke: bool = False, workloads: list[str] | None = None,
                 cpu: bool = False, extra: list[str] | None = None) -> list[str]:
    argv = [sys.executable, "-m", "d2k_profile.cli", str(submission), "--task", str(task_path), "--out", str(out), "--jobs", "1"]
    if smoke:
        argv.append("--smoke")
    if workloads:
        argv += ["--workloads", *workloads]
    if cpu:
        argv.append("--cpu")
    return argv + list(extra or [])


def run_profile(argv: list[str], out: Path, env: dict[str, str], timeout_s: float, cwd: Path | None = None) -> ProfileRun:
    """Run d2k-profile (``out`` is emptied first) and read ``out/results.jsonl``."""
    out = Path(out)
    shutil.rmtree(out, ignore_errors=True)
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout_s, cwd=cwd, start_new_session=True)
    except subprocess.TimeoutExpired as exc:
        text = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return ProfileRun(-1, text, read_records(out / "results.jsonl"), timed_out=True)
    return ProfileRun(proc.returncode, proc.stdout + proc.stderr, read_records(out / "results.jsonl"))


def read_records(path: Path) -> list[dict]:
    out = []
    if not Path(path).is_file():
        return out
    for line in Path(path).read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def _ms(timing: dict | None) -> str:
    return f"{timing['median_ms']:.4f} ms" if timing and timing.get("median_ms") is not None else "-"


def format_records(records: list[dict], timing: bool) -> str:
    """The tool result the agent reads: one line per workload."""
    lines = []
    for r in records:
        line = f"{r['workload']}: {r['status']}"
        if r.get("reason"):
            line += f" ({r['reason'][:1500]})"
        errs = [f"{k}={r[k]:.3g}" for k in ("max_abs_err", "rel_l2_err") if isinstance(r.get(k), (int, float))]
        if errs:
            line += " [" + ", ".join(errs) + "]"
        if timing and r.get("timing"):
            line += f"; yours {_ms(r.get('timing'))}, reference {_ms(r.get('reference_timing'))}, expert {_ms(r.get('expert_timing'))}"
            if r.get("speedup_vs_reference"):
                line += f", speedup vs reference {r['speedup_vs_reference']:.3f}x"
            if r.get("roofline_fraction"):
                line += f", {100 * r['roofline_fraction']:.1f}% of roofline"
        lines.append(line)
    return "\n".join(lines)


def last_lines(text: str, n: int = 40) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


def analyze_available() -> str | None:
    """None when d2k-analyze can run here, else why not (e.g. tree-sitter missing on a GPU box)."""
    probe = subprocess.run([sys.executable, "-c", "import tree_sitter, tree_sitter_cuda, tree_sitter_python, libcst"],
                           capture_output=True, text=True)
    return None if probe.returncode == 0 else "d2k-analyze cannot run here: " + (probe.stderr.strip().splitlines() or ["?"])[-1]


# d2k_analyze.cli has no ``__main__`` block; this is what the d2k-analyze console script runs.
ANALYZE_MAIN = "import sys; from d2k_analyze.cli import main; sys.exit(main(sys.argv[1:]))"


def run_analyze(submission: Path, task_id: str, out_file: Path, timeout_s: float = 900, extra: list[str] | None = None,
                tasks_dir: Path | None = None) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-c", ANALYZE_MAIN, str(submission), "--task", task_id, "--format", "jsonl", "--out", str(out_file),
            "--judge", "none", *(extra or [])]
    if tasks_dir is not None:
        argv += ["--tasks-dir", str(tasks_dir)]
    env = {k: v for k, v in os.environ.items()}
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, env=env)


@dataclass(frozen=True)
class Ncu:
    path: str | None


def find_ncu() -> str | None:
    found = shutil.which("ncu")
    if found:
        return found
    for cand in sorted(Path("/usr/local").glob("cuda*/bin/ncu")) + sorted(Path("/opt/nvidia").glob("nsight-compute/*/ncu")):
        return str(cand)
    return None
