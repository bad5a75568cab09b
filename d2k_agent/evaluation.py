"""The final evaluation: d2k-profile and d2k-analyze on the exported submission, outside the
workspace, in fresh processes that generate their own inputs. The agent's own test output is
never used. Results go to ``<run>/.eval/<task>/`` and are assembled into the run's
``profile.jsonl`` / ``analyze.jsonl`` (:func:`collect`), each task's records exactly once.
"""

from __future__ import annotations

import json
import shutil
import threading

from d2k_spec.task import Task

from . import final, harness
from .gpu import GpuPool
from .layout import RunDir, atomic_write
from .sandbox import agent_env, prepare_home

PROFILE_TIMEOUT = 4 * 3600
_collect_lock = threading.Lock()


def profile(run: RunDir, task: Task, pool: GpuPool, budget_s: float | None = None) -> dict:
    ev = run.eval_dir(task.id)
    out = ev / "profile"
    home = ev / "home"
    prepare_home(home)
    with pool.acquire() as gpu:
        argv = harness.profile_argv(run.task(task.id).root, task.path, out, cpu=not pool.has_gpu,
                                    extra=["--gpus", "0", *(["--budget", str(budget_s)] if budget_s else [])])
        env = agent_env(home, {"CUDA_VISIBLE_DEVICES": gpu} if gpu is not None else None)
        res = harness.run_profile(argv, out, env, PROFILE_TIMEOUT)
    shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(out / "build", ignore_errors=True)  # the profiler's compile cache: megabytes, not a result
    (ev / "profile.log").write_text(res.output)
    mine = [r for r in res.records if r.get("role") == "submission"]
    if not mine:
        return {"status": "failed", "why": f"d2k-profile exit {res.returncode}: " + harness.last_lines(res.output, 5)}
    return {"status": "done", "gpu": pool.has_gpu, "records": len(mine), "ok": sum(r["status"] == "ok" for r in mine),
            "statuses": sorted({r["status"] for r in mine})}


def analyze(run: RunDir, task: Task) -> dict:
    why = harness.analyze_available()
    if why:
        return {"status": "unavailable", "why": why + "; run `d2k-agent evaluate RUN --only analyze` where it can"}
    ev = run.eval_dir(task.id)
    ev.mkdir(parents=True, exist_ok=True)
    out = ev / "analyze.jsonl"
    proc = harness.run_analyze(run.task(task.id).root, task.id, out, tasks_dir=task.path.parent)
    (ev / "analyze.log").write_text(proc.stdout + proc.stderr)
    if not out.is_file() or proc.returncode not in (0, 1):
        return {"status": "failed", "why": f"d2k-analyze exit {proc.returncode}: " + harness.last_lines(proc.stderr, 5)}
    score = None
    for line in out.read_text().splitlines():
        row = json.loads(line)
        if row.get("row_type") == "submission":
            score = row.get("score", row.get("overall"))
    return {"status": "done", "score": score}


def refused(why: str) -> dict:
    return {"profile": {"status": "refused", "why": why}, "analyze": {"status": "refused", "why": why}}


def collect(run: RunDir) -> dict[str, int]:
    """Rewrite profile.jsonl and analyze.jsonl from the per-task outputs of finished tasks (so a
    re-run task never appears twice)."""
    with _collect_lock:
        counts = {"profile": 0, "analyze": 0}
        prof, ana = [], []
        for td in sorted(p for p in run.root.iterdir() if p.is_dir() and not p.name.startswith(".")):
            task_dir = run.task(td.name)
            rec, why = final.validate(task_dir)
            if why:
                continue
            ev = run.eval_dir(td.name)
            p = ev / "profile" / "results.jsonl"
            if rec.get("evaluation", {}).get("profile", {}).get("status") == "done" and p.is_file():
                lines = [ln for ln in p.read_text().splitlines() if ln.strip()]
                prof += lines
                counts["profile"] += len(lines)
            a = ev / "analyze.jsonl"
            if rec.get("evaluation", {}).get("analyze", {}).get("status") == "done" and a.is_file():
                lines = [ln for ln in a.read_text().splitlines() if ln.strip()]
                ana += lines
                counts["analyze"] += len(lines)
        atomic_write(run.profile, "".join(ln + "\n" for ln in prof))
        atomic_write(run.analyze, "".join(ln + "\n" for ln in ana))
        return counts
